package lmspark.shim

import org.apache.spark.sql.execution.FileSourceScanExec

/** Spark 3.5's `FileSourceScanExec` has no fields beyond [[ScanFields]]. */
final case class ScanExtras()

/** Converts between `FileSourceScanExec` and [[ScanFields]] for Spark 3.5. */
object SparkScanShim {
  def fieldsOf(scan: FileSourceScanExec): ScanFields = ScanFields(
    scan.relation, scan.output, scan.requiredSchema, scan.partitionFilters,
    scan.optionalBucketSet, scan.optionalNumCoalescedBuckets, scan.dataFilters,
    scan.tableIdentifier, scan.disableBucketedScan, ScanExtras())

  def scanOf(f: ScanFields): FileSourceScanExec = FileSourceScanExec(
    f.relation, f.output, f.requiredSchema, f.partitionFilters, f.optionalBucketSet,
    f.optionalNumCoalescedBuckets, f.dataFilters, f.tableIdentifier, f.disableBucketedScan)
}
