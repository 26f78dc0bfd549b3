package lmspark.predicate

import scala.util.Random

import org.scalatest.Assertions

/** Seeded property cases: each case gets its own seed, printed with the failure. */
trait PropertyCases { self: Assertions =>

  /** Runs `body` for `n` cases seeded from `name`, naming the seed of a failing case. */
  protected def cases(name: String, n: Int)(body: Random => Unit): Unit = {
    val rnd = new Random(name.hashCode.toLong)
    var i = 0
    while (i < n) {
      val seed = rnd.nextLong()
      try body(new Random(seed))
      catch { case e: Throwable => fail(s"$name: case $i (seed $seed) failed: ${e.getMessage}", e) }
      i += 1
    }
  }
}
