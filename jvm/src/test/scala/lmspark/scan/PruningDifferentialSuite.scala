package lmspark.scan

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.file.{Files, Path, Paths}
import java.time.{Instant, LocalDate, LocalDateTime, ZoneOffset}

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.{Failure, Random, Success, Try}

import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.LocalInputFile
import lmspark.LmConf
import lmspark.io.CodecFixtures
import lmspark.plan.LmMetrics
import lmspark.testutil.{DiffTimes, PageStarts, FilterColumn, LmSparkSession, RandomPredicates}

/**
 * Row-group and page pruning, differentially: seeded random filter predicates over files with page
 * indexes (the parquet-testing corpus, and files written here with several row groups, small pages,
 * bloom filters, dictionary on / off / falling back, sorted by the filtered column or not, with
 * nulls, NaN / ±0.0 / ±Infinity, non-ASCII strings, decimals, dates and timestamps). Every query's
 * rows under lmspark equal vanilla Spark's with filter pushdown off, under every pruning flag on, page
 * index off, statistics off (with no read coalescing and tiny batches) and all off. The expected rows:
 * vanilla Spark reads each file once (lmspark and filter pushdown off) and evaluates each query's
 * filter over those rows.
 *
 * Metrics are checked too: no more pages read than there are, no more row groups pruned than there
 * are, nothing pruned by a switched-off mechanism, and, on sorted files, a selective predicate prunes
 * something.
 *
 * The seed is printed; `LMSPARK_TEST_SEED=<seed>` reruns a failing case, whose SQL is printed.
 */
class PruningDifferentialSuite extends AnyFunSuite with LmSparkSession {

  override protected def sparkConf: Map[String, String] = Map("spark.sql.datetime.java8API.enabled" -> "true")

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261122L)

  private val pruningFlags = Seq(LmConf.PRUNING_STATISTICS, LmConf.PRUNING_DICTIONARY, LmConf.PRUNING_BLOOM_FILTER,
    LmConf.PRUNING_GUARANTEES, LmConf.PAGE_INDEX, LmConf.PRUNING_SPLITS, LmConf.SPLITS_PACKING).map(_.key)

  /** A flag combination lmspark runs a query under. */
  private final case class Combo(name: String, conf: Seq[(String, String)]) {
    def off(key: String): Boolean = conf.contains(key -> "false")
  }
  private def flags(off: String*): Seq[(String, String)] = pruningFlags.map(k => k -> (!off.contains(k)).toString)
  private val allOn = Combo("all on", flags())
  /** The combinations every query also runs under. The one with statistics off also reads with no
    * coalescing of page reads and tiny batches (page pruning is on there). */
  private val variants = IndexedSeq(
    Combo("page index off", flags(LmConf.PAGE_INDEX.key)),
    Combo("statistics off, maxCoalesceGap 0, batchSize 37",
      flags(LmConf.PRUNING_STATISTICS.key) ++ Seq(LmConf.IO_MAX_COALESCE_GAP.key -> "0", LmConf.BATCH_SIZE.key -> "37")),
    Combo("all off", flags(pruningFlags: _*)))

  /** A file to query: Spark reads `path` (with `schema` if given); `columns` are its values in file
    * order; `readByLmspark`: lmspark must read it itself (checked with the metrics).
    * `reference`: the rows vanilla Spark read from the file (lmspark and filter pushdown off), as a
    * local relation, which vanilla Spark filters on the driver for each query's expected rows. */
  private final case class Table(label: String, path: String, schema: Option[String], columns: IndexedSeq[FilterColumn],
      sortedBy: Option[String], readByLmspark: Boolean, reference: DataFrame) {
    def read: DataFrame = schema.fold(spark.read)(s => spark.read.schema(s)).parquet(path)
  }

  private def parquetFile(path: String): Path = {
    val p = Paths.get(path)
    if (Files.isDirectory(p)) Files.list(p).iterator().asScala.filter(_.toString.endsWith(".parquet")).toSeq.head else p
  }

  private def load(label: String, path: String, schema: Option[String] = None, sortedBy: Option[String] = None,
      readByLmspark: Boolean = true): Table = {
    val t0 = System.nanoTime()
    val df = schema.fold(spark.read)(s => spark.read.schema(s)).parquet(path)
    val rows = referenceRows(df)
    val starts = PageStarts.of(parquetFile(path))
    val columns = df.schema.fields.toIndexedSeq.zipWithIndex.map { case (f, i) =>
      FilterColumn(f.name, f.dataType, rows.toIndexedSeq.map(_.get(i)), starts)
    }
    val table = Table(label, path, schema, columns, sortedBy, readByLmspark, spark.createDataFrame(rows.toSeq.asJava, df.schema))
    times.loadNanos += System.nanoTime() - t0
    table
  }

  // ---- generated files ----

  private val generatedSchema = StructType(Seq(
    StructField("id", LongType, nullable = false),
    StructField("k", IntegerType), StructField("l", LongType), StructField("sh", ShortType), StructField("b", ByteType),
    StructField("d", DoubleType), StructField("f", FloatType), StructField("s", StringType), StructField("cat", StringType),
    StructField("dec", DecimalType(9, 2)), StructField("dec18", DecimalType(18, 3)), StructField("dec30", DecimalType(30, 5)),
    StructField("dt", DateType), StructField("ts", TimestampType), StructField("ntz", TimestampNTZType),
    StructField("bool", BooleanType), StructField("bin", BinaryType)))

  private val alphabet = IndexedSeq("a", "b", "z", "A", "é", "ü", "日", "😀", "0", " ", "ab", "\u00ff")

  /** `n` seeded rows of [[generatedSchema]]. `cat` holds only even-numbered categories "c00".."c38". */
  private def generatedRows(n: Int, r: Random): Seq[Row] = {
    def maybe[T](nullPercent: Int)(v: => T): Any = if (r.nextInt(100) < nullPercent) null else v
    def special[T](normal: => T, specials: IndexedSeq[T]): T = if (r.nextInt(100) < 10) specials(r.nextInt(specials.size)) else normal
    (0 until n).map { i =>
      Row(
        i.toLong,
        maybe(5)(r.nextInt(2001) - 1000),
        maybe(3)(special(r.nextLong() % 1000000000000L, IndexedSeq(Long.MinValue, Long.MaxValue, 0L, -1L))),
        maybe(5)((r.nextInt(65536) - 32768).toShort),
        maybe(5)((r.nextInt(256) - 128).toByte),
        maybe(5)(special((r.nextInt(20001) - 10000) / 8.0,
          IndexedSeq(Double.NaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity, Double.MinPositiveValue))),
        maybe(5)(special((r.nextInt(20001) - 10000) / 4.0f,
          IndexedSeq(Float.NaN, -0.0f, 0.0f, Float.PositiveInfinity, Float.NegativeInfinity))),
        maybe(5)(Seq.fill(r.nextInt(6))(alphabet(r.nextInt(alphabet.size))).mkString),
        maybe(2)(f"c${2 * r.nextInt(20)}%02d"),
        maybe(5)(JBigDecimal.valueOf(r.nextInt(2000001) - 1000000L, 2)),
        maybe(5)(JBigDecimal.valueOf(r.nextLong() % 1000000000000000L, 3)),
        maybe(5)(new JBigDecimal(new BigInteger(80, r.self).subtract(BigInteger.ONE.shiftLeft(79)), 5)),
        maybe(5)(if (r.nextInt(100) == 0) LocalDate.of(1200, 3, 1).plusDays(r.nextInt(100)) else LocalDate.ofEpochDay(r.nextInt(60000) - 20000L)),
        maybe(5)(Instant.ofEpochSecond(r.nextInt(2000000000) - 1000000000L, r.nextInt(1000000) * 1000L)),
        maybe(5)(LocalDateTime.ofEpochSecond(r.nextInt(2000000000) - 1000000000L, r.nextInt(1000000) * 1000, ZoneOffset.UTC)),
        maybe(5)(r.nextBoolean()),
        maybe(5)(Array.fill(r.nextInt(5))(r.nextInt(256).toByte)))
    }
  }

  private val generatedRowCount = 3000

  /** Writes the generated rows (sorted by `sortBy` if given) to one file with `options`. */
  private def generated(label: String, sortBy: Option[String], timestampType: String, options: (String, String)*): Table = {
    val t0 = System.nanoTime()
    val dir = newDir(label)
    val r = new Random(seed ^ label.hashCode)
    withConf("spark.sql.parquet.outputTimestampType" -> timestampType) {
      val df = spark.createDataFrame(generatedRows(generatedRowCount, r).asJava, generatedSchema).coalesce(1)
      val sorted = sortBy.fold(df)(c => df.sortWithinPartitions(c))
      val opts = options.toMap
      opts.get(RowGroupRows) match {
        case Some(n) => lmspark.testutil.WriterLayouts.writeRowGroups(sorted, dir, n.toInt, opts - RowGroupRows)
        case None => sorted.write.options(opts).parquet(dir)
      }
    }
    times.loadNanos += System.nanoTime() - t0
    load(label, dir, sortedBy = sortBy)
  }

  /** Row groups of `rowGroupRows` rows (the `generated` writer reads this pseudo-option), pages of at
    * most `pageRows`. */
  private def smallPages(rowGroupRows: Int, pageRows: Int): Seq[(String, String)] = Seq(
    RowGroupRows -> rowGroupRows.toString,
    "parquet.page.row.count.limit" -> pageRows.toString,
    "parquet.page.size" -> "4096")
  private val RowGroupRows = "lmspark.test.rowGroupRows"

  private def blooms(columns: String*): Seq[(String, String)] =
    columns.flatMap(c => Seq(s"parquet.bloom.filter.enabled#$c" -> "true", s"parquet.bloom.filter.expected.ndv#$c" -> "1000"))

  private lazy val sortedInt = generated("sorted-k-dictionary", Some("k"), "INT96",
    (smallPages(1000, 100) ++ blooms("k", "s") :+ ("parquet.enable.dictionary" -> "true")): _*)
  private lazy val sortedString = generated("sorted-s-plain-v2", Some("s"), "TIMESTAMP_MICROS",
    (smallPages(1000, 50) ++ blooms("s") ++ Seq("parquet.enable.dictionary" -> "false", "parquet.writer.version" -> "v2")): _*)
  private lazy val unsorted = generated("unsorted-plain-blooms", None, "TIMESTAMP_MILLIS",
    (smallPages(1000, 100) ++ blooms("l", "s", "dec18", "k", "d") :+ ("parquet.enable.dictionary" -> "false")): _*)
  private lazy val sortedDouble = generated("sorted-d-dictionary-fallback", Some("d"), "TIMESTAMP_MICROS",
    (smallPages(1000, 100) ++ Seq("parquet.enable.dictionary" -> "true", "parquet.dictionary.page.size" -> "1024")): _*)
  private lazy val sortedDate = generated("sorted-dt-odd-pages", Some("dt"), "INT96",
    (smallPages(1300, 77) :+ ("parquet.enable.dictionary" -> "true")): _*)

  // ---- running queries ----

  private val failures = ArrayBuffer.empty[String]
  private var queriesRun = 0

  private def metric(p: SparkPlan, name: String): Long = lmScans(p).map(_.metrics(name).value).sum

  private val prunedRowGroupMetrics = Seq(LmMetrics.PrunedByStatistics, LmMetrics.PrunedByDictionary,
    LmMetrics.PrunedByBloomFilter, LmMetrics.PrunedByGuarantee, LmMetrics.PrunedByPageIndex)

  /** Metric problems of one lmspark run under `combo`. */
  private def metricProblems(p: SparkPlan, t: Table, combo: Combo, expectPruning: Boolean): Seq[String] = {
    val out = ArrayBuffer.empty[String]
    if (lmScans(p).isEmpty) {
      // No scan at all is fine (the optimizer proved the filter false); Spark's scan is not.
      if (t.readByLmspark && sparkParquetScans(p).nonEmpty) out += s"lmspark's scan was not used:\n$p"
      return out.toSeq
    }
    def m(name: String) = metric(p, name)
    def text = lmScans(p).head.metrics.toSeq.sortBy(_._1).map { case (k, v) => s"$k=${v.value}" }.mkString(", ")
    if (t.readByLmspark && m(LmMetrics.FilesFallback) != 0) out += s"a file was handed to Spark's reader ($text)"
    if (m(LmMetrics.PagesRead) > m(LmMetrics.PagesTotal)) out += s"more pages read than there are ($text)"
    if (prunedRowGroupMetrics.map(m).sum > m(LmMetrics.RowGroupsTotal)) out += s"more row groups pruned than there are ($text)"
    if (m(LmMetrics.FilesFallback) == 0 && m(LmMetrics.RowGroupsRead) > m(LmMetrics.RowGroupsTotal))
      out += s"more row groups read than there are ($text)"
    if (combo.off(LmConf.PAGE_INDEX.key) && (m(LmMetrics.PagesPruned) != 0 || m(LmMetrics.PrunedByPageIndex) != 0))
      out += s"pages pruned with the page index off ($text)"
    if (combo.off(LmConf.PRUNING_STATISTICS.key) && m(LmMetrics.PrunedByStatistics) != 0)
      out += s"row groups pruned by statistics with statistics off ($text)"
    if (combo.off(LmConf.PRUNING_DICTIONARY.key) && m(LmMetrics.PrunedByDictionary) != 0)
      out += s"row groups pruned by dictionary with dictionary pruning off ($text)"
    if (combo.off(LmConf.PRUNING_BLOOM_FILTER.key) && m(LmMetrics.PrunedByBloomFilter) != 0)
      out += s"row groups pruned by bloom filter with bloom filters off ($text)"
    if (combo.off(LmConf.PRUNING_GUARANTEES.key) && (m(LmMetrics.PrunedByGuarantee) != 0 || m(LmMetrics.ConjunctsRemoved) != 0))
      out += s"guarantees used with guarantees off ($text)"
    if (expectPruning && m(LmMetrics.PagesPruned) == 0 && prunedRowGroupMetrics.forall(m(_) == 0))
      out += s"a selective predicate on the sorted column pruned nothing ($text)"
    out.toSeq
  }

  private val times = new DiffTimes

  /**
   * Runs `where` / `select` on `t` with every pruning flag on and under each of `others`; records a failure
   * (with the seed and the SQL) when lmspark's rows differ from the reference or a metric is off.
   * `expectPruning`: the run with every flag on must prune something. Returns lmspark's plan of the
   * all-on run, if it ran.
   */
  private def check(t: Table, where: String, select: Seq[String], others: Seq[Combo] = variants,
      expectPruning: Boolean = false): Option[SparkPlan] = {
    queriesRun += 1
    val sql = s"SELECT ${select.mkString(", ")} FROM parquet.`${t.path}` WHERE $where" +
      t.schema.fold("")(s => s"  -- read with schema: $s")
    def df = t.read.where(where).selectExpr(select: _*)
    val expected = Try(normalized(times.timed(reference = true)(t.reference.where(where).selectExpr(select: _*).collect()))) match {
      case Success(rows) => rows
      case Failure(e) =>
        failures += s"[seed $seed] ${t.label}: the reference query failed (a generator bug): $e\n    $sql"
        return None
    }
    var allOnPlan: Option[SparkPlan] = None
    for (combo <- allOn +: others) withConf(("spark.lmspark.enabled" -> "true") +: combo.conf: _*) {
      val d = df
      val problems = Try(normalized(times.timed(reference = false)(d.collect()))) match {
        case Failure(e) => Seq(s"lmspark failed: ${Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).toSeq.last}")
        case Success(rows) if rows != expected =>
          Seq(s"lmspark's rows differ from Spark's: ${rows.size} vs ${expected.size}; only in lmspark: " +
            s"${rows.diff(expected).take(3)}; only in Spark: ${expected.diff(rows).take(3)}")
        case Success(_) =>
          val p = d.queryExecution.executedPlan
          if (combo == allOn) allOnPlan = Some(p)
          metricProblems(p, t, combo, expectPruning && combo == allOn)
      }
      problems.foreach(p => failures += s"[seed $seed] ${t.label} (${combo.name}): $p\n    $sql")
    }
    allOnPlan
  }

  private def projection(t: Table, r: Random): Seq[String] =
    if (r.nextInt(10) < 4) Seq("*")
    else r.shuffle(t.columns).take(1 + r.nextInt(4)).map(_.sql)

  /** `n` random queries on `t` (plus `selective` narrow ones on its sort column, which must prune). */
  private def randomQueries(t: Table, n: Int, selective: Int = 0): Unit = {
    val r = new Random(seed ^ (t.label.hashCode * 31L))
    val gen = new RandomPredicates(t.columns, r)
    for (i <- 0 until n)
      check(t, gen.predicate(depth = r.nextInt(3), focus = t.sortedBy), projection(t, r))
    for (_ <- 0 until selective; c <- t.sortedBy; sel <- gen.selectiveRange(c))
      check(t, sel.sql, projection(t, r), expectPruning = pruningProvable(t, c, sel))
  }

  /**
   * Whether the file's row-group statistics prove that `sel` on the sorted column `column` selects
   * no row of some row group, under Spark's ordering, where NaN is above every value. For integral,
   * string, decimal and date columns a narrow predicate on the sorted column always does. A
   * floating column is different: writers leave NaN out of min / max, so a row group whose max is
   * below `lo` may still hold a NaN, which passes `column >= lo`, and only `column <= hi` (a row
   * group whose min is above `hi`), an equality (either side) or a row group of NULLs prove
   * anything. A selective range in the last row group, with every other row group below it, then
   * cannot be pruned by any sound reader.
   */
  private def pruningProvable(t: Table, column: String, sel: lmspark.testutil.Selective): Boolean =
    t.columns.find(_.name == column).map(_.dataType) match {
      case Some(DoubleType | FloatType) =>
        def num(v: Any): Double = v.asInstanceOf[Number].doubleValue
        val reader = ParquetFileReader.open(new LocalInputFile(parquetFile(t.path)))
        try reader.getFooter.getBlocks.asScala.exists { block =>
          block.getColumns.asScala.find(_.getPath.toDotString == column).exists { chunk =>
            val st = chunk.getStatistics
            if (st == null || st.isEmpty) false
            else if (st.isNumNullsSet && st.getNumNulls == block.getRowCount) true
            else st.hasNonNullValue && (num(st.genericGetMin) > num(sel.hi) ||
              (sel.equality && num(st.genericGetMax) < num(sel.lo)))
          }
        } finally reader.close()
      case _ => true
    }

  private def assertNoFailures(): Unit = {
    // Wrong answers first: they matter most.
    val all = failures.toList.sortBy(f => !(f.contains("rows differ") || f.contains("lmspark failed") || f.contains("reference")))
    failures.clear()
    if (all.nonEmpty) {
      // Each kind of problem counted (the text before its metrics or its SQL), then the first cases.
      val kinds = all.map(_.split(": ", 2).last.takeWhile(c => c != '(' && c != '\n').trim)
        .groupBy(identity).toSeq.sortBy(-_._2.size).map { case (k, v) => s"${v.size} x $k" }
      fail(s"${all.size} failures (seed $seed; rerun with LMSPARK_TEST_SEED=$seed): ${kinds.mkString("; ")}\n" +
        all.take(12).mkString("\n"))
    }
  }

  override protected def afterAll(): Unit = {
    try println(s"PruningDifferentialSuite: $queriesRun queries, seed $seed; ${times.summary}")
    finally super.afterAll()
  }

  // ---- tests ----

  test("generated, sorted by an int column, dictionary pages, bloom filters") {
    info(s"seed $seed")
    randomQueries(sortedInt, 26, selective = 4)
    assertNoFailures()
  }

  test("generated, sorted by a non-ASCII string column, plain v2 pages of 50 rows") {
    randomQueries(sortedString, 26, selective = 4)
    assertNoFailures()
  }

  test("generated, unsorted, plain pages, bloom filters on five columns") {
    randomQueries(unsorted, 26)
    assertNoFailures()
  }

  test("generated, sorted by a double column with NaN / ±0.0 / ±Infinity, dictionary falling back") {
    randomQueries(sortedDouble, 26, selective = 4)
    assertNoFailures()
  }

  test("generated, sorted by a date column, row groups of 1300 rows, pages of 77") {
    randomQueries(sortedDate, 26, selective = 4)
    assertNoFailures()
  }

  /** Corpus files with page indexes (see catalogue.csv), bloom filters, or statistics worth trusting
    * or not; a schema where Spark cannot read every column (FLOAT16, GEOGRAPHY). */
  private val corpus: Seq[(String, Option[String], Int)] = Seq(
    ("alltypes_tiny_pages.parquet", None, 16),
    ("alltypes_tiny_pages_plain.parquet", None, 16),
    ("int32_with_null_pages.parquet", None, 12),
    ("binary_truncated_min_max.parquet", None, 10),
    ("data_index_bloom_encoding_stats.parquet", None, 6),
    ("data_index_bloom_encoding_with_length.parquet", None, 6),
    ("fixed_length_byte_array.parquet", None, 8),
    ("hadoop_lz4_compressed_larger.parquet", None, 6),
    ("dict-page-offset-zero.parquet", None, 4),
    ("plain-dict-uncompressed-checksum.parquet", None, 5),
    ("rle-dict-snappy-checksum.parquet", None, 5),
    ("datapage_v2_empty_datapage.snappy.parquet", None, 3),
    ("floating_orders_nan_count.parquet", Some("float_ieee754 float, float_typedef float, double_ieee754 double, double_typedef double"), 12),
    ("geospatial/geography-points.parquet", Some("id bigint"), 8),
    ("nan_in_stats.parquet", None, 5),
    ("sort_columns.parquet", None, 4),
    ("int32_decimal.parquet", None, 4),
    ("fixed_length_decimal.parquet", None, 4))

  for ((name, schema, n) <- corpus) {
    test(s"corpus: $name") {
      val file = CodecFixtures.corpus(name)
      def read = schema.fold(spark.read)(s => spark.read.schema(s)).parquet(file.toString)
      // A line whose parquet-java predates a type in the file (GEOGRAPHY before 1.16) cannot read
      // it. lmspark declines the column of that type and may read the others; then it must return
      // every row the footer counts (the corpus pytest checks its values against pyarrow).
      scala.util.Try(referenceRows(read)).failed.toOption match {
        case Some(vanilla) =>
          scala.util.Try(withConf("spark.lmspark.enabled" -> "true")(read.collect())).toOption match {
            case Some(rows) =>
              val s = lmspark.testutil.MetadataSurgery.open(file)
              val total = (0 until s.rowGroups).map(s.rowCount).sum
              assert(rows.length.toLong == total, s"lmspark read ${rows.length} of the $total rows where vanilla fails")
              info(s"vanilla Spark on this line cannot read it (${vanilla.getClass.getSimpleName}); lmspark read all $total rows")
            case None => info(s"vanilla Spark on this line cannot read it, nor can lmspark")
          }
        case None =>
          randomQueries(load(name, file.toString, schema, readByLmspark = false), n)
          assertNoFailures()
      }
    }
  }

  // ---- each mechanism prunes where it should, and only when switched on ----

  /** The all-on plan of `where` on `t`, checked as every query is; and the run with `flag` off. */
  private def prunes(t: Table, where: String, flag: String, counters: String*): Unit = {
    val plan = check(t, where, Seq("*"), Seq(Combo(s"$flag off", flags(flag))))
    assertNoFailures()
    assert(plan.exists(p => counters.exists(metric(p, _) > 0)),
      s"none of ${counters.mkString(", ")} counted: $where on ${t.label}\n$plan")
  }

  test("a bloom filter prunes row groups that cannot hold an absent value") {
    val l = unsorted.columns.find(_.name == "l").get
    val present = l.nonNull.toSet
    val r = new Random(seed)
    val (lo, hi) = (-500000000000L, 500000000000L)
    val absent = Iterator.continually(lo + (r.nextDouble() * (hi - lo)).toLong).filterNot(present).take(3).toSeq
    prunes(unsorted, s"l = ${absent.head}L", LmConf.PRUNING_BLOOM_FILTER.key, LmMetrics.PrunedByBloomFilter)
    prunes(unsorted, s"l IN (${absent.map(_ + "L").mkString(", ")})", LmConf.PRUNING_BLOOM_FILTER.key, LmMetrics.PrunedByBloomFilter)
  }

  test("a bloom filter's narrowed IN list prunes pages inside a row group it keeps, before the filter pass") {
    // sortedString: s sorted (NULLs first), row groups of 1000 rows, plain pages, a bloom filter on s
    // (parquet-java writes none for a dictionary-encoded chunk).
    val t = sortedString
    val s = t.columns.find(_.name == "s").get
    val v = s.values.map(x => if (x == null) null else x.toString)
    def rowGroup(i: Int) = i / 1000
    def page(i: Int) = s.pageStarts.lastIndexWhere(_ <= i)
    val at = v.indices.find(i => v(i) != null && rowGroup(i) == 1 && page(i) - page(1000) == 1).get
    // Strings missing from the file inside the bounds of a later page of the same row group (x +
    // U+0001 sorts right after x, and no value holds U+0001): the column index keeps that page for
    // them, the bloom filter (false positives aside) does not.
    val absent = v.indices.filter(j => j + 1 < v.size && v(j) != null && rowGroup(j + 1) == 1 &&
      page(j) == page(j + 1) && page(j) - page(at) >= 2 && v(j + 1) != v(j)).map(j => v(j) + "\u0001").distinct.take(3)
    assert(absent.nonEmpty && !v.exists(x => x != null && x.contains("\u0001")))
    def literal(x: String) = "'" + x.replace("\u0001", "\\u0001") + "'"
    val where = s"s IN (${(v(at) +: absent).map(literal).mkString(", ")})"
    check(t, where, Seq("*"), Seq(Combo("bloom filters off", flags(LmConf.PRUNING_BLOOM_FILTER.key))))
    assertNoFailures()
    // The filter pass decodes the narrowed list's pages only, and the scan reads fewer bytes.
    def read(conf: Seq[(String, String)]): (Long, Long) = withConf(("spark.lmspark.enabled" -> "true") +: conf: _*) {
      val d = t.read.where(where)
      assert(d.collect().length == v.count(_ == v(at)))
      val p = d.queryExecution.executedPlan
      (metric(p, LmMetrics.PredicatePagesDecoded), metric(p, LmMetrics.BytesRead))
    }
    val (pagesOn, bytesOn) = read(allOn.conf)
    val (pagesOff, bytesOff) = read(flags(LmConf.PRUNING_BLOOM_FILTER.key))
    assert(pagesOn < pagesOff && bytesOn < bytesOff,
      s"$where: the filter pass decoded $pagesOn pages ($bytesOn bytes read) with bloom filters, $pagesOff ($bytesOff) without")
  }

  test("a dictionary prunes row groups that do not hold a category inside their min / max") {
    prunes(sortedInt, "cat = 'c13'", LmConf.PRUNING_DICTIONARY.key, LmMetrics.PrunedByDictionary)
    prunes(sortedInt, "cat IN ('c01', 'c17', 'c33')", LmConf.PRUNING_DICTIONARY.key, LmMetrics.PrunedByDictionary)
  }

  test("guarantees remove conjuncts that statistics prove true") {
    val k = sortedInt.columns.find(_.name == "k").get
    prunes(sortedInt, s"id >= 0 AND k = ${k.nonNull(k.nonNull.size / 2)}", LmConf.PRUNING_GUARANTEES.key, LmMetrics.ConjunctsRemoved)
  }

  test("statistics and page indexes prune a sorted file") {
    val k = sortedInt.columns.find(_.name == "k").get
    val v = k.nonNull(k.nonNull.size / 3)
    // Statistics or the guarantees built from them, whichever the scan consults first.
    prunes(sortedInt, s"k = $v", LmConf.PRUNING_STATISTICS.key, LmMetrics.PrunedByStatistics, LmMetrics.PrunedByGuarantee)
    prunes(sortedInt, s"k = $v", LmConf.PAGE_INDEX.key, LmMetrics.PagesPruned)
  }
}
