package lmspark.shim

import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.types.StructType

/** Delta Lake scans on a line with no Delta release to build against (project/delta-lines.txt):
  * none is recognised, so Delta's scans stay Delta's. */
object DeltaTables {
  val available: Boolean = false
  def isDelta(format: FileFormat): Boolean = false
  def declineReasons(format: FileFormat, requiredSchema: StructType): Seq[String] =
    throw new UnsupportedOperationException("no Delta support on this line")
  def files(format: FileFormat): TableFiles =
    throw new UnsupportedOperationException("no Delta support on this line")
  def declined(format: FileFormat, reasons: Seq[String]): FileFormat with DeclinedFormat =
    throw new UnsupportedOperationException("no Delta support on this line")
}
