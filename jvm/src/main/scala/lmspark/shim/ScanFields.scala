package lmspark.shim

import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.collection.BitSet

/**
 * The fields of a `FileSourceScanExec` that every Spark line has, plus the line's own
 * ([[ScanExtras]], which hold no expressions), so that `LmParquetScanExec` can carry them as its
 * own constructor fields (Spark prepares subqueries and canonicalises plans only through a node's
 * own fields) and rebuild a `FileSourceScanExec` from them ([[SparkScanShim]]).
 */
final case class ScanFields(
    relation: HadoopFsRelation,
    output: Seq[Attribute],
    requiredSchema: StructType,
    partitionFilters: Seq[Expression],
    optionalBucketSet: Option[BitSet],
    optionalNumCoalescedBuckets: Option[Int],
    dataFilters: Seq[Expression],
    tableIdentifier: Option[TableIdentifier],
    disableBucketedScan: Boolean,
    extras: ScanExtras)
