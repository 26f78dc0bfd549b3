package lmspark.testutil

import org.apache.parquet.bytes.ByteBufferAllocator
import org.apache.parquet.column.values.ValuesWriter
import org.apache.parquet.column.values.bytestreamsplit.ByteStreamSplitValuesWriter._
import org.apache.parquet.format.ColumnMetaData
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.schema.LogicalTypeAnnotation
import org.apache.spark.SparkThrowable
import org.apache.spark.sql.types.{DataType, StringType, VariantType}

/** What the tests use that only some lines' Spark or parquet-java have, as the 4.x lines have it.
  * `None` means the line lacks it; a test that needs it cancels (`assume`) on that line. */
object TestLineApis {
  /** Whether the line's Spark reads every (Parquet, Spark) type pair as lmspark's rules do. */
  val readRulesAreLmsparks: Boolean = true

  /** Whether the line has `spark.sql.extendedExplainProviders` (the EXPLAIN EXTENDED section). */
  val hasExplainProviders: Boolean = true

  /** Session confs the tests run with beyond the line's defaults: none on 4.x. */
  val sessionDefaults: Map[String, String] = Map.empty

  def condition(t: SparkThrowable): String = t.getCondition

  /** A string type under a non-binary collation. */
  val collatedString: Option[DataType] = Some(StringType("UTF8_LCASE"))
  val variantType: Option[DataType] = Some(VariantType)

  val float16: Option[LogicalTypeAnnotation] = Some(LogicalTypeAnnotation.float16Type())

  /** parquet-java's BYTE_STREAM_SPLIT writer for INT32 (4), INT64 (8) or FIXED_LEN_BYTE_ARRAY(k). */
  def byteStreamSplitWriter(kind: String, width: Int, slab: Int, page: Int, alloc: ByteBufferAllocator): Option[ValuesWriter] =
    kind match {
      case "INT32" => Some(new IntegerByteStreamSplitValuesWriter(slab, page, alloc))
      case "INT64" => Some(new LongByteStreamSplitValuesWriter(slab, page, alloc))
      case "FIXED_LEN_BYTE_ARRAY" => Some(new FixedLenByteArrayByteStreamSplitValuesWriter(width, slab, page, alloc))
      case _ => None
    }

  /** The footer's `bloom_filter_length` of a chunk, as (isSet, get, set), where the format has it. */
  def bloomFilterLengthField(md: ColumnMetaData): Option[(() => Boolean, () => Int, Int => Unit)] =
    Some((() => md.isSetBloom_filter_length, () => md.getBloom_filter_length, n => { md.setBloom_filter_length(n); () }))

  /** Sets the parsed chunk's bloom filter length; false where parquet-java has no such field. */
  def setBloomFilterLength(c: ColumnChunkMetaData, n: Int): Boolean = { c.setBloomFilterLength(n); true }
}
