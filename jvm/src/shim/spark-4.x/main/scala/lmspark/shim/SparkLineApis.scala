package lmspark.shim

import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

/** The Spark and parquet-java APIs whose shape differs between lines, as the 4.x lines have them. */
object SparkLineApis {

  /** Byte-wise comparison of two strings (4.x's `compareTo` refuses to run in Spark's tests). */
  def binaryCompare(a: UTF8String, b: UTF8String): Int = a.binaryCompare(b)

  /** Whether a string type compares by bytes: only the default UTF8_BINARY collation does. */
  def ordersByBytes(st: StringType): Boolean = st.collationId == StringType.collationId

  /** The chunk's `bloom_filter_length`, or -1 when the footer does not give it. */
  def bloomFilterLength(chunk: ColumnChunkMetaData): Int = chunk.getBloomFilterLength
}
