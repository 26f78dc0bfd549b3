package lmspark.shim

import org.apache.spark.sql.connector.read.streaming.SparkDataStream
import org.apache.spark.sql.execution.FileSourceScanExec

/** The fields of Spark 4.0–4.2's `FileSourceScanExec` beyond [[ScanFields]]: its stream. */
final case class ScanExtras(@transient stream: Option[SparkDataStream])

/** Converts between `FileSourceScanExec` and [[ScanFields]] for Spark 4.0–4.2. */
object SparkScanShim {
  def fieldsOf(scan: FileSourceScanExec): ScanFields = ScanFields(
    scan.relation, scan.output, scan.requiredSchema, scan.partitionFilters,
    scan.optionalBucketSet, scan.optionalNumCoalescedBuckets, scan.dataFilters,
    scan.tableIdentifier, scan.disableBucketedScan, ScanExtras(scan.stream))

  def scanOf(f: ScanFields): FileSourceScanExec = FileSourceScanExec(
    f.relation, f.extras.stream, f.output, f.requiredSchema, f.partitionFilters, f.optionalBucketSet,
    f.optionalNumCoalescedBuckets, f.dataFilters, f.tableIdentifier, f.disableBucketedScan)
}
