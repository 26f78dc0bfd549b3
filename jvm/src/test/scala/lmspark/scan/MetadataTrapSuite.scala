package lmspark.scan

import java.nio.file.{Files, Path}
import java.util.Arrays

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.{Failure, Success, Try}

import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.apache.parquet.format.{BoundaryOrder, ColumnIndex, Encoding, PageType, Statistics}
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.functions._
import org.scalactic.source.Position
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.LocalInputFile
import lmspark.plan.LmMetrics
import lmspark.testutil.{LmSparkSession, MetadataSurgery, TopKChecks}
import lmspark.testutil.MetadataSurgery.Plain

/**
 * Files whose metadata lies about their data (built by [[MetadataSurgery]] from valid files): chunk
 * statistics, column indexes, offset indexes, bloom filters and encoding statistics that, trusted,
 * would prune rows that are there (or read the wrong pages). For each trap query, lmspark (every
 * pruning flag on) must give the rows of vanilla Spark with filter pushdown off (the data itself),
 * read the file itself, count the bad metadata in the matching "ignored" metric when the query needs
 * it, and prune no page with an index it should have ignored. Top-k queries (`ORDER BY c LIMIT k`)
 * over each column the trap's queries filter must give Spark's top-k: the top-k scan leaves row
 * groups by the key's statistics and pages by its column index.
 *
 * What vanilla Spark 4.1.3 returns with filter pushdown on (parquet-java's statistics, dictionary,
 * bloom and column-index filtering, all on by default) is logged per query, not asserted: it trusts
 * some of these files and loses rows.
 *
 * The base file: 2000 rows (`id` 0..1999) in two row groups of 1000 rows, pages of 100 rows, no
 * dictionary; `x` = id (INT32, sorted, bloom filter), `u` = id * 7919 % 1000 (unsorted), `d` = id / 2
 * and `f` = id / 4 with NaN where id % 100 == 37, `s` a string starting "é", "zz" or "a".
 */
class MetadataTrapSuite extends AnyFunSuite with LmSparkSession with TopKChecks {

  private val RgRows = 1000
  private val PageRows = 100

  private def dOf(id: Long): Double = if (id % 100 == 37) Double.NaN else id * 0.5
  private def fOf(id: Long): Float = if (id % 100 == 37) Float.NaN else (id * 0.25).toFloat
  private def sOf(id: Long): String = (id % 3).toInt match {
    case 0 => s"é$id"
    case 1 => s"zz$id"
    case _ => s"a$id"
  }
  private def ids(rg: Int): Range = rg * RgRows until (rg + 1) * RgRows

  private lazy val base: Path = {
    val dir = newDir("trap-base")
    val df = spark.range(0, 2 * RgRows, 1, 1).select(
      col("id"),
      col("id").cast("int").as("x"),
      (col("id") * 7919 % 1000).cast("int").as("u"),
      when(col("id") % 100 === 37, lit(Double.NaN)).otherwise(col("id") * 0.5).as("d"),
      when(col("id") % 100 === 37, lit(Float.NaN)).otherwise((col("id") * 0.25).cast("float")).as("f"),
      when(col("id") % 3 === 0, concat(lit("é"), col("id")))
        .when(col("id") % 3 === 1, concat(lit("zz"), col("id")))
        .otherwise(concat(lit("a"), col("id"))).as("s"))
    lmspark.testutil.WriterLayouts.writeRowGroups(df, dir, RgRows, Map(
      "parquet.page.row.count.limit" -> PageRows.toString,
      "parquet.enable.dictionary" -> "false",
      "parquet.bloom.filter.enabled#x" -> "true",
      "parquet.bloom.filter.expected.ndv#x" -> RgRows.toString))
    val file = new java.io.File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head.toPath
    // The shape every trap below relies on.
    val s = MetadataSurgery.open(file)
    require(s.rowGroups == 2 && (0 until 2).forall(s.rowCount(_) == RgRows), "base file: two row groups of 1000 rows")
    for (rg <- 0 until 2; c <- Seq("id", "x", "u", "d", "f", "s"))
      require(s.pageLocations(rg, c).map(_.getFirst_row_index) == (0L until RgRows by PageRows),
        s"base file: $c in row group $rg has pages of $PageRows rows, not first rows ${s.pageLocations(rg, c).map(_.getFirst_row_index).mkString(",")}")
    for (rg <- 0 until 2) require(s.meta(rg, "x").isSetBloom_filter_offset, "base file: x has a bloom filter")
    file
  }

  private lazy val trapDir: Path = Files.createDirectories(tempRoot.toPath.resolve("traps"))

  private def trapFile(name: String)(edit: MetadataSurgery => Unit): Path =
    MetadataSurgery.rewrite(base, trapDir.resolve(s"${name.replaceAll("[^A-Za-z0-9]+", "-")}.parquet"))(edit)

  /** One query on a trap file: `select` (comma-separated expressions) where `where`.
    * `noPagePruning`: the filter reads only columns whose page index the trap spoils in every row
    * group, so no page may be pruned. `consults`: answering it needs the bad metadata (so the
    * trap's "ignored" metric must count it); false for a query the other, good metadata already
    * answers (e.g. statistics prove the filter true for the row group), kept for its rows. */
  private final case class Q(where: String, select: String = "*", noPagePruning: Boolean = false, consults: Boolean = true)

  /** What vanilla Spark with pushdown on returned, per trap query (printed at the end). */
  private val vanillaLog = ArrayBuffer.empty[String]

  override protected def afterAll(): Unit = {
    try {
      if (vanillaLog.nonEmpty)
        println(vanillaLog.mkString("\n== vanilla Spark 4.1.3 with filterPushdown=true on the trap files ==\n", "\n", "\n"))
    } finally super.afterAll()
  }

  private def metric(plan: SparkPlan, name: String): Long =
    lmScans(plan).map(_.metrics(name).value).sum

  /** Runs every query of a trap: lmspark's rows equal the reference, lmspark read the file itself,
    * `ignored` (a metric name) counted the bad metadata, and vanilla Spark with pushdown is logged.
    * Every query runs; the trap fails at the end with every query's failures. */
  private def checkTrap(name: String, file: Path, ignored: Option[String], queries: Q*)(implicit pos: Position): Unit =
    runTrap(name, file, ignored, assertRows = true, queries: _*)

  /** As [[checkTrap]], but lmspark's rows are only logged beside vanilla Spark's: for metadata
    * whose lie no reader can see without reading every page. */
  private def logTrap(name: String, file: Path, queries: Q*)(implicit pos: Position): Unit =
    runTrap(name, file, None, assertRows = false, queries: _*)

  private def runTrap(name: String, file: Path, ignored: Option[String], assertRows: Boolean, queries: Q*)(
      implicit pos: Position): Unit = {
    val failures = ArrayBuffer.empty[String]
    for (q <- queries) {
      val sql = s"SELECT ${q.select} FROM parquet.`$file` WHERE ${q.where}"
      def dfWith(options: (String, String)*): DataFrame = spark.read.options(options.toMap).parquet(file.toString)
        .where(q.where).selectExpr(q.select.split(",").map(_.trim).toSeq: _*)
      def df: DataFrame = dfWith()
      val expected = normalized(referenceRows(df))
      assert(expected.nonEmpty, s"[$name] the query selects no row, so it tests nothing: $sql")
      def vanilla(options: (String, String)*): String =
        withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "true") {
          Try(normalized(dfWith(options: _*).collect()))
        } match {
          case Success(rows) if rows == expected => s"${rows.size} rows (correct)"
          case Success(rows) =>
            val extra = rows.diff(expected)
            s"${rows.size} rows, WRONG (expected ${expected.size}; missing ${expected.diff(rows).size}, extra ${extra.size}" +
              s"${if (extra.nonEmpty) ", e.g. " + extra.take(2).mkString(" ") else ""})"
          case Failure(e) => s"FAILED: ${rootCause(e).toString.take(200)}"
        }
      val vanillaText = vanilla()
      // When it is wrong, whether parquet-java's column-index filtering (on by default) is the cause.
      val withoutColumnIndex =
        if (vanillaText.endsWith("(correct)")) ""
        else s"; with parquet.filter.columnindex.enabled=false: ${vanilla("parquet.filter.columnindex.enabled" -> "false")}"
      vanillaLog += s"[$name] $sql\n    vanilla pushdown on: $vanillaText$withoutColumnIndex"
      info(s"${q.where} -> reference ${expected.size} rows; vanilla Spark with pushdown: $vanillaText$withoutColumnIndex")

      val problems = withConf("spark.lmspark.enabled" -> "true") {
        val d = df
        val lm = Try(normalized(d.collect()))
        if (!assertRows) {
          val text = lm match {
            case Success(rows) => s"${rows.size} rows${if (rows == expected) " (correct)" else ", WRONG"}"
            case Failure(e) => s"FAILED: ${rootCause(e)}"
          }
          vanillaLog += s"    lmspark: $text (not asserted)"
          info(s"    lmspark (not asserted): $text")
        }
        if (!assertRows) Nil
        else lm match {
          case Failure(e) => Seq(s"lmspark failed: ${rootCause(e)}")
          case Success(rows) if rows != expected =>
            Seq(s"lmspark's answer differs from Spark's: ${rows.size} rows vs ${expected.size}; only in lmspark: " +
              s"${rows.diff(expected).take(5)}; only in Spark: ${expected.diff(rows).take(5)}\n${d.queryExecution.executedPlan}")
          case Success(_) => trapMetricProblems(d.queryExecution.executedPlan, ignored, q)
        }
      }
      failures ++= problems.map(p => s"$sql\n  $p")
    }
    if (assertRows) failures ++= topKProblems(file, queries)
    if (failures.nonEmpty) fail(s"[$name] ${failures.size} problems in ${queries.size} queries:\n${failures.mkString("\n")}")
  }

  /** What is wrong with top-k queries (`ORDER BY c ... LIMIT k`, no filter, one task) over the trap
    * file, on each column its queries filter: pass 1 leaves row groups by the key's statistics and,
    * once the top-k is full, prunes pages by the key's column index with a bound on it, so a lie
    * trusted there would drop rows the top-k keeps. Each must give, task by task and in the end,
    * the rows of Spark's scan and top-k ([[TopKChecks.checkTopK]]), lmspark reading the file itself. */
  private def topKProblems(file: Path, queries: Seq[Q]): Seq[String] = {
    val columns = Seq("x", "u", "d", "f", "s").filter(c => queries.exists(q => s"\\b$c\\b".r.findFirstIn(q.where).isDefined))
    for {
      c <- columns
      order <- Seq(s"$c DESC", s"$c ASC")
      limit <- Seq(7, 150)
      sql = s"SELECT * FROM parquet.`$file` ORDER BY $order LIMIT $limit"
      problem <- withConf("spark.lmspark.enabled" -> "true", "spark.sql.files.maxPartitionBytes" -> "128m") {
        Try(checkTopK(spark.sql(sql), sql)) match {
          case Failure(e) => Some(s"top-k: ${rootCause(e)}")
          case Success(scan) if scan.metrics(LmMetrics.FilesFallback).value != 0 || scan.metrics(LmMetrics.FilesRead).value < 1 =>
            Some("top-k: the trap file must be read by lmspark itself, not handed to Spark's reader")
          case Success(scan) =>
            def m(name: String) = scan.metrics(name).value
            info(s"top-k $order LIMIT $limit: ${m(LmMetrics.TopKRowGroupsUnread)} row groups unread, " +
              s"${m(LmMetrics.TopKRowsRanked)} rows ranked, ${m(LmMetrics.PagesPruned)} pages pruned")
            None
        }
      }
    } yield s"$sql\n  $problem"
  }

  private def rootCause(e: Throwable): Throwable = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).toSeq.last

  /** What is wrong with the metrics of a correct lmspark run of a trap query. */
  private def trapMetricProblems(p: SparkPlan, ignored: Option[String], q: Q): Seq[String] = {
    val out = ArrayBuffer.empty[String]
    Try(assertNoSilentDecline(p)).failed.foreach(e => out += e.getMessage)
    if (lmScans(p).isEmpty) out += s"lmspark's scan was not used:\n$p"
    else {
      def m(name: String) = metric(p, name)
      if (m(LmMetrics.FilesFallback) != 0 || m(LmMetrics.FilesRead) != 1)
        out += "the trap file must be read by lmspark itself, not handed to Spark's reader"
      if (m(LmMetrics.PagesRead) > m(LmMetrics.PagesTotal)) out += s"pagesRead ${m(LmMetrics.PagesRead)} > pagesTotal ${m(LmMetrics.PagesTotal)}"
      ignored.filter(_ => q.consults).foreach { name =>
        if (m(name) < 1) out += s"metric $name did not count the bad metadata (${metricsText(p)})"
      }
      if (q.noPagePruning && (m(LmMetrics.PagesPruned) != 0 || m(LmMetrics.PrunedByPageIndex) != 0))
        out += s"pages were pruned with an index that should have been ignored (${metricsText(p)})"
    }
    out.toSeq
  }

  private def metricsText(p: SparkPlan): String =
    lmScans(p).head.metrics.toSeq.sortBy(_._1).map { case (k, v) => s"$k=${v.value}" }.mkString(", ")

  // ---- helpers over the base file's values ----

  private def signedMinMax(values: Seq[Array[Byte]]): (Array[Byte], Array[Byte]) = {
    val ord = Ordering.fromLessThan[Array[Byte]]((a, b) => Arrays.compare(a, b) < 0)
    (values.min(ord), values.max(ord))
  }

  /** Sets a chunk's min / max in both the current and the deprecated fields that are present. */
  private def setBounds(st: Statistics, min: Array[Byte], max: Array[Byte]): Unit = {
    st.setMin_value(min).setMax_value(max)
    if (st.isSetMin) st.setMin(min)
    if (st.isSetMax) st.setMax(max)
  }

  /** First rows of a chunk's pages (from its offset index) and the row group's row count. */
  private def pageRanges(s: MetadataSurgery, rg: Int, column: String): IndexedSeq[Range] = {
    val starts = s.pageLocations(rg, column).map(_.getFirst_row_index.toInt) :+ s.rowCount(rg).toInt
    starts.sliding(2).map { case Seq(a, b) => (rg * RgRows + a) until (rg * RgRows + b) }.toIndexedSeq
  }

  /** A column index for a floating column from the values per page: bounds exclude NaN (as the
    * format says), and `page(i, min, max)` may replace page i's bounds. */
  private def floatingIndex(s: MetadataSurgery, rg: Int, column: String, value: Long => Double,
      encode: Double => Array[Byte], page: (Int, Array[Byte], Array[Byte]) => (Array[Byte], Array[Byte]) = (_, a, b) => (a, b)): ColumnIndex = {
    val pages = pageRanges(s, rg, column)
    val bounds = pages.zipWithIndex.map { case (r, i) =>
      val vs = r.map(row => value(row.toLong)).filterNot(_.isNaN)
      page(i, encode(vs.min), encode(vs.max))
    }
    new ColumnIndex(
      pages.map(_ => java.lang.Boolean.FALSE).asJava,
      MetadataSurgery.buffers(bounds.map(_._1)),
      MetadataSurgery.buffers(bounds.map(_._2)),
      BoundaryOrder.ASCENDING)
      .setNull_counts(pages.map(_ => java.lang.Long.valueOf(0L)).asJava)
  }

  private def everyRowGroup(s: MetadataSurgery)(f: Int => Unit): Unit = (0 until s.rowGroups).foreach(f)

  // ---- the surgery itself ----

  test("surgery: a rewrite keeps every data byte and gives parquet-java the edited indexes") {
    val out = trapFile("identity") { s =>
      everyRowGroup(s) { rg =>
        s.columnNames.foreach { c => if (s.hasColumnIndex(rg, c)) s.columnIndex(rg, c); s.offsetIndex(rg, c) }
        s.bloom(rg, "x")
      }
    }
    val edited = trapFile("edited-index") { s =>
      s.columnIndex(0, "x").getMax_values.set(2, java.nio.ByteBuffer.wrap(Plain.int32(12345)))
    }
    val src = MetadataSurgery.open(base)
    val a = Files.readAllBytes(base)
    for (f <- Seq(out, edited)) {
      val b = Files.readAllBytes(f)
      assert(Arrays.equals(a, 0, src.footerStart, b, 0, src.footerStart), s"$f: bytes before the footer changed")
    }
    val r = ParquetFileReader.open(new LocalInputFile(edited))
    try {
      val x = r.getRowGroups.get(0).getColumns.asScala.find(_.getPath.toDotString == "x").get
      val ci = r.readColumnIndex(x)
      assert(Plain.readInt32(MetadataSurgery.bytes(ci.getMaxValues.get(2))) == 12345)
      assert(Plain.readInt32(MetadataSurgery.bytes(ci.getMaxValues.get(1))) == 199)
      assert(r.readOffsetIndex(x).getPageCount == RgRows / PageRows)
      assert(r.readBloomFilter(x).findHash(r.readBloomFilter(x).hash(Integer.valueOf(5))))
    } finally r.close()
    for (f <- Seq(out, edited)) checkSparkAnswerAndLmUsed(spark.read.parquet(f.toString))
  }

  // ---- chunk statistics ----

  test("trap: chunk statistics with min > max") {
    val f = trapFile("stats-min-gt-max") { s => setBounds(s.statistics(1, "x"), Plain.int32(1900), Plain.int32(1100)) }
    checkTrap("chunk stats min > max", f, Some(LmMetrics.StatisticsIgnored),
      Q("x = 1500"), Q("x < 1050"), Q("x > 1950"), Q("x IN (1000, 1999)"))
  }

  test("trap: chunk null_count greater than the row count") {
    val f = trapFile("stats-nulls-gt-rows") { s => s.statistics(1, "x").setNull_count(1500) }
    checkTrap("chunk null_count > rows", f, Some(LmMetrics.StatisticsIgnored),
      Q("x = 1500"), Q("x IS NOT NULL AND x > 1990"), Q("x IS NULL OR x = 1200"))
  }

  test("trap: chunk null_count equal to the row count while min / max are set") {
    val f = trapFile("stats-all-null-with-bounds") { s => s.statistics(1, "x").setNull_count(RgRows) }
    checkTrap("chunk null_count == rows with bounds", f, Some(LmMetrics.StatisticsIgnored),
      Q("x = 1500"), Q("x IS NOT NULL AND x > 1990"), Q("x >= 1000"))
  }

  private val signedStringQueries = Seq(
    Q("s = 'a1001'"), Q("s > 'zzz'"), Q("s < 'b'"), Q("s LIKE 'a19%'"), Q("s >= 'é'"), Q("startswith(s, 'é10')"))

  /** Both row groups' `s` statistics only in the deprecated `min` / `max` fields, in signed byte
    * order ("é..." is the minimum, its first byte being negative), as writers before
    * PARQUET-1025 wrote them. */
  private def signedStringStats(s: MetadataSurgery): Unit = everyRowGroup(s) { rg =>
    val st = s.statistics(rg, "s")
    val (min, max) = signedMinMax(ids(rg).map(i => Plain.utf8(sOf(i))))
    st.unsetMin_value(); st.unsetMax_value()
    st.setMin(min).setMax(max)
  }

  // parquet-java's metadata converter drops the deprecated min / max of a column whose order is
  // not signed, and NaN bounds (keeping the null count), before lmspark's checks see the statistics,
  // so statisticsIgnored has nothing to count in those traps: their rows are what is checked.

  test("trap: string statistics only in the deprecated signed min / max fields") {
    val f = trapFile("stats-signed-strings") { s => signedStringStats(s) }
    checkTrap("signed deprecated string stats", f, None, signedStringQueries: _*)
  }

  test("trap: signed string statistics from an old writer, without column orders") {
    val f = trapFile("stats-signed-strings-old-writer") { s =>
      signedStringStats(s)
      s.footer.setCreated_by("parquet-mr version 1.9.0 (build 38262e2c80015d0935dad20f8e18f2d6f9fbd03c)")
      s.footer.unsetColumn_orders()
    }
    checkTrap("signed string stats, old writer", f, None, signedStringQueries: _*)
  }

  private val dQueries = Seq(Q("d < 600"), Q("d = 700.0"), Q("d BETWEEN 510 AND 520"), Q("d > 990"))
  private val fQueries = Seq(Q("f < 300"), Q("f = CAST(350.0 AS FLOAT)"), Q("f BETWEEN 260 AND 270"), Q("f > 495"))

  test("trap: NaN as the minimum of double and float chunk statistics") {
    val d = trapFile("stats-nan-min-double") { s => setBounds(s.statistics(1, "d"), Plain.double(Double.NaN), Plain.double(999.5)) }
    checkTrap("double stats min NaN", d, None, dQueries: _*)
    val f = trapFile("stats-nan-min-float") { s => setBounds(s.statistics(1, "f"), Plain.float(Float.NaN), Plain.float(499.75f)) }
    checkTrap("float stats min NaN", f, None, fQueries: _*)
  }

  test("trap: NaN as both bounds of double and float chunk statistics") {
    val d = trapFile("stats-nan-both-double") { s => setBounds(s.statistics(1, "d"), Plain.double(Double.NaN), Plain.double(Double.NaN)) }
    checkTrap("double stats min and max NaN", d, None, dQueries: _*)
    val f = trapFile("stats-nan-both-float") { s => setBounds(s.statistics(1, "f"), Plain.float(Float.NaN), Plain.float(Float.NaN)) }
    checkTrap("float stats min and max NaN", f, None, fQueries: _*)
  }

  private val nanQueries = Seq(
    Q("d > 999.5"), Q("d > 5000"), Q("d = CAST('NaN' AS DOUBLE)"), Q("NOT (d <= 999.5)"),
    Q("d IN (CAST('NaN' AS DOUBLE), 2.0)"), Q("d >= CAST('Infinity' AS DOUBLE)"), Q("d <=> CAST('NaN' AS DOUBLE)"))

  test("trap: double / float statistics and column indexes that leave out NaN values that exist") {
    // Spark orders NaN above every value, so `c > x` must find the NaN rows whatever the bounds say.
    // These bounds are what the format asks for (NaN excluded), so nothing is to be ignored.
    val d = trapFile("stats-without-nan-double") { s =>
      everyRowGroup(s) { rg =>
        val vs = ids(rg).map(i => dOf(i.toLong)).filterNot(_.isNaN)
        setBounds(s.statistics(rg, "d"), Plain.double(vs.min), Plain.double(vs.max))
        s.setColumnIndex(rg, "d", floatingIndex(s, rg, "d", dOf, Plain.double))
      }
    }
    checkTrap("double bounds without NaN", d, None, nanQueries: _*)
    val f = trapFile("stats-without-nan-float") { s =>
      everyRowGroup(s) { rg =>
        val vs = ids(rg).map(i => fOf(i.toLong)).filterNot(_.isNaN)
        setBounds(s.statistics(rg, "f"), Plain.float(vs.min), Plain.float(vs.max))
        s.setColumnIndex(rg, "f", floatingIndex(s, rg, "f", i => fOf(i).toDouble, v => Plain.float(v.toFloat)))
      }
    }
    checkTrap("float bounds without NaN", f, None,
      Q("f > 499.75"), Q("f = CAST('NaN' AS FLOAT)"), Q("NOT (f <= 600)"), Q("f > CAST(100 AS FLOAT) AND id % 100 = 37"))
  }

  test("trap: a column index page with NaN bounds") {
    val d = trapFile("ci-nan-page") { s =>
      everyRowGroup(s) { rg =>
        val nan = Plain.double(Double.NaN)
        s.setColumnIndex(rg, "d", floatingIndex(s, rg, "d", dOf, Plain.double,
          (i, a, b) => if (i == 3) (nan, nan) else (a, b)))
      }
    }
    checkTrap("column index page NaN bounds", d, None, Q("d = 175.0"), Q("d BETWEEN 170 AND 180"), Q("d > 999"))
  }

  // ---- column indexes ----

  private val xPageQueries = Seq(
    Q("x = 350", noPagePruning = true), Q("x BETWEEN 340 AND 360", noPagePruning = true),
    Q("x = 1350", noPagePruning = true),
    // x's column index is not consulted: id's index selects the rows, x's offset index (sound) the pages.
    Q("id BETWEEN 330 AND 370", "id, x, s", consults = false))

  test("trap: a column index page with min > max") {
    val f = trapFile("ci-min-gt-max") { s =>
      everyRowGroup(s) { rg =>
        val ci = s.columnIndex(rg, "x")
        val (mn, mx) = (ci.getMin_values.get(3), ci.getMax_values.get(3))
        ci.getMin_values.set(3, mx); ci.getMax_values.set(3, mn)
      }
    }
    checkTrap("column index page min > max", f, Some(LmMetrics.PageIndexesIgnored), xPageQueries: _*)
  }

  test("trap: a column index null page while null counts are absent") {
    val f = trapFile("ci-null-page-no-counts") { s =>
      everyRowGroup(s) { rg =>
        val ci = s.columnIndex(rg, "x")
        ci.getNull_pages.set(3, true)
        ci.unsetNull_counts()
      }
    }
    checkTrap("null page, null counts absent", f, Some(LmMetrics.PageIndexesIgnored), xPageQueries: _*)
  }

  test("trap: a column index null page whose null count is below its row count") {
    val f = trapFile("ci-null-page-few-nulls") { s =>
      everyRowGroup(s) { rg =>
        val ci = s.columnIndex(rg, "x")
        ci.getNull_pages.set(3, true)
        ci.getNull_counts.set(3, 5L)
      }
    }
    checkTrap("null page with 5 nulls of 100 rows", f, Some(LmMetrics.PageIndexesIgnored), xPageQueries: _*)
  }

  test("trap: a column index page null count above the page's row count") {
    val f = trapFile("ci-null-count-gt-rows") { s =>
      everyRowGroup(s) { rg => s.columnIndex(rg, "x").getNull_counts.set(3, 150L) }
    }
    checkTrap("page null count 150 of 100 rows", f, Some(LmMetrics.PageIndexesIgnored), xPageQueries: _*)
  }

  test("trap: column index page bounds disjoint from the chunk statistics") {
    val f = trapFile("ci-disjoint") { s =>
      everyRowGroup(s) { rg =>
        val ci = s.columnIndex(rg, "x")
        for (l <- Seq(ci.getMin_values, ci.getMax_values); i <- 0 until l.size)
          l.set(i, java.nio.ByteBuffer.wrap(Plain.int32(Plain.readInt32(MetadataSurgery.bytes(l.get(i))) + 100000)))
      }
    }
    checkTrap("page bounds disjoint from chunk stats", f, Some(LmMetrics.PageIndexesIgnored),
      // Statistics prove these true for every row group they do not prune: no index is needed.
      (xPageQueries ++ Seq(Q("x < 1000", noPagePruning = true, consults = false),
        Q("x >= 0", "id", noPagePruning = true, consults = false))): _*)
  }

  test("trap: a column index whose page count differs from the offset index's") {
    val f = trapFile("ci-page-count") { s =>
      everyRowGroup(s) { rg =>
        val ci = s.columnIndex(rg, "x")
        Seq(ci.getNull_pages, ci.getMin_values, ci.getMax_values, ci.getNull_counts).foreach(_.remove(9))
      }
    }
    checkTrap("column index with one page less", f, Some(LmMetrics.PageIndexesIgnored), xPageQueries: _*)
  }

  test("trap: an ASCENDING boundary order on an unsorted column") {
    val f = trapFile("ci-boundary-order") { s =>
      everyRowGroup(s) { rg => s.columnIndex(rg, "u").setBoundary_order(BoundaryOrder.ASCENDING) }
    }
    // Whether the lie is detected is not asserted: an index used without its boundary order is right.
    checkTrap("ASCENDING order on unsorted pages", f, None, Q("u = 123"), Q("u BETWEEN 500 AND 510"), Q("u > 990"), Q("u < 5"))
  }

  // ---- offset indexes ----

  private val oiQueries = Seq(
    Q("x BETWEEN 520 AND 560", noPagePruning = true), Q("id BETWEEN 520 AND 560", "id, x"),
    Q("id = 1550", "x, d"), Q("id BETWEEN 330 AND 680", "x"))

  test("trap: offset index first_row_index not increasing (a repeated first row)") {
    val f = trapFile("oi-first-row-repeated") { s =>
      everyRowGroup(s) { rg => val p = s.pageLocations(rg, "x"); p(5).setFirst_row_index(p(4).getFirst_row_index) }
    }
    checkTrap("offset index repeated first row", f, Some(LmMetrics.PageIndexesIgnored), oiQueries: _*)
  }

  test("trap: offset index first_row_index decreasing") {
    val f = trapFile("oi-first-row-decreasing") { s =>
      everyRowGroup(s) { rg =>
        val p = s.pageLocations(rg, "x")
        val (a, b) = (p(4).getFirst_row_index, p(5).getFirst_row_index)
        p(4).setFirst_row_index(b); p(5).setFirst_row_index(a)
      }
    }
    checkTrap("offset index first rows swapped", f, Some(LmMetrics.PageIndexesIgnored), oiQueries: _*)
  }

  test("trap: offset index whose first page does not start at row 0") {
    val f = trapFile("oi-first-row-not-zero") { s =>
      everyRowGroup(s) { rg => s.pageLocations(rg, "x").head.setFirst_row_index(7) }
    }
    checkTrap("offset index first row 7", f, Some(LmMetrics.PageIndexesIgnored),
      Q("x BETWEEN 3 AND 60", noPagePruning = true), Q("id BETWEEN 3 AND 60", "id, x"))
  }

  test("trap: offset index offsets not increasing") {
    val f = trapFile("oi-offsets-swapped") { s =>
      everyRowGroup(s) { rg =>
        val p = s.pageLocations(rg, "x")
        val (o3, n3, o4, n4) = (p(3).getOffset, p(3).getCompressed_page_size, p(4).getOffset, p(4).getCompressed_page_size)
        p(3).setOffset(o4).setCompressed_page_size(n4)
        p(4).setOffset(o3).setCompressed_page_size(n3)
      }
    }
    checkTrap("offset index offsets swapped", f, Some(LmMetrics.PageIndexesIgnored),
      (oiQueries ++ Seq(Q("id BETWEEN 320 AND 380", "id, x"), Q("x = 450", noPagePruning = true))): _*)
  }

  test("trap: offset index page beyond the end of the file") {
    val f = trapFile("oi-offset-past-eof") { s =>
      everyRowGroup(s) { rg => s.pageLocations(rg, "x")(6).setOffset(Files.size(base) + 1000) }
    }
    checkTrap("offset index page past EOF", f, Some(LmMetrics.PageIndexesIgnored),
      (oiQueries ++ Seq(Q("id BETWEEN 620 AND 680", "id, x"), Q("x = 650", noPagePruning = true))): _*)
  }

  test("trap: offset index page pointing into another column's chunk") {
    val f = trapFile("oi-offset-other-chunk") { s =>
      everyRowGroup(s) { rg =>
        val other = s.pageLocations(rg, "u")(6)
        s.pageLocations(rg, "x")(6).setOffset(other.getOffset).setCompressed_page_size(other.getCompressed_page_size)
      }
    }
    checkTrap("offset index page in another chunk", f, Some(LmMetrics.PageIndexesIgnored),
      (oiQueries ++ Seq(Q("id BETWEEN 620 AND 680", "id, x"), Q("x = 650", noPagePruning = true))): _*)
  }

  test("trap: offset index page sizes that do not tile the chunk") {
    val f = trapFile("oi-size") { s =>
      everyRowGroup(s) { rg => val p = s.pageLocations(rg, "x")(3); p.setCompressed_page_size(p.getCompressed_page_size + 7) }
    }
    checkTrap("offset index page size + 7", f, Some(LmMetrics.PageIndexesIgnored),
      (oiQueries ++ Seq(Q("id BETWEEN 320 AND 380", "id, x"))): _*)
  }

  // ---- bloom filters ----

  private val bloomQueries = Seq(Q("x = 1500"), Q("x IN (1200, 1700)"), Q("x = 1000"), Q("x = 999"), Q("x = 0"))

  /** A bitset of the header's size holding `values` only. */
  private def bitsetOf(numBytes: Int, values: Seq[Int]): Array[Byte] = {
    val bf = new BlockSplitBloomFilter(numBytes)
    values.foreach(v => bf.insertHash(bf.hash(Integer.valueOf(v))))
    val out = new java.io.ByteArrayOutputStream()
    bf.writeTo(out)
    out.toByteArray
  }

  test("trap: a bloom filter that denies every value (zeroed bitset)") {
    val f = trapFile("bloom-zero") { s =>
      everyRowGroup(s) { rg => val b = s.bloom(rg, "x"); b.bitset = new Array[Byte](b.bitset.length) }
    }
    checkTrap("zeroed bloom bitset", f, Some(LmMetrics.BloomFiltersIgnored), bloomQueries: _*)
  }

  test("trap: a bloom filter that denies the chunk's own minimum, or its maximum") {
    val noMin = trapFile("bloom-no-min") { s =>
      everyRowGroup(s) { rg => val b = s.bloom(rg, "x"); b.bitset = bitsetOf(b.header.getNumBytes, ids(rg).tail) }
    }
    checkTrap("bloom denies the chunk min", noMin, Some(LmMetrics.BloomFiltersIgnored), Q("x = 1000"), Q("x = 0"), Q("x IN (0, 1000)"))
    val noMax = trapFile("bloom-no-max") { s =>
      everyRowGroup(s) { rg => val b = s.bloom(rg, "x"); b.bitset = bitsetOf(b.header.getNumBytes, ids(rg).init) }
    }
    checkTrap("bloom denies the chunk max", noMax, Some(LmMetrics.BloomFiltersIgnored), Q("x = 999"), Q("x = 1999"), Q("x IN (999, 5000)"))
  }

  for ((label, numBytes) <- Seq("2^30" -> (1 << 30), "64 MiB" -> (1 << 26), "-8" -> -8, "33" -> 33, "32 (shorter than the bitset)" -> 32)) {
    test(s"trap: a bloom filter header with numBytes $label") {
      val f = trapFile(s"bloom-numbytes-$numBytes") { s =>
        everyRowGroup(s) { rg => s.bloom(rg, "x").header.setNumBytes(numBytes) }
      }
      checkTrap(s"bloom numBytes $label", f, Some(LmMetrics.BloomFiltersIgnored), bloomQueries: _*)
    }
  }

  // ---- encoding statistics ----

  /** 2000 rows, two row groups; `c` is dictionary-encoded until its tiny dictionary fills up in
    * each row group (rows 500.. of each hold distinct values), then PLAIN (a v1 fallback). */
  private lazy val dictionaryBase: Path = {
    val dir = newDir("trap-dictionary-base")
    val df = spark.range(0, 2 * RgRows, 1, 1).select(
      col("id"),
      when(col("id") % RgRows < 500, concat(lit("v"), col("id") % 10)).otherwise(concat(lit("u"), col("id"))).as("c"))
    lmspark.testutil.WriterLayouts.writeRowGroups(df, dir, RgRows, Map(
      "parquet.page.row.count.limit" -> PageRows.toString,
      "parquet.enable.dictionary" -> "true",
      "parquet.dictionary.page.size" -> "256"))
    val file = new java.io.File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head.toPath
    val s = MetadataSurgery.open(file)
    for (rg <- 0 until 2) {
      val stats = s.meta(rg, "c").getEncoding_stats.asScala
      require(stats.exists(e => e.getPage_type == PageType.DATA_PAGE && e.getEncoding == Encoding.PLAIN) &&
        stats.exists(e => e.getPage_type == PageType.DATA_PAGE && e.getEncoding == Encoding.PLAIN_DICTIONARY),
        s"dictionary base: c in row group $rg falls back from dictionary to PLAIN pages (${stats.mkString(", ")})")
    }
    file
  }

  /** Encoding statistics claiming that every data page of `c` is dictionary-encoded. */
  private def allDictionaryStats(s: MetadataSurgery, rg: Int): Unit = {
    val m = s.meta(rg, "c")
    val (plain, rest) = m.getEncoding_stats.asScala.partition(e => e.getPage_type == PageType.DATA_PAGE && e.getEncoding == Encoding.PLAIN)
    rest.find(e => e.getPage_type == PageType.DATA_PAGE).foreach(e => e.setCount(e.getCount + plain.map(_.getCount).sum))
    m.setEncoding_stats(new java.util.ArrayList(rest.asJava))
  }

  private val dictionaryQueries = Seq(Q("c = 'u1700'"), Q("c IN ('u700', 'u1999')"), Q("c = 'u600'"), Q("c = 'v3'", "id"))

  test("trap: encoding statistics that hide PLAIN fallback pages the encodings list shows") {
    val f = MetadataSurgery.rewrite(dictionaryBase, trapDir.resolve("encoding-stats-no-plain.parquet")) { s =>
      everyRowGroup(s)(allDictionaryStats(s, _))
    }
    checkTrap("encoding stats hide PLAIN pages", f, None, dictionaryQueries: _*)
  }

  test("trap: encoding statistics and encodings list that both hide PLAIN fallback pages (logged)") {
    // Nothing in the footer contradicts this lie; only the page headers do.
    val f = MetadataSurgery.rewrite(dictionaryBase, trapDir.resolve("encodings-no-plain.parquet")) { s =>
      everyRowGroup(s) { rg =>
        allDictionaryStats(s, rg)
        s.meta(rg, "c").setEncodings(new java.util.ArrayList(s.meta(rg, "c").getEncodings.asScala.filterNot(_ == Encoding.PLAIN).asJava))
      }
    }
    logTrap("encoding stats and encodings hide PLAIN pages", f, dictionaryQueries: _*)
  }
}
