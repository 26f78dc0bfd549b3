package lmspark.shim

import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.types.StructType

/**
 * Delta Lake scans, on a line built with Delta (project/delta-lines.txt): which scans of Delta's
 * `DeltaParquetFileFormat` lmspark reads as plain Parquet, and the declined stand-in for the others.
 *
 * Delta is the user's dependency, not ours: this object names Delta's format by class name only,
 * so that it loads no Delta class when Delta is absent. Its other methods, which do
 * ([[DeltaFormats]]), are only called for a format [[isDelta]] accepted.
 */
object DeltaTables {
  private val FormatClass = "org.apache.spark.sql.delta.DeltaParquetFileFormat"

  /** Whether this line's jar can read Delta tables at all. */
  val available: Boolean = true

  /** Whether `format` is Delta's own Parquet format (not a subclass, such as a declined one). */
  def isDelta(format: FileFormat): Boolean = format.getClass.getName == FormatClass

  /** Empty when lmspark can read a Delta scan of `format` as plain Parquet; otherwise every
    * Delta-specific reason it cannot. `requiredSchema` is the scan's. */
  def declineReasons(format: FileFormat, requiredSchema: StructType): Seq[String] =
    DeltaFormats.declineReasons(format, requiredSchema)

  /** How lmspark reads the data files of a Delta scan of `format` that it serves. */
  def files(format: FileFormat): TableFiles = DeltaFormats.files(format)

  /** `format` unchanged in behaviour, naming `reasons` in `EXPLAIN`. */
  def declined(format: FileFormat, reasons: Seq[String]): FileFormat with DeclinedFormat =
    DeltaFormats.declined(format, reasons)
}
