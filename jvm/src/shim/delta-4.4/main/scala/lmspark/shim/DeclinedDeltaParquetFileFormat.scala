package lmspark.shim

import org.apache.spark.sql.delta.DeltaParquetFileFormat

/** Delta 4.4's format of one scan, rebuilt with the same settings (so it reads exactly as Delta
  * does), that names why lmspark did not read the scan. */
private[shim] final class DeclinedDeltaParquetFileFormat(val reasons: Seq[String], f: DeltaParquetFileFormat)
  extends DeltaParquetFileFormat(f.protocol, f.metadata, f.nullableRowTrackingConstantFields,
    f.nullableRowTrackingGeneratedFields, f.optimizationsEnabled, f.tablePath, f.isCDCRead)
  with DeclinedFormat {
  require(reasons.nonEmpty, "a declined format needs a reason")
  override def toString: String = DeclinedFormat.describe(reasons)
}
