package lmspark.selection

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import SelectionModel._

/** [[SelectionCursor]] over batch sizes {1, 3, 7, 64, 4096}, both strategies, with and without
  * pruned pages: replaying its steps must reproduce the selection exactly, batches must be full
  * except the last, and no step other than a pruned skip may touch a row of a pruned page. */
class SelectionCursorSuite extends AnyFunSuite {

  val BatchSizes = Seq(1, 3, 7, 64, 4096)
  val SelectionsPerBatchSize = 2000 // x 5 batch sizes = 10,000 cases per strategy and pruning mode

  /** A selection and the pruned row ranges of pages it selects nothing in (some of them). */
  private def genCase(rnd: Random, withPruned: Boolean): (Array[Boolean], RowRanges) = {
    val b = bools(rnd)
    if (!withPruned || b.isEmpty) return (b, RowRanges.empty)
    val cuts = (0 +: Array.fill(1 + rnd.nextInt(10))(rnd.nextInt(b.length))).distinct.sorted
    val ends = cuts.drop(1) :+ b.length
    val ps = scala.collection.mutable.ArrayBuffer.empty[Long]
    val pe = scala.collection.mutable.ArrayBuffer.empty[Long]
    cuts.indices.foreach { i =>
      if (rnd.nextInt(3) == 0) { // prune this page: clear its rows in the selection
        (cuts(i) until ends(i)).foreach(r => b(r) = false)
        ps += cuts(i).toLong; pe += ends(i).toLong
      } else if (!(cuts(i) until ends(i)).exists(b(_)) && rnd.nextBoolean()) {
        ps += cuts(i).toLong; pe += ends(i).toLong // an empty page, pruned
      }
    }
    (b, RowRanges.of(ps.toArray, pe.toArray))
  }

  private def inPruned(pruned: RowRanges, from: Long, until: Long): Boolean =
    (0 until pruned.size).exists(i => pruned.start(i) < until && from < pruned.end(i))

  /** Replays every step of a cursor and checks it against the model. */
  private def replay(b: Array[Boolean], pruned: RowRanges, strategy: SelectionStrategy, batchSize: Int,
      backing: Backing): Unit = {
    val sel = build(b, backing)
    val c = new SelectionCursor(sel, strategy, batchSize, pruned)
    val got = new Array[Boolean](b.length)
    var pos = 0L
    var batches = 0
    var lastBatchRows = -1
    val prunedSeen = scala.collection.mutable.Set.empty[Long]
    while (c.nextBatch()) {
      assert(lastBatchRows == -1 || lastBatchRows == batchSize, s"batch ${batches - 1} has $lastBatchRows rows")
      var rows = 0
      var k = c.next()
      while (k != SelectionCursor.End) {
        val s = c.stepStart
        val n = c.stepRows
        assert(s == pos, s"step starts at $s, expected $pos")
        assert(n > 0, s"empty step at $s")
        k match {
          case SelectionCursor.Read =>
            assert(strategy == SelectionStrategy.Selectors, "Read under the mask strategy")
            assert(!inPruned(pruned, s, s + n), s"Read [$s, ${s + n}) touches pruned rows $pruned")
            (s until s + n).foreach(r => got(r.toInt) = true)
            assert(c.stepSelected == n)
          case SelectionCursor.Skip =>
            if (c.stepPruned) {
              val i = (0 until pruned.size).find(i => pruned.start(i) == s)
              assert(i.exists(i => pruned.end(i) == s + n), s"pruned skip [$s, ${s + n}) is not a pruned range of $pruned")
              prunedSeen += s
            } else assert(!inPruned(pruned, s, s + n), s"Skip [$s, ${s + n}) overlaps pruned rows $pruned")
            assert(c.stepSelected == 0)
          case SelectionCursor.Mask =>
            assert(strategy == SelectionStrategy.Mask, "Mask under the selectors strategy")
            assert(!inPruned(pruned, s, s + n), s"Mask [$s, ${s + n}) touches pruned rows $pruned")
            assert(n <= c.maxChunkRows, s"mask chunk of $n rows > ${c.maxChunkRows}")
            val w = c.maskWords
            var cnt = 0
            (0L until n).foreach { i =>
              val bit = ((w((i >>> 6).toInt) >>> (i & 63)) & 1L) != 0
              if (bit) { got((s + i).toInt) = true; cnt += 1 }
            }
            val nw = ((n + 63) / 64).toInt
            if ((n & 63) != 0) assert((w(nw - 1) >>> (n & 63)) == 0, "mask chunk has bits past its rows")
            assert(got(s.toInt) && got((s + n - 1).toInt), s"mask chunk [$s, ${s + n}) does not start and end on a selected row")
            assert(cnt == c.stepSelected)
        }
        rows += c.stepSelected
        pos += n
        k = c.next()
      }
      assert(rows > 0 && rows <= batchSize, s"batch of $rows rows (batch size $batchSize)")
      lastBatchRows = rows
      batches += 1
    }
    assert(!c.nextBatch())
    val end = selectedEnd(b)
    assert(pos >= end, s"cursor stopped at $pos before the last selected row $end")
    if (!java.util.Arrays.equals(got, b))
      fail(s"replay differs:\n  expected ${show(b)}\n  got      ${show(got)}")
    // every pruned range before the last selected row was yielded as one pruned skip
    (0 until pruned.size).filter(i => pruned.start(i) < end).foreach { i =>
      assert(prunedSeen.contains(pruned.start(i)), s"pruned range $i of $pruned was not yielded as a pruned skip")
    }
    assert(batches == ((selectedCount(b) + batchSize - 1) / batchSize))
  }

  for (strategy <- Seq(SelectionStrategy.Selectors, SelectionStrategy.Mask); withPruned <- Seq(false, true)) {
    val name = s"$strategy cursor, ${if (withPruned) "with" else "without"} pruned pages"
    test(name) {
      val rnd = new Random(name.hashCode.toLong)
      var n = 0
      for (bs <- BatchSizes; _ <- 0 until SelectionsPerBatchSize) {
        val caseSeed = rnd.nextLong()
        val r = new Random(caseSeed)
        val (b, pruned) = genCase(r, withPruned)
        val backing = if (r.nextBoolean()) Backing.Runs else Backing.Mask // the cursor converts
        try replay(b, pruned, strategy, bs, backing)
        catch { case e: Throwable => fail(s"$name: batch size $bs, seed $caseSeed: ${e.getMessage}", e) }
        n += 1
      }
      info(s"$name: $n cases (batch sizes ${BatchSizes.mkString(", ")})")
    }
  }

  test("boundary grid: selections of grid lengths split by pruned pages at grid offsets") {
    var n = 0
    for (len <- Grid if len > 0; cut <- Grid if cut < len; bs <- BatchSizes;
         strategy <- Seq(SelectionStrategy.Selectors, SelectionStrategy.Mask)) {
      // rows [cut, min(len, cut + 64)) pruned; every third row selected elsewhere
      val pe = math.min(len, cut + 64)
      val b = Array.tabulate(len)(i => (i < cut || i >= pe) && i % 3 != 1)
      replay(b, RowRanges.single(cut.toLong, pe.toLong), strategy, bs, Backing.Mask)
      replay(Array.fill(len)(true), RowRanges.empty, strategy, bs, Backing.Runs)
      n += 2
    }
    info(s"boundary grid: $n cases")
  }

  test("pipeline shape: scanRanges' pages -> pruned rows -> cursor, never touching a pruned page") {
    val rnd = new Random(7)
    var n = 0
    while (n < 2000) {
      val b = bools(rnd)
      if (b.nonEmpty) {
        val cuts = (0 +: Array.fill(rnd.nextInt(12))(rnd.nextInt(b.length))).distinct.sorted
        val sizes = Array.fill(cuts.length)(1 + rnd.nextInt(1000))
        val offsets = sizes.scanLeft(4L)(_ + _).dropRight(1)
        val pages = new PageLocations(b.length.toLong, cuts.map(_.toLong), offsets, sizes)
        val sel = build(b, if (rnd.nextBoolean()) Backing.Runs else Backing.Mask)
        val kept = ScanRanges.selectedPages(sel, pages)
        val pruned = pages.prunedRows(kept)
        assert(pruned.rows + kept.map(k => pages.endRow(k) - pages.firstRow(k)).sum == b.length)
        val strategy = SelectionPolicy.Auto(11).resolve(sel)
        replay(b, pruned, strategy, BatchSizes(rnd.nextInt(BatchSizes.length)), sel.backing)
        n += 1
      }
    }
    info(s"pipeline shape: $n cases")
  }

  test("a selection that selects rows of a pruned page is rejected") {
    val e = intercept[IllegalArgumentException](
      new SelectionCursor(RowSelection.all(100), SelectionStrategy.Mask, 10, RowRanges.single(10, 20)))
    assert(e.getMessage.contains("selects 10 rows of pruned rows [10, 20)"))
  }
}
