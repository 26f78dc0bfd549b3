package lmspark.column

import org.apache.spark.sql.catalyst.util.RebaseDateTime
import org.apache.spark.sql.execution.datasources.DataSourceUtils

/** The only place that touches Spark-internal datetime rebase helpers, so a Spark upgrade that
  * moves them breaks one small file. Mirrors Spark 4.1's `ParquetVectorUpdaterFactory`
  * (`rebaseDays` / `rebaseTimestamp` with failIfRebase = true). */
object SparkRebase {

  /** Days since epoch below which a DATE read in EXCEPTION mode fails. */
  val lastSwitchJulianDay: Int = RebaseDateTime.lastSwitchJulianDay

  /** Microseconds since epoch below which a TIMESTAMP read in EXCEPTION mode fails. */
  val lastSwitchJulianTs: Long = RebaseDateTime.lastSwitchJulianTs

  /** The exception Spark's Parquet readers throw for an ancient value in EXCEPTION mode. */
  def readException(): RuntimeException = DataSourceUtils.newRebaseExceptionInRead("Parquet")
}
