package lmspark.column

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil._

/** The matrix of [[ColumnReaderMatrixSuite]] (every type x encoding mode x nulls x page version x
  * codec x batch size) under the skip patterns alternate, random and whole pages (no skips is the
  * matrix suite's), for every column and row group of every matrix file, against parquet-java as
  * the oracle, checking the pages each run decompresses against [[SkipPattern.expectedPagesRead]]
  * (pages skipped whole are not decompressed); plus whole-chunk skips. */
class ColumnReaderSkipSuite extends AnyFunSuite with BeforeAndAfterAll {

  for (config <- TestFiles.configs) {
    test(s"skip patterns $config") {
      val f = TestFiles.matrixFile(config)
      val oracle = TestFiles.oracle(f)
      val layout = TestFiles.layout(f)
      val lm = new LmFile(f.path)
      try {
        for ((c, col) <- f.columns.zipWithIndex) {
          val spec = c.spec
          val v = new OnHeapColumnVector(SkipPattern.batchSizes.max, spec.sparkType)
          try {
            for (rg <- 0 until lm.rowGroups) {
              val expected = oracle(col)(rg).map(v => if (v == null) null else spec.toSpark(v))
              val chunkLayout = layout(rg)(col)
              for (pattern <- SkipPattern.withSkips; batch <- SkipPattern.batchSizes) {
                val ops = SkipPattern.ops(pattern, chunkLayout, batch, seed = col * 7919L + rg * 31 + batch)
                val reader = lm.reader(rg, col, spec.sparkType)
                try {
                  SkipPattern.run(s"${c.name} rg $rg $pattern batch $batch", reader, spec.sparkType, expected, ops,
                    chunkLayout, v)
                  assertThrows[ParquetDecodeException](reader.read(1, v))
                } finally reader.close()
                if (rg == 0) SkipPattern.casesRun(pattern).incrementAndGet()
              }
            }
          } finally v.close()
        }
      } finally lm.close()
    }
  }

  test("skipping a whole chunk decompresses no page, not even the dictionary; skipping into the last page reads " +
      "it, and the dictionary page only when it is dictionary-encoded") {
    var plainAfterDictionary = 0 // chunks whose last page is plain after a dictionary: no dictionary decoded
    for (config <- TestFiles.configs.filter(_.codec.name == "SNAPPY")) {
      val f = TestFiles.matrixFile(config)
      val layouts = TestFiles.layout(f)
      val pageCounts = layouts.map(_.map(_.pages))
      val lm = new LmFile(f.path)
      try {
        for ((c, col) <- f.columns.zipWithIndex; rg <- 0 until lm.rowGroups) {
          val rows = lm.rowCount(rg)
          val layout = layouts(rg)(col)
          val dictPages = if (lm.chunk(rg, col).hasDictionaryPage) 1 else 0
          assert(layout.hasDictionary == (dictPages == 1), s"${c.name} rg $rg: parquet-java and the footer agree")
          val all = lm.reader(rg, col, c.spec.sparkType)
          all.skip(rows)
          assert(all.pagesRead == 0, s"${c.name} rg $rg ($config): pages read by skipping everything")
          all.close()
          val last = lm.reader(rg, col, c.spec.sparkType)
          last.skip(rows - 1)
          val v = new OnHeapColumnVector(1, c.spec.sparkType)
          last.read(1, v)
          v.close()
          val lastPage = layout.pageRows.size - 1
          if (dictPages == 1 && !layout.dictionaryEncoded(lastPage)) plainAfterDictionary += 1
          assert(last.pagesRead == 1 + (if (dictPages == 1 && layout.dictionaryEncoded(lastPage)) 1 else 0),
            s"${c.name} rg $rg ($config): pages read for the last row")
          assert(pageCounts(rg)(col) > dictPages + 3, s"${c.name} rg $rg: expected several pages")
          last.close()
        }
      } finally lm.close()
    }
    assert(plainAfterDictionary > 0, "no chunk fell back to plain pages after its dictionary ones")
  }

  override def afterAll(): Unit = {
    val counts = SkipPattern.withSkips.map(p => s"$p ${SkipPattern.casesRun(p).get}")
    println(s"ColumnReaderSkipSuite: matrix cases (type x encoding mode x nulls x page version x codec x batch) " +
      s"per skip pattern: ${counts.mkString(", ")}; each over every row group")
    super.afterAll()
  }
}
