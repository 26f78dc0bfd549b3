package lmspark.shim

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.schema.MessageType
import org.apache.spark.sql.execution.datasources.parquet.{ParquetColumn, ParquetToSparkSchemaConverter}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{DataType, StructType}

/** One node of Spark's `ParquetColumn` tree, as lmspark reads it: Spark's type, the leaf descriptor,
  * the node's maximum repetition and definition levels, whether it is required, its path in the
  * (clipped) file schema, and its children (a struct's fields, a list's element, a map's key and value). */
final case class ParquetNode(sparkType: DataType, descriptor: Option[ColumnDescriptor], repetitionLevel: Int,
    definitionLevel: Int, required: Boolean, path: Seq[String], children: Seq[ParquetNode])

/** Spark's own mapping of a file schema to requested nested columns (`ParquetReadSupport`'s
  * clipping and `ParquetToSparkSchemaConverter.convertParquetColumn`, which follow
  * `ParquetSchemaConverter`'s rules: legacy 2-level lists, repeated fields without LIST, element
  * names `array` / `bag` / `_tuple`, `MAP_KEY_VALUE`, field ids, case-insensitive matching). */
object ParquetColumns {

  /** The nodes of `requested`'s fields in `fileSchema`, clipped as Spark's vectorized reader clips
    * them (Spark's own errors, e.g. for ambiguous case-insensitive matches, are thrown). */
  def of(fileSchema: MessageType, requested: StructType, caseSensitive: Boolean, useFieldId: Boolean,
      nullStructIfFieldsMissing: Boolean): Seq[ParquetNode] = {
    val clipped = ParquetClip.clip(fileSchema, requested, caseSensitive, useFieldId, nullStructIfFieldsMissing)
    val root = new ParquetToSparkSchemaConverter(SQLConf.get).convertParquetColumn(clipped, Some(requested))
    root.children.map(node).toSeq
  }

  private def node(c: ParquetColumn): ParquetNode =
    ParquetNode(c.sparkType, c.descriptor, c.repetitionLevel, c.definitionLevel, c.required, c.path.toSeq,
      c.children.map(node).toSeq)
}
