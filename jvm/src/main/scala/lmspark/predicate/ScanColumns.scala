package lmspark.predicate

import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

/** A struct field reached from requested column `top` through structs only (`ordinals`, one per
  * level), named `name` (`s.a.b`): one value per row, null when any struct on the way is null. */
final case class StructFieldColumn(top: Int, ordinals: IndexedSeq[Int], name: String, dataType: DataType)

/** The column ids of one scan, fixed from its requested schema on the driver: ids `[0, n)` are
  * the n requested columns; the ids after them are the struct fields [[StructFieldColumn]]s of the
  * requested struct columns that are not structs themselves (leaves, lists and maps below structs
  * only), depth first. Predicates name columns by these ids, so a filter on `s.a` is a filter on one
  * id, pruned and evaluated as a flat column is; each file says where its ids are
  * (`lmspark.scan.FileReadPlan`). */
final class ScanColumns(schema: StructType) extends Serializable {

  /** The number of requested columns. */
  val requested: Int = schema.length

  /** The struct-field columns, in id order from `requested` on. */
  val structFields: IndexedSeq[StructFieldColumn] = schema.fields.indices.flatMap { i =>
    schema.fields(i).dataType match {
      case s: StructType => fieldsOf(i, s, Vector.empty, schema.fields(i).name)
      case _ => Nil
    }
  }

  private def fieldsOf(top: Int, s: StructType, at: Vector[Int], prefix: String): Seq[StructFieldColumn] =
    s.fields.indices.flatMap { j =>
      val f = s.fields(j)
      val name = s"$prefix.${f.name}"
      f.dataType match {
        case st: StructType => fieldsOf(top, st, at :+ j, name)
        case _: ArrayType | _: MapType => Nil
        case t => Seq(StructFieldColumn(top, at :+ j, name, t))
      }
    }

  private val byPath: Map[(Int, IndexedSeq[Int]), Int] =
    structFields.indices.map(k => (structFields(k).top, structFields(k).ordinals) -> (requested + k)).toMap

  /** All ids. */
  def count: Int = requested + structFields.length

  /** The id of the struct field at `ordinals` below requested column `top`, if it is a leaf. */
  def structFieldId(top: Int, ordinals: IndexedSeq[Int]): Option[Int] = byPath.get((top, ordinals))

  /** The struct field of id `id` (at least `requested`). */
  def structField(id: Int): StructFieldColumn = structFields(id - requested)

  /** The name of column `id`, as EXPLAIN and errors show it. */
  def name(id: Int): String = if (id < requested) schema.fields(id).name else structField(id).name

  /** The Spark type of column `id`. */
  def dataType(id: Int): DataType = if (id < requested) schema.fields(id).dataType else structField(id).dataType
}
