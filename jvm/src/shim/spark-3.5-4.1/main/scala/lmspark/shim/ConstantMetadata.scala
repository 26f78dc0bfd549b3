package lmspark.shim

import org.apache.spark.sql.execution.datasources.{FileFormat, PartitionedFile}
import org.apache.spark.sql.types.DataType

/** A file-constant `_metadata` column's value for one file, as Spark's file scan computes it
  * (`FileFormat.getFileConstantMetadataColumnValue`, which takes no type before Spark 4.2). */
object ConstantMetadata {
  /** The Catalyst value of column `name` (of type `dataType`) for `file`, by the format's `extractors`. */
  def value(name: String, file: PartitionedFile, extractors: Map[String, PartitionedFile => Any], dataType: DataType): Any =
    FileFormat.getFileConstantMetadataColumnValue(name, file, extractors).value
}
