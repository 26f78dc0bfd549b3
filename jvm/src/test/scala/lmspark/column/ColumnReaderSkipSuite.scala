package lmspark.column

import scala.util.Random

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil._

/** Seeded interleavings of `skip(k)` and `read(m)` (skips of 0 and 1, skips spanning whole pages,
  * skip to the end) against parquet-java as the oracle, for every column of every matrix file;
  * and whole-chunk skips that must not decompress data pages. */
class ColumnReaderSkipSuite extends AnyFunSuite {

  for (config <- TestFiles.configs) {
    test(s"skip/read interleavings $config") {
      val f = TestFiles.matrixFile(config)
      val oracle = ParquetOracle.readAll(f.path)
      val lm = new LmFile(f.path)
      try {
        for ((c, col) <- f.columns.zipWithIndex; rg <- 0 until lm.rowGroups; seed <- 0 until 2) {
          val spec = c.spec
          val expected = oracle(col)(rg).map(v => if (v == null) null else spec.toSpark(v))
          val rows = expected.size
          val r = new Random(seed * 7919L + col * 31 + rg)
          val reader = lm.reader(rg, col, spec.sparkType)
          val v = new OnHeapColumnVector(256, spec.sparkType)
          var pos = 0
          val log = new StringBuilder
          try {
            while (pos < rows) {
              val left = rows - pos
              r.nextInt(20) match {
                case 0 => reader.skip(0); log ++= "s0 "
                case 1 | 2 => reader.skip(1); pos += 1; log ++= "s1 "
                case 3 | 4 | 5 | 6 =>
                  val k = math.min(left, 50 + r.nextInt(400)); reader.skip(k); pos += k; log ++= s"s$k "
                case 7 => reader.skip(left); pos += left; log ++= s"s$left "
                case 8 | 9 =>
                  v.reset(); reader.read(1, v); log ++= "r1 "
                  check(spec, v, expected, pos, 1, log)
                  pos += 1
                case _ =>
                  val m = math.min(left, 1 + r.nextInt(256))
                  v.reset(); reader.read(m, v); log ++= s"r$m "
                  check(spec, v, expected, pos, m, log)
                  pos += m
              }
            }
            assertThrows[ParquetDecodeException](reader.read(1, v))
          } catch {
            case e: Exception if !e.isInstanceOf[org.scalatest.exceptions.TestFailedException] =>
              throw new AssertionError(s"${c.name} rg $rg after ops [$log]: $e", e)
          } finally { v.close(); reader.close() }
        }
      } finally lm.close()
    }
  }

  private def check(spec: TypeSpec, v: OnHeapColumnVector, expected: IndexedSeq[Any], pos: Int, n: Int,
      log: StringBuilder): Unit = {
    var i = 0
    while (i < n) {
      val a = TestTypes.fromVector(spec.sparkType, v, i)
      if (!TestTypes.same(a, expected(pos + i)))
        fail(s"${spec.name}: row ${pos + i} is ${TestTypes.show(a)}, expected ${TestTypes.show(expected(pos + i))} " +
          s"after ops [$log]")
      i += 1
    }
  }

  test("skipping a whole chunk decompresses no data page; skipping into the last page reads one") {
    for (config <- TestFiles.configs.filter(_.codec.name == "SNAPPY")) {
      val f = TestFiles.matrixFile(config)
      val pageCounts = ParquetOracle.pageCounts(f.path)
      val lm = new LmFile(f.path)
      try {
        for ((c, col) <- f.columns.zipWithIndex; rg <- 0 until lm.rowGroups) {
          val rows = lm.rowCount(rg)
          val dictPages = if (lm.chunk(rg, col).hasDictionaryPage) 1 else 0
          val all = lm.reader(rg, col, c.spec.sparkType)
          all.skip(rows)
          assert(all.pagesRead == dictPages, s"${c.name} rg $rg ($config): pages read by skipping everything")
          all.close()
          val last = lm.reader(rg, col, c.spec.sparkType)
          last.skip(rows - 1)
          val v = new OnHeapColumnVector(1, c.spec.sparkType)
          last.read(1, v)
          v.close()
          assert(last.pagesRead == dictPages + 1, s"${c.name} rg $rg ($config): pages read for the last row")
          assert(pageCounts(rg)(col) > dictPages + 10, s"${c.name} rg $rg: expected many pages")
          last.close()
        }
      } finally lm.close()
    }
  }
}
