package lmspark.shim

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.execution.vectorized.{ColumnVectorUtils, ConstantColumnVector}
import org.apache.spark.sql.internal.LegacyBehaviorPolicy

/** Spark-internal helpers the reader needs, in one place. */
object SparkInternals {

  /** How a file's dates and timestamps must be read, decided as Spark decides it. */
  sealed trait DatetimeRebase
  object DatetimeRebase {
    /** Values are read as written. */
    case object Corrected extends DatetimeRebase
    /** Values before the Gregorian switch must fail the query (Spark's EXCEPTION mode). */
    case object FailOnAncient extends DatetimeRebase
    /** Values must be rebased from the hybrid Julian calendar; lmspark leaves that to Spark. */
    case object Legacy extends DatetimeRebase
  }

  /**
   * The datetime rebase mode for a file with the given key-value metadata, under the session's
   * (or the read option's) `datetimeRebaseModeInRead`.
   */
  def datetimeRebase(keyValueMetadata: java.util.Map[String, String], modeInRead: String): DatetimeRebase = {
    val spec = DataSourceUtils.datetimeRebaseSpec(k => keyValueMetadata.get(k), modeInRead)
    spec.mode match {
      case LegacyBehaviorPolicy.CORRECTED => DatetimeRebase.Corrected
      case LegacyBehaviorPolicy.EXCEPTION => DatetimeRebase.FailOnAncient
      case _ => DatetimeRebase.Legacy
    }
  }

  /** Fills a partition column's constant vector from the file's partition values. */
  def populateConstant(vector: ConstantColumnVector, partitionValues: InternalRow, ordinal: Int): Unit =
    ColumnVectorUtils.populate(vector, partitionValues, ordinal)
}
