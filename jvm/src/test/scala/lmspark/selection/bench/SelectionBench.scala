package lmspark.selection.bench

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}

import scala.util.Random

import org.apache.parquet.bytes.HeapByteBufferAllocator
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridEncoder
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.LongType

import lmspark.column.VectorWriter
import lmspark.decode.{DictionaryIdsDecoder, PlainFixedWidthDecoder, ValuesDecoder}
import lmspark.selection._
import lmspark.testutil.Dictionaries

/** Where run-length selectors stop paying and masks start: the data behind the default of
  * `spark.lmspark.selection.threshold`. Run with `make bench-selection`; writes `results.csv`,
  * `results.md` (and `chart.png` via `plot.py`) under `benchmarks/selection/`.
  *
  * Data design:
  *  - Two pages of `rows` INT64 values (default 2^20), seeded: `int64_plain` (PLAIN, random longs)
  *    and `int64_dict` (RLE_DICTIONARY: 1,024 random longs, ids written by parquet-java's
  *    RLE / bit-packed encoder at bit width 10, so mostly bit-packed runs of 504 ids). They are
  *    decoded by our decoders ([[PlainFixedWidthDecoder]], [[DictionaryIdsDecoder]]) through
  *    [[VectorWriter.Longs]] into Spark `OnHeapColumnVector`s of 4,096 rows.
  *  - Named selection shapes over those rows, each at selectivities 1 %, 10 %, 50 %:
  *    `even_run<L>_sel<p>`: runs of L selected rows (L = 1, 2, 4 ... 4096), evenly spaced;
  *    `exp_run<L>_sel<p>`: selected runs of geometric length (mean L = 1, 16, 256) separated by
  *    exponentially distributed gaps; `noise_sel<p>`: every row selected independently.
  *  - Each shape is walked by a [[SelectionCursor]] with batch size 4,096 under both strategies:
  *    `selectors`: alternating `decoder.skip(n)` / `writer.write(decoder, n, out, pos)`;
  *    `mask`: the reader's mask path: skip the unselected stretches the cursor yields, decode each
  *    mask chunk (at most 4,096 rows) into a scratch vector, then gather the rows set in the chunk
  *    into the output vector (set bits found with `numberOfTrailingZeros`).
  *  - Timing: every (shape, page, strategy) runs `warmup` times, then `reps` rounds; in each round
  *    every shape and page is timed once per strategy, the order alternating between rounds, so
  *    both strategies see the same machine noise. Reported: the median ns per row of the page
  *    (selected or not) over the rounds.
  *  - The crossing for a (page, selectivity): the mean run length (rows / runs, what the `auto`
  *    policy looks at) where the `even_run` curves of the two strategies cross, interpolated on a
  *    log scale. The proposed threshold is the median of the crossings found (the upper one of the
  *    two middle values for an even count, leaning towards the mask, which irregular shapes favour);
  *    `results.md` also gives, per shape, what `auto` costs against the better strategy. */
object SelectionBench {

  final case class Shape(name: String, family: String, runParam: Int, selectivity: Double) {
    def pct: Int = math.round(selectivity * 100).toInt
  }

  val Selectivities: Seq[Double] = Seq(0.01, 0.10, 0.50)
  val EvenRuns: Seq[Int] = (0 to 12).map(1 << _)
  val ExpRuns: Seq[Int] = Seq(1, 16, 256)

  val shapes: Seq[Shape] = Selectivities.flatMap { s =>
    val p = math.round(s * 100)
    EvenRuns.map(l => Shape(s"even_run${l}_sel$p", "even", l, s)) ++
      ExpRuns.map(l => Shape(s"exp_run${l}_sel$p", "exp", l, s)) :+
      Shape(s"noise_sel$p", "noise", 0, s)
  }

  /** The shape's selection over `rows` rows (seeded by its name). */
  def selection(shape: Shape, rows: Int): RowSelection = {
    val rnd = new Random(shape.name.hashCode.toLong)
    val b = new RunsBuilder
    shape.family match {
      case "even" =>
        val sel = shape.runParam.toLong
        val period = math.max(sel + 1, math.round(sel / shape.selectivity))
        var pos = 0L
        while (pos < rows) {
          b.add(selected = true, math.min(sel, rows - pos)); pos += sel
          if (pos < rows) { b.add(selected = false, math.min(period - sel, rows - pos)); pos += period - sel }
        }
      case "exp" =>
        val meanGap = shape.runParam * (1 - shape.selectivity) / shape.selectivity
        var pos = 0L
        var selected = rnd.nextBoolean()
        while (pos < rows) {
          val mean = if (selected) shape.runParam.toDouble else meanGap
          val len = math.min(rows - pos, 1L + (-math.log(1 - rnd.nextDouble()) * (mean - 1).max(0)).toLong)
          b.add(selected, len); pos += len
          selected = !selected
        }
      case "noise" =>
        var i = 0
        while (i < rows) { b.add(rnd.nextDouble() < shape.selectivity, 1); i += 1 }
    }
    b.result()
  }

  /** One page of encoded values and a way to (re)start a decoder over it. */
  final class Page(val name: String, val values: Array[Long], bytes: Array[Byte], newDecoder: () => ValuesDecoder) {
    private[this] val decoder = newDecoder()
    def start(): ValuesDecoder = { decoder.init(bytes, 0, bytes.length, values.length); decoder }
  }

  def plainPage(rows: Int): Page = {
    val rnd = new Random(1)
    val values = Array.fill(rows)(rnd.nextLong())
    val bytes = java.nio.ByteBuffer.allocate(rows * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    values.foreach(bytes.putLong)
    new Page("int64_plain", values, bytes.array(), () => new PlainFixedWidthDecoder(8))
  }

  def dictPage(rows: Int): Page = {
    val rnd = new Random(2)
    val dict = Array.fill(1024)(rnd.nextLong())
    val ids = Array.fill(rows)(rnd.nextInt(1024))
    val enc = new RunLengthBitPackingHybridEncoder(10, 1 << 16, 1 << 24, new HeapByteBufferAllocator)
    ids.foreach(enc.writeInt)
    val bytes = 10.toByte +: enc.toBytes.toByteArray
    new Page("int64_dict", ids.map(dict(_)), bytes, () => new DictionaryIdsDecoder(Dictionaries.longs(dict)))
  }

  val BatchSize = 4096

  /** Reusable vectors: the output batch and the mask path's scratch. */
  final class Vectors {
    val out = new OnHeapColumnVector(BatchSize, LongType)
    val scratch = new OnHeapColumnVector(BatchSize, LongType)
  }

  /** Walks `sel` over `page` with the cursor and returns a checksum: with `verify`, the sum of
    * every row written; otherwise (to keep the measured loop lean) the last row of each batch. */
  def scan(page: Page, sel: RowSelection, strategy: SelectionStrategy, v: Vectors, verify: Boolean): Long = {
    val dec = page.start()
    val writer = VectorWriter.Longs
    val out = v.out
    val scratch = v.scratch
    val c = new SelectionCursor(sel, strategy, BatchSize)
    var sum = 0L
    while (c.nextBatch()) {
      var pos = 0
      var k = c.next()
      while (k != SelectionCursor.End) {
        if (k == SelectionCursor.Read) {
          writer.write(dec, c.stepRows.toInt, out, pos)
          pos += c.stepSelected
        } else if (k == SelectionCursor.Skip) {
          dec.skip(c.stepRows.toInt)
        } else {
          val n = c.stepRows.toInt
          writer.write(dec, n, scratch, 0)
          pos = gatherLongs(c.maskWords, n, scratch, out, pos)
        }
        k = c.next()
      }
      if (verify) { var i = 0; while (i < pos) { sum += out.getLong(i); i += 1 } }
      else sum += out.getLong(pos - 1)
    }
    sum
  }

  /** Copies the rows of `src` whose bit is set in `mask[0, n)` to `dst` from `pos`; returns the new
    * position. */
  def gatherLongs(mask: Array[Long], n: Int, src: OnHeapColumnVector, dst: OnHeapColumnVector, pos: Int): Int = {
    var p = pos
    val nw = (n + 63) >>> 6
    var wi = 0
    while (wi < nw) {
      var w = mask(wi)
      val base = wi << 6
      if (w == -1L) { var i = 0; while (i < 64) { dst.putLong(p + i, src.getLong(base + i)); i += 1 }; p += 64 }
      else while (w != 0) {
        dst.putLong(p, src.getLong(base + java.lang.Long.numberOfTrailingZeros(w)))
        p += 1
        w &= w - 1
      }
      wi += 1
    }
    p
  }

  /** The expected checksum of `verify` mode: the sum of the selected values. */
  def expectedSum(page: Page, sel: RowSelection): Long = {
    var s = 0L
    var i = 0
    while (i < page.values.length) { if (sel.isSelected(i.toLong)) s += page.values(i); i += 1 }
    s
  }

  final case class Result(shape: Shape, page: String, strategy: String, meanRun: Double, selected: Long, rows: Int,
      nsPerRow: Double)

  private def median(xs: Array[Double]): Double = {
    val s = xs.sorted
    if (s.length % 2 == 1) s(s.length / 2) else (s(s.length / 2 - 1) + s(s.length / 2)) / 2
  }

  /** Times every shape x page x strategy; `log` receives progress lines. */
  def measure(rows: Int, warmup: Int, reps: Int, log: String => Unit): Seq[Result] = {
    val pages = Seq(plainPage(rows), dictPage(rows))
    val v = new Vectors
    val strategies = Seq(SelectionStrategy.Selectors, SelectionStrategy.Mask)
    // both backings are built up front: conversion happens once per row group, not per column
    val sels = shapes.map(s => selection(s, rows)).map(s => (s.toRuns, s.toMask))
    def sel(i: Int, st: SelectionStrategy): RowSelection = if (st == SelectionStrategy.Mask) sels(i)._2 else sels(i)._1
    var blackhole = 0L
    for (w <- 0 until warmup; i <- shapes.indices; p <- pages; st <- strategies) blackhole += scan(p, sel(i, st), st, v, verify = false)
    log(s"warmed up ($warmup rounds)")
    val times = Array.fill(shapes.length, pages.length, strategies.length)(new Array[Double](reps))
    for (r <- 0 until reps) {
      val order = if (r % 2 == 0) strategies.indices else strategies.indices.reverse
      for (i <- shapes.indices; (p, pi) <- pages.zipWithIndex; si <- order) {
        val st = strategies(si)
        val s = sel(i, st)
        val t0 = System.nanoTime()
        blackhole += scan(p, s, st, v, verify = false)
        times(i)(pi)(si)(r) = (System.nanoTime() - t0).toDouble / rows
      }
      log(s"round ${r + 1} of $reps")
    }
    if (blackhole == 42) log("")
    for (i <- shapes.indices; (p, pi) <- pages.zipWithIndex; (st, si) <- strategies.zipWithIndex) yield {
      val s = sels(i)._1
      Result(shapes(i), p.name, if (st == SelectionStrategy.Mask) "mask" else "selectors", s.meanRunLength,
        s.selectedCount, rows, median(times(i)(pi)(si)))
    }
  }

  /** Crossing per (page, selectivity) over the `even` family: the mean run length at which
    * `mask / selectors` passes 1, log-interpolated; None if it never crosses. */
  def crossings(results: Seq[Result]): Seq[(String, Double, Option[Double])] = {
    val even = results.filter(_.shape.family == "even")
    for (page <- even.map(_.page).distinct; s <- Selectivities) yield {
      val pts = even.filter(r => r.page == page && r.shape.selectivity == s).groupBy(_.shape.runParam).toSeq
        .sortBy(_._1).map { case (_, rs) =>
          val m = rs.find(_.strategy == "mask").get
          val sl = rs.find(_.strategy == "selectors").get
          (m.meanRun, math.log(m.nsPerRow / sl.nsPerRow))
        }
      // the first point where the mask stops winning (log ratio crosses 0 upwards)
      val cross = pts.sliding(2).collectFirst {
        case Seq((x0, y0), (x1, y1)) if y0 < 0 && y1 >= 0 =>
          val lx = math.log(x0) + (math.log(x1) - math.log(x0)) * (-y0) / (y1 - y0)
          math.exp(lx)
      }
      (page, s, cross)
    }
  }

  def csv(results: Seq[Result]): String =
    ("shape,family,run_param,selectivity,page,strategy,mean_run,selected,rows,ns_per_row" +: results.map { r =>
      f"${r.shape.name},${r.shape.family},${r.shape.runParam},${r.shape.selectivity}%.2f,${r.page},${r.strategy}," +
        f"${r.meanRun}%.3f,${r.selected},${r.rows},${r.nsPerRow}%.4f"
    }).mkString("", "\n", "\n")

  def markdown(results: Seq[Result], threshold: Int, conditions: String): String = {
    val sb = new StringBuilder
    sb.append("# Row selections: selectors vs mask\n\n")
    sb.append("Generated by `make bench-selection` (`SelectionBench`, whose Scaladoc describes the data). ")
    sb.append("Median ns per page row; `auto` is what the policy picks with the chosen threshold.\n\n")
    sb.append(s"Conditions: $conditions\n\n")
    sb.append("## Crossings (even runs)\n\n| page | selectivity | mean run length where mask stops winning |\n|---|---|---|\n")
    crossings(results).foreach { case (p, s, c) =>
      sb.append(f"| $p | ${s * 100}%.0f %% | ${c.map(x => f"$x%.1f").getOrElse("no crossing")} |\n")
    }
    sb.append(s"\nChosen default threshold: **$threshold** (auto picks the mask when the mean run length is below it).\n\n")
    sb.append("## All shapes\n\n| shape | mean run | plain selectors | plain mask | dict selectors | dict mask | auto picks | auto's cost vs best |\n")
    sb.append("|---|---|---|---|---|---|---|---|\n")
    results.groupBy(_.shape).toSeq.sortBy(x => shapes.indexOf(x._1)).foreach { case (shape, rs) =>
      def t(p: String, st: String) = rs.find(r => r.page == p && r.strategy == st).get.nsPerRow
      val mean = rs.head.meanRun
      val auto = if (mean < threshold) "mask" else "selectors"
      val worst = Seq("int64_plain", "int64_dict").map { p => t(p, auto) / math.min(t(p, "mask"), t(p, "selectors")) }.max
      sb.append(f"| ${shape.name} | $mean%.1f | ${t("int64_plain", "selectors")}%.2f | ${t("int64_plain", "mask")}%.2f | " +
        f"${t("int64_dict", "selectors")}%.2f | ${t("int64_dict", "mask")}%.2f | $auto | ${worst}%.2fx |\n")
    }
    sb.toString
  }

  /** Args: output directory, then optional `rows=`, `warmup=`, `reps=`, `threshold=`, `conditions=`. */
  def main(args: Array[String]): Unit = {
    val dir = Paths.get(args.headOption.getOrElse("benchmarks/selection"))
    val opts = args.drop(1).map { a => val i = a.indexOf('='); a.substring(0, i) -> a.substring(i + 1) }.toMap
    val rows = opts.get("rows").map(_.toInt).getOrElse(1 << 20)
    val warmup = opts.get("warmup").map(_.toInt).getOrElse(5)
    val reps = opts.get("reps").map(_.toInt).getOrElse(15)
    val t0 = System.nanoTime()
    val results = measure(rows, warmup, reps, s => println(s"[bench-selection] $s"))
    val cross = crossings(results)
    cross.foreach { case (p, s, c) => println(f"[bench-selection] crossing $p sel ${s * 100}%.0f%%: ${c.map(x => f"$x%.1f").getOrElse("none")}") }
    val found = cross.flatMap(_._3).sorted
    val measured = if (found.isEmpty) 32 else math.round(found(found.length / 2)).toInt
    val threshold = opts.get("threshold").map(_.toInt).getOrElse(measured)
    println(s"[bench-selection] (upper) median crossing $measured; threshold used for the table: $threshold")
    val cond = opts.getOrElse("conditions",
      s"${Runtime.getRuntime.availableProcessors} cores, ${System.getProperty("java.vm.name")} ${System.getProperty("java.version")}")
    val fullCond = f"$cond; $rows rows per page, $warmup warm-up rounds, $reps timed rounds, " +
      f"${(System.nanoTime() - t0) / 1e9}%.0f s"
    Files.createDirectories(dir)
    write(dir.resolve("results.csv"), csv(results))
    write(dir.resolve("results.md"), markdown(results, threshold, fullCond))
    println(s"[bench-selection] wrote ${dir.resolve("results.csv")} and ${dir.resolve("results.md")}")
  }

  private def write(p: Path, s: String): Unit = Files.write(p, s.getBytes(StandardCharsets.UTF_8))
}
