package lmspark.scan

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.schema.{MessageType, Type}
import org.apache.spark.sql.types._

import lmspark.column.NestedShape
import lmspark.predicate.ScanColumns
import lmspark.shim.ParquetNode

/** Builds the [[NestedShape]] of one nested requested column in one file from Spark's own mapping
  * of the file schema ([[lmspark.shim.ParquetColumns]]), as Spark's vectorized reader reads it: a
  * node missing from the file reads as nulls (an error when it is required), a leaf the file has
  * becomes a plan column (`leafColumn` gives its id: the [[ScanColumns]] id of a struct field, or a
  * new one). Left(reason) when lmspark cannot read it, and the file goes to Spark's reader.
  *
  * @param leafColumn the plan column id for a leaf of the file (`descriptor`) read as `sparkType`,
  *        reached from the requested column through struct fields `ordinals` (None below a list, a
  *        map or a carrier), or Left(reason) */
private[scan] final class NestedReadPlan(
    fileSchema: MessageType,
    leafColumn: (ColumnDescriptor, DataType, Option[IndexedSeq[Int]]) => Either[String, Int]) {

  /** The shape of requested field `field` from its node `node`. */
  def shape(field: StructField, node: ParquetNode): Either[String, NestedShape] =
    build(node, field.dataType, field.name, 0, 0, Some(Vector.empty))

  private def build(node: ParquetNode, dt: DataType, name: String, slotRep: Int, slotDef: Int,
      ordinals: Option[IndexedSeq[Int]]): Either[String, NestedShape] = {
    if (!NestedReadPlan.hasPath(fileSchema, node.path)) {
      if (node.required) return Left(s"required field $name is missing in the file (Spark raises its own error)")
      return Right(NestedShape.Absent(dt, slotRep, slotDef))
    }
    dt match {
      case st: StructType =>
        if (node.children.size < st.size)
          return Left(s"field $name: Spark's clipped schema has ${node.children.size} fields, ${st.size} requested")
        val fields = st.fields.indices.map(j =>
          build(node.children(j), st.fields(j).dataType, s"$name.${st.fields(j).name}", slotRep, slotDef,
            ordinals.map(_ :+ j)))
        val carriers = node.children.drop(st.size).map(c =>
          build(c, c.sparkType, s"$name.${c.path.last}", slotRep, slotDef, None))
        for (f <- sequence(fields); c <- sequence(carriers))
          yield NestedShape.Struct(dt, f, c, node.definitionLevel, slotRep, slotDef)
      case at: ArrayType =>
        if (node.children.size != 1) return Left(s"field $name: a list with ${node.children.size} children")
        build(node.children.head, at.elementType, s"$name.element", node.repetitionLevel + 1,
          node.definitionLevel + 1, None)
          .map(e => NestedShape.Repeated(dt, IndexedSeq(e), node.definitionLevel, slotRep, slotDef))
      case mt: MapType =>
        if (node.children.size != 2) return Left(s"field $name: a map with ${node.children.size} children")
        for {
          k <- build(node.children(0), mt.keyType, s"$name.key", node.repetitionLevel + 1, node.definitionLevel + 1, None)
          v <- build(node.children(1), mt.valueType, s"$name.value", node.repetitionLevel + 1, node.definitionLevel + 1, None)
        } yield NestedShape.Repeated(dt, IndexedSeq(k, v), node.definitionLevel, slotRep, slotDef)
      case _ =>
        node.descriptor match {
          case None => Left(s"field $name is a group in the file, a ${dt.catalogString} in the read schema")
          case Some(clipped) =>
            val descriptor = fileSchema.getColumnDescription(clipped.getPath)
            if (descriptor != clipped) Left(s"field $name: its levels differ between the file and Spark's clipped schema")
            else leafColumn(descriptor, dt, ordinals).map(id =>
              NestedShape.Leaf(dt, id, node.definitionLevel, slotRep, slotDef, lmspark.column.NestedLeafReader.repDefs(fileSchema, descriptor)))
        }
    }
  }

  private def sequence[T](xs: Seq[Either[String, T]]): Either[String, IndexedSeq[T]] =
    xs.collectFirst { case Left(why) => why } match {
      case Some(why) => Left(why)
      case None => Right(xs.collect { case Right(x) => x }.toIndexedSeq)
    }
}

private[scan] object NestedReadPlan {
  /** Whether `schema` has a field (group or leaf) at `path`, as Spark's vectorized reader checks it. */
  def hasPath(schema: MessageType, path: Seq[String]): Boolean = {
    var t: Type = schema
    path.forall { name =>
      !t.isPrimitive && t.asGroupType.containsField(name) && { t = t.asGroupType.getType(name); true }
    }
  }

}
