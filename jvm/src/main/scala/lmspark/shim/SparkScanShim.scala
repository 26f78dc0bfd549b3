package lmspark.shim

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.connector.read.streaming.SparkDataStream
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.collection.BitSet

/**
 * The fields of Spark 4.1's `FileSourceScanExec`, held apart so that `LmParquetScanExec` can carry
 * them as its own constructor fields (Spark prepares subqueries and canonicalises plans only
 * through a node's own fields) and rebuild a `FileSourceScanExec` from them.
 */
final case class ScanFields(
    relation: HadoopFsRelation,
    stream: Option[SparkDataStream],
    output: Seq[Attribute],
    requiredSchema: StructType,
    partitionFilters: Seq[Expression],
    optionalBucketSet: Option[BitSet],
    optionalNumCoalescedBuckets: Option[Int],
    dataFilters: Seq[Expression],
    tableIdentifier: Option[TableIdentifier],
    disableBucketedScan: Boolean)

/** Converts between `FileSourceScanExec` and [[ScanFields]] for Spark 4.1. */
object SparkScanShim {
  def fieldsOf(scan: FileSourceScanExec): ScanFields = ScanFields(
    scan.relation, scan.stream, scan.output, scan.requiredSchema, scan.partitionFilters,
    scan.optionalBucketSet, scan.optionalNumCoalescedBuckets, scan.dataFilters,
    scan.tableIdentifier, scan.disableBucketedScan)

  def scanOf(f: ScanFields): FileSourceScanExec = FileSourceScanExec(
    f.relation, f.stream, f.output, f.requiredSchema, f.partitionFilters, f.optionalBucketSet,
    f.optionalNumCoalescedBuckets, f.dataFilters, f.tableIdentifier, f.disableBucketedScan)
}
