package lmspark.column

import scala.collection.concurrent.TrieMap

import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil._

/** Every supported type x {PLAIN, dictionary, dictionary falling back to PLAIN} x codec x
  * {required, optional with nulls, all nulls} x {data page v1, v2} x batch sizes {1, 7, 4096},
  * against parquet-java as the oracle, plus the page count touched by a full read. */
class ColumnReaderMatrixSuite extends AnyFunSuite {
  import ColumnReaderMatrixSuite._

  private val batchSizes = Seq(1, 7, 4096)

  for (config <- TestFiles.configs; spec <- TestTypes.all) {
    test(s"$config ${spec.name} as ${spec.sparkType}") {
      val f = TestFiles.matrixFile(config)
      val oracle = oracles.getOrElseUpdate(config, ParquetOracle.readAll(f.path))
      val pageCounts = pages.getOrElseUpdate(config, ParquetOracle.pageCounts(f.path))
      val lm = new LmFile(f.path)
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
            for (batch <- batchSizes) {
              val reader = lm.reader(rg, col, spec.sparkType)
              val actual = LmReading.readAll(reader, spec.sparkType, written.size, batch)
              assertSame(s"$name rg $rg batch $batch", actual, expected)
              assert(reader.pagesRead == pageCounts(rg)(col), s"$name rg $rg: pages read")
              assert(reader.bytesRead == lm.chunk(rg, col).getTotalSize)
              reader.close()
            }
          }
          // Required columns always reach the high-cardinality rows inside row group 0.
          if (config.mode == EncMode.Fallback && nulls == Nulls.Required &&
            spec.primitive != org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BOOLEAN) {
            val stats = lm.chunk(0, col).getEncodingStats
            assert(stats.hasDictionaryPages && stats.hasDictionaryEncodedPages && stats.hasNonDictionaryEncodedPages,
              s"$name: expected a chunk falling back from dictionary to plain, got $stats")
          }
        }
      } finally lm.close()
    }
  }
}

object ColumnReaderMatrixSuite {
  private val oracles = TrieMap.empty[FileConfig, IndexedSeq[IndexedSeq[IndexedSeq[Any]]]]
  private val pages = TrieMap.empty[FileConfig, IndexedSeq[IndexedSeq[Int]]]

  def assertSame(what: String, actual: IndexedSeq[Any], expected: IndexedSeq[Any]): Unit = {
    assert(actual.size == expected.size, s"$what: ${actual.size} values, expected ${expected.size}")
    val bad = actual.indices.find(i => !TestTypes.same(actual(i), expected(i)))
    bad.foreach { i =>
      throw new AssertionError(s"$what: row $i is ${TestTypes.show(actual(i))}, expected ${TestTypes.show(expected(i))}")
    }
  }
}
