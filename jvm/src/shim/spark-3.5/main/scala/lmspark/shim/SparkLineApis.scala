package lmspark.shim

import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

/** The Spark and parquet-java APIs whose shape differs between lines, as Spark 3.5 (parquet-java
  * 1.13) has them. */
object SparkLineApis {
  /** Byte-wise comparison of two strings: 3.5's `compareTo` is byte-wise. */
  def binaryCompare(a: UTF8String, b: UTF8String): Int = a.compareTo(b)

  /** Whether a string type compares by bytes: 3.5 has no collations, so always. */
  def ordersByBytes(st: StringType): Boolean = true

  /** parquet-java 1.13 does not expose `bloom_filter_length`: always unknown (-1). */
  def bloomFilterLength(chunk: ColumnChunkMetaData): Int = -1
}
