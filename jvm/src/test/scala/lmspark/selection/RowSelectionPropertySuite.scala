package lmspark.selection

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import SelectionModel._

/** Every operation of [[RowSelection]], on both backings and across them, against the
  * `Array[Boolean]` model of [[SelectionModel]]: seeded random cases (at least 10,000 per
  * operation) plus the boundary grid of lengths and offsets. */
class RowSelectionPropertySuite extends AnyFunSuite {

  val Cases = 10000

  /** Runs `body` for `n` seeded cases, naming the seed and case of a failure. */
  private def cases(op: String, n: Int = Cases)(body: Random => Unit): Unit = {
    val seed = op.hashCode.toLong
    val rnd = new Random(seed)
    var i = 0
    while (i < n) {
      val caseSeed = rnd.nextLong()
      try body(new Random(caseSeed))
      catch { case e: Throwable => fail(s"$op: case $i (seed $caseSeed) failed: ${e.getMessage}", e) }
      i += 1
    }
    info(s"$op: $n cases")
  }

  private def check(s: RowSelection, expected: Array[Boolean], what: => String): Unit = {
    assert(s.rowCount == expected.length, s"$what: rowCount")
    val got = s.toBooleans
    if (!java.util.Arrays.equals(got, expected))
      fail(s"$what ($s):\n  expected ${show(expected)}\n  got      ${show(got)}")
    assert(s.selectedCount == selectedCount(expected), s"$what: selectedCount")
    assert(s.runCount == runCount(expected), s"$what: runCount")
    assert(s.selectedEnd == selectedEnd(expected), s"$what: selectedEnd")
  }

  test("constructors: fromBooleans / fromSelectors / fromRuns / fromMask / all / none") {
    cases("construct") { rnd =>
      val b = bools(rnd)
      Backings.foreach(k => check(build(b, k), b, s"build $k"))
      val (flags, lens) = runsOf(b)
      if (lens.nonEmpty) check(RowSelection.fromRuns(flags(0), lens), b, "fromRuns")
      val m = RowSelection.fromBooleans(b)
      check(RowSelection.fromMask(m.toWords, b.length.toLong), b, "fromMask")
      // selectors with zero lengths and repeated flags are normalised
      val f2 = flags.flatMap(f => Array(f, f, !f)); val l2 = lens.flatMap(l => Array(l / 2, l - l / 2, 0L))
      check(RowSelection.fromSelectors(f2, l2), b, "fromSelectors (unnormalised)")
      // offset form
      val off = rnd.nextInt(b.length + 1)
      check(RowSelection.fromBooleans(b, off, b.length - off), b.drop(off), "fromBooleans(offset)")
    }
    Grid.foreach { n =>
      check(RowSelection.all(n.toLong), Array.fill(n)(true), s"all($n)")
      check(RowSelection.none(n.toLong), Array.fill(n)(false), s"none($n)")
    }
  }

  test("fromRowRanges") {
    cases("fromRowRanges") { rnd =>
      val n = length(rnd)
      val k = rnd.nextInt(6)
      val starts = Array.fill(k)(if (n == 0) 0L else rnd.nextInt(n + 1).toLong)
      val ends = starts.map(s => math.min(n.toLong, s + (if (rnd.nextBoolean()) Grid(rnd.nextInt(Grid.length)) else rnd.nextInt(40))))
      val expected = new Array[Boolean](n)
      starts.indices.foreach(i => (starts(i) until ends(i)).foreach(r => expected(r.toInt) = true))
      val ranges = RowRanges.of(starts, ends)
      assert(ranges.rows == selectedCount(expected))
      check(RowSelection.fromRowRanges(n.toLong, ranges), expected, s"fromRowRanges $ranges")
    }
  }

  test("counts and point queries: rowCount, selectedCount, isSelected, anySelected, countSelected") {
    cases("counts") { rnd =>
      val b = bools(rnd)
      Backings.foreach { k =>
        val s = build(b, k)
        assert(s.rowCount == b.length && s.selectedCount == selectedCount(b) && s.runCount == runCount(b))
        if (b.nonEmpty) {
          val r = rnd.nextInt(b.length)
          assert(s.isSelected(r.toLong) == b(r), s"$k isSelected($r)")
        }
        val from = rnd.nextInt(b.length + 2) - 1
        val until = from + (if (rnd.nextBoolean()) Grid(rnd.nextInt(Grid.length)) else rnd.nextInt(80))
        val inRange = (math.max(from, 0) until math.min(until, b.length)).count(b(_))
        assert(s.countSelected(from.toLong, until.toLong) == inRange, s"$k countSelected($from, $until)")
        assert(s.anySelected(from.toLong, until.toLong) == (inRange > 0), s"$k anySelected($from, $until)")
      }
    }
  }

  test("conversion between the backings") {
    cases("convert") { rnd =>
      val b = bools(rnd)
      Backings.foreach { k =>
        val s = build(b, k)
        check(s.toRuns, b, s"$k.toRuns"); assert(s.toRuns.backing == Backing.Runs)
        check(s.toMask, b, s"$k.toMask"); assert(s.toMask.backing == Backing.Mask)
        check(s.toMask.toRuns.toMask, b, s"$k round trip")
        assert(s == build(b, if (k == Backing.Runs) Backing.Mask else Backing.Runs))
        assert(s.hashCode == s.toRuns.hashCode && s.hashCode == s.toMask.hashCode)
      }
    }
  }

  test("andThen") {
    cases("andThen") { rnd =>
      val a = bools(rnd)
      val b = bools(rnd, selectedCount(a).toInt)
      val expected = andThen(a, b)
      for (ka <- Backings; kb <- Backings) {
        val r = build(a, ka).andThen(build(b, kb))
        assert(r.backing == ka)
        check(r, expected, s"$ka andThen $kb")
      }
    }
    val e = intercept[IllegalArgumentException](RowSelection.all(10).andThen(RowSelection.all(9)))
    assert(e.getMessage.contains("over the 10 selected rows"))
  }

  test("intersection and union (equal and different lengths)") {
    cases("intersection/union") { rnd =>
      val a = bools(rnd)
      val b = if (rnd.nextBoolean()) bools(rnd, a.length) else bools(rnd)
      for (ka <- Backings; kb <- Backings) {
        check(build(a, ka).intersection(build(b, kb)), zip(a, b, _ && _), s"$ka intersection $kb")
        check(build(a, ka).union(build(b, kb)), zip(a, b, _ || _), s"$ka union $kb")
      }
    }
  }

  test("splitOff") {
    cases("splitOff") { rnd =>
      val b = bools(rnd)
      val n = rnd.nextInt(4) match {
        case 0 => Grid(rnd.nextInt(Grid.length))
        case 1 => b.length + rnd.nextInt(3) - 1
        case _ => rnd.nextInt(b.length + 2) - 1
      }
      val m = math.min(math.max(n, 0), b.length)
      Backings.foreach { k =>
        val (first, rest) = build(b, k).splitOff(n.toLong)
        assert(first.backing == k && rest.backing == k)
        check(first, b.take(m), s"$k splitOff($n).first")
        check(rest, b.drop(m), s"$k splitOff($n).rest")
      }
    }
  }

  test("trim") {
    cases("trim") { rnd =>
      val b = bools(rnd)
      Backings.foreach(k => check(build(b, k).trim, b.take(selectedEnd(b)), s"$k trim"))
    }
  }

  test("scanRanges: pages with a selected row, coalesced with a max gap") {
    cases("scanRanges") { rnd =>
      val b = bools(rnd)
      val n = math.max(b.length, 1)
      // page starts: 0 plus random cut points
      val cuts = (0 +: Array.fill(rnd.nextInt(8))(rnd.nextInt(n))).distinct.sorted
      val offsets = new Array[Long](cuts.length)
      val sizes = Array.fill(cuts.length)(1 + rnd.nextInt(100))
      var o = rnd.nextInt(50).toLong
      cuts.indices.foreach { i => offsets(i) = o; o += sizes(i) + (if (rnd.nextBoolean()) 0 else rnd.nextInt(64)) }
      val pages = new PageLocations(n.toLong, cuts.map(_.toLong), offsets, sizes)
      val maxGap = Seq(0L, 1L, 16L, 63L, 1L << 20)(rnd.nextInt(5))
      // naive: page i is needed iff any selected row in it; merge neighbours at most maxGap apart
      val needed = cuts.indices.filter { i =>
        val e = if (i + 1 < cuts.length) cuts(i + 1) else n
        (cuts(i) until math.min(e, b.length)).exists(b(_))
      }
      val merged = scala.collection.mutable.ArrayBuffer.empty[(Long, Long)]
      needed.foreach { i =>
        val (s, e) = (offsets(i), offsets(i) + sizes(i))
        if (merged.nonEmpty && s - merged.last._2 <= maxGap) merged(merged.length - 1) = (merged.last._1, e)
        else merged += ((s, e))
      }
      Backings.foreach { k =>
        val s = build(b, k)
        assert(ScanRanges.selectedPages(s, pages).toSeq == needed, s"$k selectedPages")
        val r = s.scanRanges(pages, maxGap)
        assert((0 until r.size).map(i => (r.start(i), r.end(i))) == merged.toSeq, s"$k scanRanges $r, maxGap $maxGap")
      }
    }
  }

  test("invariants are checked with messages") {
    val zero = intercept[IllegalArgumentException](RowSelection.fromRuns(selectedFirst = true, Array(3L, 0L, 2L)))
    assert(zero.getMessage.contains("runs must not be empty"))
    val tail = intercept[IllegalArgumentException](RowSelection.fromMask(Array(1L << 10), 10))
    assert(tail.getMessage.contains("unused tail"))
    val words = intercept[IllegalArgumentException](new MaskSelection(new Array[Long](2), 64))
    assert(words.getMessage.contains("needs 1 words"))
    assert(RowRanges.of(Array(5L, 0L, 3L, 9L), Array(7L, 3L, 4L, 9L)).toString == "RowRanges([0, 4), [5, 7))")
    val pages = intercept[IllegalArgumentException](new PageLocations(10, Array(0L, 5L), Array(0L, 5L), Array(10, 5)))
    assert(pages.getMessage.contains("overlaps"))
    val b = new RunsBuilder
    b.add(selected = true, 2).add(selected = true, 3).add(selected = false, 0).add(selected = false, 4)
    assert(b.result().runs == 2)
  }

  test("selections know nothing of decoders, readers, IO, plans or Spark") {
    val dir = java.nio.file.Paths.get(sys.props.getOrElse("user.dir", "."), "jvm/src/main/scala/lmspark/selection")
    val files = dir.toFile.listFiles().filter(_.getName.endsWith(".scala"))
    assert(files.length >= 9, dir.toString)
    files.foreach { f =>
      val src = new String(java.nio.file.Files.readAllBytes(f.toPath), "UTF-8")
      val bad = "(?m)^import .*(lmspark\\.(decode|column|io|scan|plan|meta)|org\\.apache\\.(spark|parquet|hadoop)).*$".r
      assert(bad.findFirstIn(src).isEmpty, s"${f.getName} imports ${bad.findFirstIn(src).getOrElse("")}")
    }
  }

  test("policy resolves once into a strategy") {
    val short = RowSelection.fromBooleans(Array.tabulate(1000)(_ % 2 == 0)) // mean run length 1
    val long = RowSelection.fromRowRanges(1000, RowRanges.single(100, 900)) // mean run length 333
    val auto = SelectionPolicy("AUTO", 32)
    assert(auto.resolve(short) == SelectionStrategy.Mask)
    assert(auto.resolve(long) == SelectionStrategy.Selectors)
    assert(auto.resolve(RowSelection.none(0)) == SelectionStrategy.Selectors)
    assert(SelectionPolicy("selectors", 32).resolve(short) == SelectionStrategy.Selectors)
    assert(SelectionPolicy("mask", 32).resolve(long) == SelectionStrategy.Mask)
    assert(SelectionPolicy("auto", 0).resolve(short) == SelectionStrategy.Selectors)
    val e = intercept[IllegalArgumentException](SelectionPolicy("bitmap", 32))
    assert(e.getMessage.contains("auto, selectors, mask"))
    assert(short.withStrategy(SelectionStrategy.Selectors).backing == Backing.Runs)
    // the config entries feed SelectionPolicy.apply
    assert(lmspark.LmConf.SELECTION_POLICY.parse("MASK") == "mask")
    assert(intercept[IllegalArgumentException](lmspark.LmConf.SELECTION_POLICY.parse("bits")).getMessage
      .contains("expected one of auto, selectors, mask"))
    assert(SelectionPolicy(lmspark.LmConf.SELECTION_POLICY.default, lmspark.LmConf.SELECTION_THRESHOLD.default) ==
      SelectionPolicy.Auto(lmspark.LmConf.SELECTION_THRESHOLD.default))
  }
}
