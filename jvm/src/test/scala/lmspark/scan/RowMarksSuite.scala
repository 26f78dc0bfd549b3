package lmspark.scan

import scala.util.Random

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.ByteType
import org.scalatest.funsuite.AnyFunSuite

import lmspark.shim.MarkedRows

/** [[RowMarks]] and its mark column reader against a row-by-row model: seeded files of marked rows
  * (single rows, runs, duplicates; deleted or kept), row groups at every offset, each minimum run
  * of dropped rows a selection leaves out, and the reader walked through random reads and skips. */
class RowMarksSuite extends AnyFunSuite {

  private val Cases = 3000

  private def cases(what: String)(body: Random => Unit): Unit = {
    val rnd = new Random(what.hashCode.toLong)
    for (i <- 0 until Cases) {
      val seed = rnd.nextLong()
      try body(new Random(seed))
      catch { case e: Throwable => fail(s"$what: case $i (seed $seed) failed: ${e.getMessage}", e) }
    }
    info(s"$what: $Cases cases")
  }

  /** A file of `rows` rows with marked rows: scattered ones and runs, sorted, some repeated. */
  private def marked(rnd: Random, rows: Int): Array[Long] = {
    val density = rnd.nextDouble()
    val out = scala.collection.mutable.ArrayBuffer.empty[Long]
    var r = 0
    while (r < rows) {
      if (rnd.nextDouble() < density * 0.3) {
        val run = 1 + rnd.nextInt(if (rnd.nextBoolean()) 3 else 40)
        (r until math.min(rows, r + run)).foreach(x => out += x.toLong)
        if (rnd.nextInt(10) == 0) out += math.min(rows - 1, r).toLong // a duplicate
        r += run
      }
      r += 1 + rnd.nextInt(5)
    }
    out.sorted.toArray
  }

  /** The model: whether each row of the file is dropped. */
  private def droppedOf(rows: Int, m: MarkedRows): Array[Boolean] = {
    val set = m.rows.toSet
    Array.tabulate(rows)(r => set.contains(r.toLong) != m.keepMarked)
  }

  test("keptWithin and droppedWithin match the row-by-row model") {
    cases("kept") { rnd =>
      val rows = 1 + rnd.nextInt(400)
      val m = MarkedRows(marked(rnd, rows), keepMarked = rnd.nextInt(4) == 0)
      val dropped = droppedOf(rows, m)
      val start = rnd.nextInt(rows)
      val count = 1 + rnd.nextInt(rows - start)
      val minDropped = Seq(1, 2, 3, 11, 50)(rnd.nextInt(5))
      val marks = new RowMarks(m)
      assert(marks.droppedWithin(start, count) == (start until start + count).count(dropped(_)))
      // The model's selection: every row but those in maximal dropped runs of at least minDropped rows.
      val expected = Array.fill(count)(true)
      var i = 0
      while (i < count) {
        if (dropped(start + i)) {
          var j = i
          while (j < count && dropped(start + j)) j += 1
          if (j - i >= minDropped) (i until j).foreach(expected(_) = false)
          i = j
        } else i += 1
      }
      marks.keptWithin(start, count, minDropped) match {
        case None => assert(expected.forall(identity), "None, but some run is left out")
        case Some(s) =>
          assert(s.rowCount == count)
          assert(s.toBooleans.toSeq == expected.toSeq)
          assert(!expected.forall(identity), "a selection of every row instead of None")
      }
    }
  }

  test("the mark column reader flags exactly the dropped rows through reads and skips") {
    cases("reader") { rnd =>
      val rows = 1 + rnd.nextInt(600)
      val m = MarkedRows(marked(rnd, rows), keepMarked = rnd.nextInt(4) == 0)
      val dropped = droppedOf(rows, m)
      val first = rnd.nextInt(rows)
      val reader = new RowMarks(m).reader(first)
      val v = new OnHeapColumnVector(rows, ByteType)
      var at = first
      while (at < rows) {
        val n = 1 + rnd.nextInt(math.min(rows - at, 64))
        if (rnd.nextInt(3) == 0) reader.skip(n)
        else {
          // A batch of one or two appended reads.
          v.reset()
          val a = if (n > 1 && rnd.nextBoolean()) rnd.nextInt(n) else n
          reader.read(a, v, 0)
          if (a < n) reader.read(n - a, v, a)
          (0 until n).foreach { k =>
            assert(v.getByte(k) == (if (dropped(at + k)) 1 else 0), s"row ${at + k}")
          }
        }
        at += n
      }
      v.close()
    }
  }
}
