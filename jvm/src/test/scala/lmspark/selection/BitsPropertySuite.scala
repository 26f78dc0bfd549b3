package lmspark.selection

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** The word-at-a-time helpers of [[Bits]] against a bit-by-bit walk of an `Array[Boolean]`:
  * seeded random masks (dense, sparse, word-aligned and unaligned ranges, ranges ending inside
  * and at the end of a word), 10,000 cases per helper. */
class BitsPropertySuite extends AnyFunSuite {

  private val Cases = 10000

  /** A random mask of `rows` bits with a random density, and its boolean model. */
  private def mask(rnd: Random, rows: Int): (Array[Long], Array[Boolean]) = {
    val density = Array(0.0, 0.01, 0.3, 0.9, 1.0)(rnd.nextInt(5))
    val bools = Array.fill(rows)(rnd.nextDouble() < density)
    val words = new Array[Long](Bits.wordsFor(rows.toLong))
    for (i <- bools.indices if bools(i)) words(i >>> 6) |= 1L << (i & 63)
    (words, bools)
  }

  /** A range `[from, until)` inside `[0, rows]`, often on or next to a word edge. */
  private def range(rnd: Random, rows: Int): (Int, Int) = {
    def point(): Int = if (rnd.nextBoolean()) rnd.nextInt(rows + 1)
      else math.max(0, math.min(rows, 64 * rnd.nextInt(rows / 64 + 2) + rnd.nextInt(3) - 1))
    val a = point(); val b = point()
    (math.min(a, b), math.max(a, b))
  }

  private def cases(op: String)(body: Random => Unit): Unit = {
    val rnd = new Random(op.hashCode.toLong)
    for (i <- 0 until Cases) {
      val seed = rnd.nextLong()
      try body(new Random(seed))
      catch { case e: Throwable => fail(s"$op: case $i (seed $seed) failed: ${e.getMessage}", e) }
    }
    info(s"$op: $Cases cases")
  }

  test("listSet lists the first max set bits of a range, less a base") {
    cases("listSet") { rnd =>
      val rows = 1 + rnd.nextInt(400)
      val (words, bools) = mask(rnd, rows)
      val (from, until) = range(rnd, rows)
      val max = rnd.nextInt(until - from + 3)
      val base = if (rnd.nextBoolean()) from.toLong else 0L
      val expected = (from until until).filter(bools(_)).take(max).map(i => (i - base).toInt)
      val out = new Array[Int](max + 1)
      val n = Bits.listSet(words, from, until, max, out, base)
      assert(out.take(n).toSeq == expected, s"rows $rows [$from, $until) max $max base $base")
      assert(out(n) == 0, "wrote past the count it returned")
    }
  }

  test("count, nextSet, nextClear, lastSet and endAfterKth") {
    cases("walks") { rnd =>
      val rows = 1 + rnd.nextInt(400)
      val (words, bools) = mask(rnd, rows)
      val (from, until) = range(rnd, rows)
      val set = (from until until).filter(bools(_))
      val what = s"rows $rows [$from, $until)"
      assert(Bits.count(words, from, until) == set.size, s"count $what")
      assert(Bits.nextSet(words, from, until) == set.headOption.getOrElse(until), s"nextSet $what")
      val clear = (from until until).find(!bools(_))
      assert(Bits.nextClear(words, from, until) == clear.getOrElse(until), s"nextClear $what")
      assert(Bits.lastSet(words, from, until) == set.lastOption.getOrElse(-1), s"lastSet $what")
      val k = 1 + rnd.nextInt(set.size + 2)
      val end = if (k <= set.size) set(k - 1) + 1 else until
      assert(Bits.endAfterKth(words, from, until, k) == end, s"endAfterKth $k $what")
    }
  }
}
