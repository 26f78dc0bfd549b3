package lmspark.scan

import scala.util.Random

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.IntegerType
import org.scalatest.funsuite.AnyFunSuite

/** [[MaskFold]]'s three folds against a row-by-row model: seeded batches of every length up to a
  * few words at every bit offset, result bytes with stray high bits, dictionary ids with and
  * without NULLs, and masks whose earlier bits must survive. */
class MaskFoldSuite extends AnyFunSuite {

  private val Cases = 4000

  private def cases(op: String)(body: Random => Unit): Unit = {
    val rnd = new Random(op.hashCode.toLong)
    for (i <- 0 until Cases) {
      val seed = rnd.nextLong()
      try body(new Random(seed))
      catch { case e: Throwable => fail(s"$op: case $i (seed $seed) failed: ${e.getMessage}", e) }
    }
    info(s"$op: $Cases cases")
  }

  /** A mask of words with random bits below `at` (the folds must keep them) and none from `at` on. */
  private def startMask(rnd: Random, at: Int, n: Int): Array[Long] = {
    val m = new Array[Long]((at + n + 63) / 64 + 1)
    for (b <- 0 until at if rnd.nextBoolean()) m(b >>> 6) |= 1L << (b & 63)
    m
  }

  /** The model: `bit(i)` ORed into bit `at + i`, row by row. */
  private def model(start: Array[Long], at: Int, n: Int)(bit: Int => Boolean): Array[Long] = {
    val m = start.clone()
    for (i <- 0 until n if bit(i)) m((at + i) >>> 6) |= 1L << ((at + i) & 63)
    m
  }

  private def shape(rnd: Random): (Int, Int) = (rnd.nextInt(200), rnd.nextInt(300))

  test("bytes: bit 0 of each result byte") {
    cases("bytes") { rnd =>
      val (at, n) = shape(rnd)
      val density = rnd.nextDouble()
      // High bits set at random: only bit 0 counts (Kleene N = 4, F = 2).
      val pass = Array.fill(n + rnd.nextInt(9))(((if (rnd.nextDouble() < density) 1 else 0) | (rnd.nextInt(4) << 1)).toByte)
      val start = startMask(rnd, at, n)
      val got = start.clone()
      MaskFold.bytes(pass, n, got, at)
      assert(got.sameElements(model(start, at, n)(i => (pass(i) & 1) != 0)), s"at $at n $n")
    }
  }

  test("ids: the dictionary entry's result per id, the NULL result on NULL rows") {
    cases("ids") { rnd =>
      val (at, n) = shape(rnd)
      val entries = 1 + rnd.nextInt(50)
      val passing = Array.fill(entries)((if (rnd.nextBoolean()) 1 else 0).toByte)
      val withNulls = rnd.nextBoolean()
      val nullResult = rnd.nextBoolean()
      val v = new OnHeapColumnVector(math.max(n, 1), IntegerType)
      val ids = new OnHeapColumnVector(math.max(n, 1), IntegerType)
      val id = Array.fill(n)(rnd.nextInt(entries))
      val isNull = Array.fill(n)(withNulls && rnd.nextInt(4) == 0)
      for (i <- 0 until n) {
        if (isNull(i)) { v.putNull(i); ids.putInt(i, Int.MaxValue) } // a NULL row's id is never read
        else { v.putInt(i, 0); ids.putInt(i, id(i)) }
      }
      val start = startMask(rnd, at, n)
      val got = start.clone()
      MaskFold.ids(v, ids, passing, nullResult, n, got, at)
      assert(got.sameElements(model(start, at, n)(i => if (isNull(i)) nullResult else passing(id(i)) == 1)),
        s"at $at n $n nulls $withNulls")
      v.close(); ids.close()
    }
  }

  test("alive: a result counts only on a row still alive") {
    cases("alive") { rnd =>
      val (at, n) = shape(rnd)
      val rowCount = n + rnd.nextInt(100)
      val rows = (0 until rowCount).filter(_ => rnd.nextInt(3) > 0).take(n).toArray
      val m = rows.length
      val alive = new Array[Long](rowCount / 64 + 1)
      val aliveRow = Array.fill(rowCount)(rnd.nextBoolean())
      for (r <- 0 until rowCount if aliveRow(r)) alive(r >>> 6) |= 1L << (r & 63)
      val pass = Array.fill(m)(((rnd.nextInt(2)) | (rnd.nextInt(4) << 1)).toByte)
      val start = startMask(rnd, at, m)
      val got = start.clone()
      MaskFold.alive(pass, rows, alive, m, got, at)
      assert(got.sameElements(model(start, at, m)(i => (pass(i) & 1) != 0 && aliveRow(rows(i)))), s"at $at n $m")
    }
  }
}
