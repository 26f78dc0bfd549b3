package lmspark.shim

import org.apache.spark.sql.connector.read.streaming.SparkDataStream
import org.apache.spark.sql.execution.FileSourceScanExec

/** The fields of Spark 4.3's `FileSourceScanExec` beyond [[ScanFields]]: its stream, and whether
  * the planner marked the scan to run as a single task. */
final case class ScanExtras(@transient stream: Option[SparkDataStream], markedForSingleTaskExecution: Boolean)

/** Converts between `FileSourceScanExec` and [[ScanFields]] for Spark 4.3. */
object SparkScanShim {
  def fieldsOf(scan: FileSourceScanExec): ScanFields = ScanFields(
    scan.relation, scan.output, scan.requiredSchema, scan.partitionFilters,
    scan.optionalBucketSet, scan.optionalNumCoalescedBuckets, scan.dataFilters,
    scan.tableIdentifier, scan.disableBucketedScan,
    ScanExtras(scan.stream, scan.markedForSingleTaskExecution))

  def scanOf(f: ScanFields): FileSourceScanExec = FileSourceScanExec(
    f.relation, f.extras.stream, f.output, f.requiredSchema, f.partitionFilters, f.optionalBucketSet,
    f.optionalNumCoalescedBuckets, f.dataFilters, f.tableIdentifier, f.disableBucketedScan,
    f.extras.markedForSingleTaskExecution)
}
