package lmspark.testutil

import org.apache.parquet.bytes.ByteBufferAllocator
import org.apache.parquet.column.values.ValuesWriter
import org.apache.parquet.format.ColumnMetaData
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.schema.LogicalTypeAnnotation
import org.apache.spark.SparkThrowable
import org.apache.spark.sql.types.DataType

/** What the tests use that only some lines' Spark or parquet-java have, as Spark 3.5 (parquet-java
  * 1.13) has it: no collations, no VARIANT, no FLOAT16 logical type, BYTE_STREAM_SPLIT
  * only for FLOAT and DOUBLE, no `bloom_filter_length`. `None` means absent; a test that needs it
  * cancels (`assume`) on this line. */
object TestLineApis {
  /** 3.5 reads some pairs differently (no widening); lmspark declines them (`LineReadRules`). */
  val readRulesAreLmsparks: Boolean = false

  /** Whether the line has `spark.sql.extendedExplainProviders` (the EXPLAIN EXTENDED section). */
  val hasExplainProviders: Boolean = false

  /** Session confs the tests run with so that they write what the 4.x lines write by default: 3.5
    * refuses to write ancient dates unless told how to rebase them (4.x writes them CORRECTED). */
  val sessionDefaults: Map[String, String] = Map(
    "spark.sql.parquet.datetimeRebaseModeInWrite" -> "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInWrite" -> "CORRECTED",
    // Spark 4.0 made CORRECTED the default for reads too (SPARK-46440): the same rules on every line.
    "spark.sql.parquet.datetimeRebaseModeInRead" -> "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInRead" -> "CORRECTED")

  def condition(t: SparkThrowable): String = t.getErrorClass

  val collatedString: Option[DataType] = None
  val variantType: Option[DataType] = None

  val float16: Option[LogicalTypeAnnotation] = None

  def byteStreamSplitWriter(kind: String, width: Int, slab: Int, page: Int, alloc: ByteBufferAllocator): Option[ValuesWriter] = None

  def bloomFilterLengthField(md: ColumnMetaData): Option[(() => Boolean, () => Int, Int => Unit)] = None

  def setBloomFilterLength(c: ColumnChunkMetaData, n: Int): Boolean = false
}
