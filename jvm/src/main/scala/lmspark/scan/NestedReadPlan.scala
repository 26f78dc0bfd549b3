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
  * Struct fields the plan never reads (`unread`, paths of field names with `element` inside a
  * list, from [[lmspark.plan.NestedFieldUse]]) read as nulls, and their leaves are not read; but a
  * struct keeps at least one field with a leaf in the file, whose levels give its nullness and
  * its lists' lengths.
  *
  * @param leafColumn the plan column id for a leaf of the file (`descriptor`) read as `sparkType`,
  *        reached from the requested column through struct fields `ordinals` (None below a list, a
  *        map or a carrier), or Left(reason) */
private[scan] final class NestedReadPlan(
    fileSchema: MessageType,
    unread: Set[Seq[String]],
    leafColumn: (ColumnDescriptor, DataType, Option[IndexedSeq[Int]]) => Either[String, Int]) {

  /** The shape of requested field `field` from its node `node`. */
  def shape(field: StructField, node: ParquetNode): Either[String, NestedShape] =
    build(node, field.dataType, Seq(field.name), 0, 0, Some(Vector.empty))

  /** Whether `node` is in the file with a leaf of the file below it (or is one). */
  private def hasLeaf(node: ParquetNode): Boolean =
    NestedReadPlan.hasPath(fileSchema, node.path) && (node.descriptor.isDefined || node.children.exists(hasLeaf))

  /** The fields of struct `st` (at `path`, from `node`) left unread: those in `unread`, less the
    * first of them with a leaf in the file when no other field has one. */
  private def unreadFields(st: StructType, path: Seq[String], node: ParquetNode): Set[Int] = {
    val skip = st.fields.indices.filter(j => unread.contains(path :+ st.fields(j).name)).toSet
    if (skip.isEmpty || st.fields.indices.exists(j => !skip(j) && hasLeaf(node.children(j)))) skip
    else skip.toSeq.sorted.find(j => hasLeaf(node.children(j))).fold(skip)(skip - _)
  }

  /** Whether `node`, where the list element struct `st` of one field is requested, is that field
    * itself: a leaf whose parent in the file is the list's repeated group (a legacy 2-level list
    * whose element group, clipped to one field, Spark's converter reads as that field). Spark's
    * vectorized reader then fails; its row-based reader, and lmspark, read the struct. */
  private def collapsedElement(node: ParquetNode, st: StructType, slotRep: Int): Boolean =
    st.size == 1 && slotRep > 0 && node.children.isEmpty && node.descriptor.isDefined && node.path.size >= 2 && {
      var t: Type = fileSchema
      node.path.init.forall { n => !t.isPrimitive && t.asGroupType.containsField(n) && { t = t.asGroupType.getType(n); true } } &&
        !t.isPrimitive && t.isRepetition(Type.Repetition.REPEATED)
    }

  private def build(node: ParquetNode, dt: DataType, path: Seq[String], slotRep: Int, slotDef: Int,
      ordinals: Option[IndexedSeq[Int]]): Either[String, NestedShape] = {
    val name = path.mkString(".")
    if (!NestedReadPlan.hasPath(fileSchema, node.path)) {
      if (node.required) return Left(s"required field $name is missing in the file (Spark raises its own error)")
      return Right(NestedShape.Absent(dt, slotRep, slotDef))
    }
    dt match {
      case st: StructType if collapsedElement(node, st, slotRep) =>
        // Spark's clipping left a one-field element group as a bare leaf (its converter then takes
        // the field for the element); the group is the element struct, defined with its slot.
        build(node, st.fields(0).dataType, path :+ st.fields(0).name, slotRep, slotDef, ordinals.map(_ :+ 0))
          .map(f => NestedShape.Struct(dt, IndexedSeq(f), IndexedSeq.empty, slotDef, slotRep, slotDef))
      case st: StructType =>
        if (node.children.size < st.size)
          return Left(s"field $name: Spark's clipped schema has ${node.children.size} fields, ${st.size} requested")
        val skip = unreadFields(st, path, node)
        val fields = st.fields.indices.map(j =>
          if (skip(j)) Right(NestedShape.Absent(st.fields(j).dataType, slotRep, slotDef))
          else build(node.children(j), st.fields(j).dataType, path :+ st.fields(j).name, slotRep, slotDef,
            ordinals.map(_ :+ j)))
        val carriers = node.children.drop(st.size).map(c =>
          build(c, c.sparkType, path :+ c.path.last, slotRep, slotDef, None))
        for (f <- sequence(fields); c <- sequence(carriers))
          yield NestedShape.Struct(dt, f, c, node.definitionLevel, slotRep, slotDef)
      case at: ArrayType =>
        if (node.children.size != 1) return Left(s"field $name: a list with ${node.children.size} children")
        build(node.children.head, at.elementType, path :+ "element", node.repetitionLevel + 1,
          node.definitionLevel + 1, None)
          .map(e => NestedShape.Repeated(dt, IndexedSeq(e), node.definitionLevel, slotRep, slotDef))
      case mt: MapType =>
        if (node.children.size != 2) return Left(s"field $name: a map with ${node.children.size} children")
        for {
          k <- build(node.children(0), mt.keyType, path :+ "key", node.repetitionLevel + 1, node.definitionLevel + 1, None)
          v <- build(node.children(1), mt.valueType, path :+ "value", node.repetitionLevel + 1, node.definitionLevel + 1, None)
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
