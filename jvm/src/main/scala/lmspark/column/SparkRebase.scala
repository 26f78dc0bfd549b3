package lmspark.column

import java.time.{ZoneId, ZoneOffset}

import org.apache.spark.sql.catalyst.util.{DateTimeUtils, RebaseDateTime}
import org.apache.spark.sql.execution.datasources.DataSourceUtils

/** The only place that touches Spark-internal datetime helpers, so a Spark upgrade that moves them
  * breaks one small file. Mirrors Spark 4.1's `ParquetVectorUpdaterFactory` (`rebaseDays`,
  * `rebaseMicros`, `rebaseInt96`) and `ParquetRowConverter.binaryToSQLTimestamp`. */
object SparkRebase {

  /** Days since epoch below which a DATE read in EXCEPTION mode fails. */
  val lastSwitchJulianDay: Int = RebaseDateTime.lastSwitchJulianDay

  /** Microseconds since epoch below which a TIMESTAMP read in EXCEPTION mode fails. */
  val lastSwitchJulianTs: Long = RebaseDateTime.lastSwitchJulianTs

  /** The exception Spark's Parquet readers throw for an ancient value in EXCEPTION mode. */
  def readException(): RuntimeException = DataSourceUtils.newRebaseExceptionInRead("Parquet")

  /** The same for INT96 timestamps. */
  def int96ReadException(): RuntimeException = DataSourceUtils.newRebaseExceptionInRead("Parquet INT96")

  /** Hybrid-calendar days -> proleptic Gregorian days (LEGACY mode). */
  def rebaseDays(julianDays: Int): Int = RebaseDateTime.rebaseJulianToGregorianDays(julianDays)

  /** Hybrid-calendar micros -> proleptic Gregorian micros in `timeZone` (LEGACY mode). */
  def rebaseMicros(timeZone: String, julianMicros: Long): Long =
    RebaseDateTime.rebaseJulianToGregorianMicros(timeZone, julianMicros)

  /** Days since epoch -> micros at midnight UTC (DATE read as TIMESTAMP_NTZ). */
  def daysToMicros(days: Int): Long = DateTimeUtils.daysToMicros(days, ZoneOffset.UTC)

  /** Millis -> micros, throwing ArithmeticException on overflow as Spark does. */
  def millisToMicros(millis: Long): Long = DateTimeUtils.millisToMicros(millis)

  /** An INT96 value (8 bytes little-endian nanos of day, then 4 bytes little-endian Julian day) as
    * micros since epoch. */
  def int96ToMicros(bytes: Array[Byte], offset: Int): Long = {
    var nanos = 0L
    var i = 7
    while (i >= 0) { nanos = (nanos << 8) | (bytes(offset + i) & 0xffL); i -= 1 }
    val day = (bytes(offset + 8) & 0xff) | ((bytes(offset + 9) & 0xff) << 8) |
      ((bytes(offset + 10) & 0xff) << 16) | ((bytes(offset + 11) & 0xff) << 24)
    DateTimeUtils.fromJulianDay(day, nanos)
  }

  /** Shifts micros from wall-clock time in `from` to UTC (Spark's int96TimestampConversion). */
  def convertTz(micros: Long, from: ZoneId): Long = DateTimeUtils.convertTz(micros, from, ZoneOffset.UTC)
}
