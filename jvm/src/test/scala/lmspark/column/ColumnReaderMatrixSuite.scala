package lmspark.column

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.Encoding
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil._

/** Every supported type x every encoding mode ({PLAIN, dictionary, dictionary falling back to
  * PLAIN, DELTA, BYTE_STREAM_SPLIT, dictionary falling back to DELTA / BYTE_STREAM_SPLIT}) x codec
  * x {required, optional with nulls, all nulls} x {data page v1, v2} x batch sizes
  * {1, 3, 7, 64, 4096}, read without skips against parquet-java as the oracle, checking the pages
  * read (all of them) and the bytes read; and that each file holds the encodings its mode promises.
  * [[ColumnReaderSkipSuite]] runs the same matrix with skip patterns. */
class ColumnReaderMatrixSuite extends AnyFunSuite with BeforeAndAfterAll {
  import ColumnReaderMatrixSuite._

  for (config <- TestFiles.configs; spec <- TestTypes.all) {
    test(s"$config ${spec.name} as ${spec.sparkType}") {
      val f = TestFiles.matrixFile(config)
      val oracle = TestFiles.oracle(f)
      val layout = TestFiles.layout(f)
      val lm = new LmFile(f.path)
      val v = new OnHeapColumnVector(SkipPattern.batchSizes.max, spec.sparkType)
      try {
        for (nulls <- Nulls.all) {
          val col = f.columns.indexWhere(c => c.spec == spec && c.nulls == nulls)
          val name = f.columns(col).name
          for (rg <- 0 until lm.rowGroups) {
            val written = f.columns(col).rowGroups(rg)
            val fromOracle = oracle(col)(rg)
            assertSame(s"$name rg $rg: oracle vs written", fromOracle, written)
            assert(ColumnReaderFactory.unsupportedReason(lm.descriptor(col), spec.sparkType, lm.chunk(rg, col)).isEmpty)
            val expected = fromOracle.map(v => if (v == null) null else spec.toSpark(v))
            val chunkLayout = layout(rg)(col)
            assert(chunkLayout.rows == written.size)
            for (batch <- SkipPattern.batchSizes) {
              val reader = lm.reader(rg, col, spec.sparkType)
              val ops = SkipPattern.ops(SkipPattern.NoSkip, chunkLayout, batch, 0L)
              SkipPattern.run(s"$name rg $rg batch $batch", reader, spec.sparkType, expected, ops, chunkLayout, v)
              assert(reader.pagesRead == chunkLayout.pagesDecompressed(chunkLayout.pageRows.indices),
                s"$name rg $rg: pages read")
              assert(reader.bytesRead == lm.chunk(rg, col).getTotalSize)
              reader.close()
              if (rg == 0) SkipPattern.casesRun(SkipPattern.NoSkip).incrementAndGet()
            }
          }
          if (nulls == Nulls.Required) checkEncodings(config, spec, name, lm.chunk(0, col))
        }
      } finally { v.close(); lm.close() }
    }
  }

  override def afterAll(): Unit = {
    println(s"ColumnReaderMatrixSuite: ${SkipPattern.casesRun(SkipPattern.NoSkip).get} matrix cases " +
      "(type x encoding mode x nulls x page version x codec x batch, no skips), each over every row group")
    super.afterAll()
  }
}

object ColumnReaderMatrixSuite {

  def assertSame(what: String, actual: IndexedSeq[Any], expected: IndexedSeq[Any]): Unit = {
    assert(actual.size == expected.size, s"$what: ${actual.size} values, expected ${expected.size}")
    val bad = actual.indices.find(i => !TestTypes.same(actual(i), expected(i)))
    bad.foreach { i =>
      throw new AssertionError(s"$what: row $i is ${TestTypes.show(actual(i))}, expected ${TestTypes.show(expected(i))}")
    }
  }

  private val dictionaryEncodings: Set[Encoding] = Set(Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY)

  /** The first row group's chunk of a required column holds the encodings its mode promises:
    * dictionary pages only (Dict), `EncMode.valueEncoding` pages only (non-dictionary modes), or
    * dictionary pages followed by `valueEncoding` pages (fallback modes; required columns always
    * reach the high-cardinality rows inside row group 0). Booleans are never dictionary encoded. */
  def checkEncodings(config: FileConfig, spec: TypeSpec, name: String,
      chunk: org.apache.parquet.hadoop.metadata.ColumnChunkMetaData): Unit = {
    val stats = chunk.getEncodingStats
    val data = stats.getDataEncodings.asScala.toSet
    val fresh = EncMode.valueEncoding(config.mode, spec.primitive, spec.annotation, config.v2)
    val expected: Set[Encoding] =
      if (!config.mode.usesDictionary || spec.primitive == PrimitiveTypeName.BOOLEAN) Set(fresh)
      else if (!config.mode.fallsBack) Set(if (config.v2) Encoding.RLE_DICTIONARY else Encoding.PLAIN_DICTIONARY)
      else Set(fresh, if (config.v2) Encoding.RLE_DICTIONARY else Encoding.PLAIN_DICTIONARY)
    assert(data == expected, s"$config $name: data page encodings $data, expected $expected")
    assert(stats.hasDictionaryPages == data.exists(dictionaryEncodings.contains), s"$config $name: $stats")
  }
}
