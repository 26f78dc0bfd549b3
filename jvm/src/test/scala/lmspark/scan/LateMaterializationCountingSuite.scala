package lmspark.scan

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.LmConf
import lmspark.plan.LmMetrics
import lmspark.testutil.LmSparkSession

/** Counts what late materialization decodes, against counts taken from the data itself (vanilla
  * Spark with pushdown off) and from parquet-java's footer and offset indexes:
  *  - a projected column that is not filtered is decoded only for the rows that pass;
  *  - a column both filtered and projected is decoded once (the predicate cache), or twice for the
  *    passing rows when the cache is off or evicts it;
  *  - the output-only columns read only the pages holding a passing row, even where the page index
  *    prunes nothing;
  *  - the decode-whole rule reads dense row groups whole, and its knobs switch it.
  * Every query's rows also equal vanilla Spark's with filter pushdown off. */
class LateMaterializationCountingSuite extends AnyFunSuite with LmSparkSession {

  private val Rows = 120000L

  /** `a`: 1,000 values spread over every page (no page or row group can be pruned on it); `k`: 7 only
    * in rows [50000, 51000), else 0 or 1000 alternating (every page's bounds include 7); `b` strings,
    * `c` doubles. Several row groups, pages of at most 2,000 rows. */
  private lazy val file: File = {
    val dir = newDir("lm-counting")
    spark.range(0, Rows, 1, 1)
      .select(col("id"), (col("id") * 7919 % 1000).cast("int").as("a"),
        when(col("id").between(50000, 50999), lit(7)).otherwise((col("id") % 2) * 1000).cast("int").as("k"),
        concat(lit("s"), (col("id") % 5000).cast("string")).as("b"), (col("id") / 3.0).as("c"))
      .write
      .option("parquet.block.size", 512 * 1024)
      .option("parquet.page.row.count.limit", 2000)
      .parquet(dir)
    new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
  }

  /** Late materialization in every row group (the decode-whole rule never fires). */
  private val alwaysLate = Seq(LmConf.LM_DENSE_FRACTION.key -> "1", LmConf.LM_SCATTERED_FRACTION.key -> "1")

  private def table: DataFrame = spark.read.parquet(file.getAbsolutePath)

  private def rowGroups: Int = {
    val r = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), new Configuration()))
    try r.getFooter.getBlocks.size finally r.close()
  }

  private def count(where: String): Long =
    withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
      table.where(where).count()
    }

  /** Runs the query (checking its rows against vanilla Spark) and returns lmspark's metrics. */
  private def run(where: String, columns: Seq[String]): Map[String, Long] = {
    def query: DataFrame = table.where(where).select(columns.map(col): _*)
    val plan = checkSparkAnswerAndLmUsed(query)
    val scans = lmScans(plan)
    assert(scans.size == 1)
    scans.head.metrics.map { case (k, m) => k -> m.value }
  }

  test("an output-only column is decoded only for passing rows; a filtered column once") {
    assert(rowGroups > 1)
    val passing = count("a = 7")
    assert(passing > 0 && passing < Rows / 100)
    withConf(alwaysLate: _*) {
      val m = run("a = 7", Seq("a", "b", "c"))
      assert(m(LmMetrics.RowsScanned) == Rows)
      assert(m(LmMetrics.RowsPassingPrefix + "a") == passing)
      assert(m(LmMetrics.ValuesDecoded) == Rows + 2 * passing, "a decoded once over all rows, b and c for passing rows")
      assert(m(LmMetrics.CacheHits) == passing)
      assert(m(LmMetrics.CacheEvictions) == 0)
      assert(m(LmMetrics.RowsMaterialized) == passing)
      assert(m(LmMetrics.RowGroupsLate) == rowGroups)
      assert(m(LmMetrics.RowGroupsWhole) == 0)
      assert(m("numOutputRows") == passing)
    }
  }

  test("without the predicate cache, or when it evicts, the filtered column is decoded again for passing rows") {
    val passing = count("a = 7")
    withConf(alwaysLate :+ (LmConf.PREDICATE_CACHE_MAX_BYTES.key -> "0"): _*) {
      val m = run("a = 7", Seq("a", "b", "c"))
      assert(m(LmMetrics.ValuesDecoded) == Rows + 3 * passing)
      assert(m(LmMetrics.CacheHits) == 0)
    }
    // The cache keeps only the rows that passed: a bound of one byte evicts `a` at its first
    // kept row in every row group.
    withConf(alwaysLate :+ (LmConf.PREDICATE_CACHE_MAX_BYTES.key -> "1"): _*) {
      val m = run("a = 7", Seq("a", "b", "c"))
      assert(m(LmMetrics.ValuesDecoded) == Rows + 3 * passing)
      assert(m(LmMetrics.CacheEvictions) == rowGroups, "one eviction of a per row group")
    }
  }

  test("a column filtered but not projected by the query is still decoded once") {
    val passing = count("a = 7")
    withConf(alwaysLate: _*) {
      // Spark's Filter above the scan needs `a`, so the scan outputs it: from the cache.
      val m = run("a = 7", Seq("c"))
      assert(m(LmMetrics.ValuesDecoded) == Rows + passing)
      assert(m(LmMetrics.CacheHits) == passing)
    }
  }

  test("output-only columns read only the pages holding a passing row, where the page index prunes nothing") {
    val passing = count("k = 7")
    assert(passing == 1000)
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), new Configuration()))
    // Row groups without a 7 are pruned by their dictionaries; in the others, every page of k is
    // decoded (its page index can exclude none) and b and c read only the pages holding a passing row.
    val (groupRows, kPages, neededPages) = try {
      var first = 0L
      var scanned = 0L
      var kp = 0
      var needed = 0
      reader.getFooter.getBlocks.asScala.foreach { block =>
        val rows = block.getRowCount
        if (first < 51000 && 50000 < first + rows) {
          scanned += rows
          block.getColumns.asScala.foreach { c =>
            val oi = reader.readOffsetIndex(c)
            val name = c.getPath.toDotString
            if (name == "k") kp += oi.getPageCount
            if (name == "b" || name == "c") (0 until oi.getPageCount).foreach { i =>
              val (s, e) = (first + oi.getFirstRowIndex(i), first + oi.getLastRowIndex(i, rows) + 1)
              if (s < 51000 && 50000 < e) needed += 1
            }
          }
        }
        first += rows
      }
      (scanned, kp, needed)
    } finally reader.close()
    withConf(alwaysLate: _*) {
      val m = run("k = 7", Seq("k", "b", "c"))
      assert(m(LmMetrics.RowsScanned) == groupRows, m)
      assert(m(LmMetrics.PredicatePagesDecoded) == kPages, m)
      assert(m(LmMetrics.PagesRead) == neededPages, s"b and c: only the pages holding rows 50000..50999; $m")
      assert(m(LmMetrics.ValuesDecoded) == groupRows + 2 * passing, m)
    }
  }

  test("decode-whole rule: dense row groups are read whole, and its knobs switch it") {
    val groups = rowGroups
    // Every row passes `a >= 0` (guarantees off, so that statistics do not remove the conjunct): after
    // the first row group the rule reads whole, exploring every 4th.
    val noGuarantees = LmConf.PRUNING_GUARANTEES.key -> "false"
    withConf(LmConf.LM_EXPLORE_EVERY.key -> "4", noGuarantees) {
      val m = run("a >= 0", Seq("a", "b"))
      assert(m(LmMetrics.RowGroupsLate) + m(LmMetrics.RowGroupsWhole) == groups)
      val whole = groups - 1
      assert(m(LmMetrics.RowGroupsWhole) == whole - whole / 4)
      assert(m(LmMetrics.ValuesDecoded) == 2 * Rows, "dense: every value decoded once either way")
    }
    withConf(LmConf.LM_DENSE_FRACTION.key -> "1", LmConf.LM_SCATTERED_FRACTION.key -> "1", noGuarantees) {
      val m = run("a >= 0", Seq("a", "b"))
      assert(m(LmMetrics.RowGroupsLate) == groups)
      assert(m(LmMetrics.RowGroupsWhole) == 0)
    }
    withConf(LmConf.LATE_MATERIALIZATION.key -> "false") {
      val m = run("a = 7", Seq("a", "b", "c"))
      assert(m(LmMetrics.RowGroupsLate) == 0)
      assert(m(LmMetrics.ValuesDecoded) == 3 * Rows)
    }
  }

  test("a row group whose statistics prove the whole predicate is read with no filtering") {
    val footer = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), new Configuration()))
    val groupRows = try footer.getFooter.getBlocks.asScala.map(_.getRowCount).toSeq finally footer.close()
    assert(groupRows.size > 2)
    // `id` is sorted: row group 0 lies wholly inside the range, row group 1 straddles its end, the
    // rest lie past it.
    val end = groupRows.head + groupRows(1) / 2
    withConf(alwaysLate: _*) {
      val m = run(s"id >= 0 AND id < $end", Seq("id", "b"))
      assert(m(LmMetrics.RowGroupsLate) == 1, "only the straddling row group is filtered")
      assert(m(LmMetrics.RowGroupsWhole) == 0)
      // Only row group 1's rows are filtered (those of its pages the page index keeps).
      val scanned = m(LmMetrics.RowsScanned)
      assert(scanned >= end - groupRows.head && scanned <= groupRows(1), s"$scanned rows filtered")
      assert(m(LmMetrics.PrunedByStatistics) == groupRows.size - 2)
      assert(m("numOutputRows") == end)
    }
  }

  test("the dictionary path and the value path agree, and dictionary predicates decode the same values") {
    val passing = count("b IN ('s17', 's4999') OR b LIKE 's12%'")
    assert(passing > 0)
    for (dict <- Seq("true", "false")) withConf(alwaysLate :+ (LmConf.DICTIONARY_PREDICATES.key -> dict): _*) {
      val m = run("b IN ('s17', 's4999') OR b LIKE 's12%'", Seq("b", "c"))
      assert(m(LmMetrics.RowsPassingPrefix + "b") == passing)
      assert(m(LmMetrics.ValuesDecoded) == m(LmMetrics.RowsScanned) + passing, m)
      assert(m(LmMetrics.RowsScanned) <= Rows, m)
    }
  }

  test("the selection policy decides how output columns walk a scattered selection: a mask decodes whole stretches, on the same pages") {
    val passing = count("a = 7")
    def metrics(policy: String): Map[String, Long] =
      withConf(alwaysLate :+ (LmConf.SELECTION_POLICY.key -> policy): _*) { run("a = 7", Seq("b", "c")) }
    val selectors = metrics("selectors")
    val mask = metrics("mask")
    // Runs: b and c are decoded for the passing rows only.
    assert(selectors(LmMetrics.ValuesDecoded) == Rows + 2 * passing, selectors)
    // A mask: each stretch from a passing row to the batch's last one is decoded (passing rows are
    // about 1,000 rows apart), and only the passing rows are kept.
    assert(mask(LmMetrics.ValuesDecoded) > Rows + 2 * passing, mask)
    assert(mask(LmMetrics.NumOutputRows) == selectors(LmMetrics.NumOutputRows))
    // Pages without a passing row are never read, whichever way the selection is walked.
    assert(mask(LmMetrics.PagesRead) == selectors(LmMetrics.PagesRead))
    assert(mask(LmMetrics.BytesRead) == selectors(LmMetrics.BytesRead))
  }
}
