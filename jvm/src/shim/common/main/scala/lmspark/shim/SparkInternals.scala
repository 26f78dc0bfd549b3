package lmspark.shim

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.RebaseDateTime.RebaseSpec
import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.execution.vectorized.{ColumnVectorUtils, ConstantColumnVector}
import org.apache.spark.sql.internal.LegacyBehaviorPolicy

import lmspark.column.RebaseCheck

/** Spark-internal helpers the reader needs, in one place; the same on every line. */
object SparkInternals {

  /**
   * How a file's dates and timestamps must be read, decided as Spark decides it from the footer's
   * writer keys and the session's (or the read option's) `datetimeRebaseModeInRead`.
   */
  def datetimeRebase(keyValueMetadata: java.util.Map[String, String], modeInRead: String): RebaseCheck =
    toCheck(DataSourceUtils.datetimeRebaseSpec(k => keyValueMetadata.get(k), modeInRead))

  /** The same for INT96 timestamps, under `int96RebaseModeInRead`. */
  def int96Rebase(keyValueMetadata: java.util.Map[String, String], modeInRead: String): RebaseCheck =
    toCheck(DataSourceUtils.int96RebaseSpec(k => keyValueMetadata.get(k), modeInRead))

  private def toCheck(spec: RebaseSpec): RebaseCheck = spec.mode match {
    case LegacyBehaviorPolicy.CORRECTED => RebaseCheck.None
    case LegacyBehaviorPolicy.EXCEPTION => RebaseCheck.FailOnAncient
    case _ => RebaseCheck.Legacy(spec.timeZone)
  }

  /** Whether Spark's `FileScanRDD`, with `ignoreCorruptFiles` on, skips the rest of a file whose read
    * threw `e` (as a corrupt file: not a missing one, nor an access or HDFS block error, which it
    * rethrows). */
  def skippedAsCorrupt(e: Throwable): Boolean = e match {
    case _: java.io.FileNotFoundException => false
    case _: org.apache.hadoop.security.AccessControlException | _: org.apache.hadoop.hdfs.BlockMissingException => false
    case _ => CorruptFiles.ignoredAsCorrupt(e)
  }

  /** Fills a partition column's constant vector from the file's partition values. */
  def populateConstant(vector: ConstantColumnVector, partitionValues: InternalRow, ordinal: Int): Unit =
    ColumnVectorUtils.populate(vector, partitionValues, ordinal)
}
