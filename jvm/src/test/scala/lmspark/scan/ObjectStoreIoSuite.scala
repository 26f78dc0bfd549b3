package lmspark.scan

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.LmConf
import lmspark.plan.LmMetrics
import lmspark.testutil.{LmSparkSession, SimulatedStore}

/** Requests to an object store, counted by the simulated store ([[SimulatedStore]]: every request
  * pays a latency; on Hadoop 3.4+ its streams take vectored reads and run their ranges in parallel,
  * as S3A does). The latency is set to 0 here: only counts are checked, never times.
  *
  * Per query shape: lmspark's answer equals vanilla Spark's, and it sends no more requests than
  * vanilla Spark (filter pushdown on, as users run it) for the same query; a point lookup on a file
  * with page indexes takes three round trips (footer, page indexes, the selected pages), and a
  * repeated one, with the metadata cache, one; a row group read filter-first takes one round trip
  * per stage. */
class ObjectStoreIoSuite extends AnyFunSuite with LmSparkSession {

  /** One split per file (each split reads its footer, in vanilla Spark as in lmspark); the
    * metadata cache off but where a test turns it on, so that counts are those of a first query. */
  override protected def sparkConf: Map[String, String] = SimulatedStore.conf(latencyMs = 0.0, mbPerSec = 1e6) ++
    Map("spark.sql.files.maxPartitionBytes" -> "1g", "spark.sql.files.minPartitionNum" -> "1",
      lmspark.LmConf.METADATA_CACHE_MAX_BYTES.key -> "0")

  private val rows = 400000L

  /** One file of four row groups, sorted by `id`, pages of 5000 rows, page indexes; `k` is
    * dictionary-encoded. */
  private lazy val file: File = lmspark.testutil.SortedKeyTable.write(spark, newDir("store"), rows, 5000)

  private def table: DataFrame = spark.read.parquet("simstore://" + file.getAbsolutePath)

  /** Requests the store saw while `df` ran (the DataFrame is built, so its schema known, before). */
  private def requests(df: DataFrame): (Long, SparkPlan) = {
    SimulatedStore.reset()
    df.collect()
    (SimulatedStore.requests.get(), df.queryExecution.executedPlan)
  }

  private def metric(plan: SparkPlan, name: String): Long = lmScans(plan).map(_.metrics(name).value).sum

  /** lmspark's answer is vanilla's; returns (lmspark's requests, vanilla's requests, lmspark's plan). */
  private def measure(query: DataFrame => DataFrame): (Long, Long, SparkPlan) = {
    checkSparkAnswerAndLmUsed(query(table))
    val vanilla = withConf("spark.lmspark.enabled" -> "false")(requests(query(table))._1)
    val (lm, plan) = withConf("spark.lmspark.enabled" -> "true")(requests(query(table)))
    assert(lm <= vanilla, s"lmspark sent $lm requests, vanilla Spark $vanilla\n$plan")
    (lm, vanilla, plan)
  }

  test("a point lookup on a file with page indexes: three round trips, and no more requests than vanilla") {
    val (lm, vanilla, plan) = measure(_.where(col("id") === 234567L))
    // The footer, the page indexes, then the selected page of every column (which the page index
    // leaves few enough to fetch in one round trip): one request each, or fewer where ranges merge.
    assert(metric(plan, LmMetrics.IoRoundTrips) <= 3, s"round trips: ${metric(plan, LmMetrics.IoRoundTrips)}\n$plan")
    assert(lm <= 2 + 5, s"a point lookup took $lm requests (vanilla $vanilla)\n$plan")
    info(s"point lookup: lmspark $lm requests, vanilla $vanilla")
  }

  test("a repeated point lookup with the metadata cache: one round trip, for the pages only") {
    withConf(lmspark.LmConf.METADATA_CACHE_MAX_BYTES.key -> (64L << 20).toString) {
      val q = (t: DataFrame) => t.where(col("id") === 234567L)
      checkSparkAnswerAndLmUsed(q(table))
      lmspark.meta.MetadataCache.clear()
      val (cold, _) = requests(q(table))
      val (warm, plan) = requests(q(table))
      assert(metric(plan, LmMetrics.MetadataCacheMisses) == 0 && metric(plan, LmMetrics.MetadataCacheHits) >= 2, plan.toString)
      // Footer, page indexes and dictionaries come from the cache: what is left is one fetch of the
      // selected pages of every column.
      assert(metric(plan, LmMetrics.IoRoundTrips) <= 1, s"round trips: ${metric(plan, LmMetrics.IoRoundTrips)}\n$plan")
      assert(warm < cold, s"warm $warm requests, cold $cold")
      info(s"point lookup: $cold requests cold, $warm warm")
    }
  }

  test("a selective range on the sorted column: one round trip per stage") {
    val (lm, vanilla, plan) = measure(_.where(col("id").between(120000L, 121500L)).select("id", "s", "d"))
    // footer, page indexes, then per row group read: the filtered column's pages, the others' pages.
    val stages = 2 * metric(plan, LmMetrics.RowGroupsRead)
    assert(metric(plan, LmMetrics.IoRoundTrips) <= 2 + stages, s"round trips: ${metric(plan, LmMetrics.IoRoundTrips)}\n$plan")
    info(s"range: lmspark $lm requests, vanilla $vanilla")
  }

  test("a filter on a dictionary column read filter-first: one round trip per stage in every row group") {
    val (lm, vanilla, plan) = measure(_.where(col("k") === 3 && col("d") < 50.0).select("id", "v", "s"))
    val groups = metric(plan, LmMetrics.RowGroupsRead)
    assert(groups == 4 && metric(plan, LmMetrics.RowGroupsLate) == 4, plan.toString)
    // footer, page indexes; per row group: dictionaries (for pruning), filtered columns, the others.
    assert(metric(plan, LmMetrics.IoRoundTrips) <= 2 + 3 * groups, s"round trips: ${metric(plan, LmMetrics.IoRoundTrips)}\n$plan")
    info(s"dictionary filter: lmspark $lm requests, vanilla $vanilla")
  }

  test("a full scan and an aggregate: no more requests than vanilla") {
    val (lm1, v1, _) = measure(_.select(sum("v"), count("s"), max("d")))
    val (lm2, v2, plan) = measure(_.orderBy(col("d").desc, col("id")).limit(10))
    // A table this small is read whole: the top-k's second pass would add round trips.
    assert(lmScans(plan).forall(s => !s.topK && s.topKNote.exists(_.contains(LmConf.TOP_K_OBJECT_STORE_MIN_BYTES.key))),
      plan.toString)
    info(s"aggregate: lmspark $lm1, vanilla $v1; top-n: lmspark $lm2, vanilla $v2")
  }

  test("a top-k on an object store: its second pass fetches the kept rows of every row group in one round trip") {
    withConf(LmConf.TOP_K_OBJECT_STORE_MIN_BYTES.key -> "0") {
      val topN = (t: DataFrame) => t.orderBy(col("d").desc, col("id")).limit(10)
      checkSparkAnswerAndLmUsed(topN(table))
      val (lm, plan) = requests(topN(table))
      val scan = lmScans(plan) match { case Seq(s) => s; case other => fail(s"one scan expected: $other\n$plan") }
      assert(scan.topK, plan.toString)
      // The first pass is a scan of the sort columns alone (which is not ranked: it reads nothing else).
      val (sortOnly, sortPlan) = requests(topN(table.select("d", "id")))
      assert(lmScans(sortPlan).forall(!_.topK), sortPlan.toString)
      val trips = metric(plan, LmMetrics.IoRoundTrips)
      val firstPass = metric(sortPlan, LmMetrics.IoRoundTrips)
      // The kept rows lie in several row groups, and the second pass still takes three round trips:
      // the footer and the page indexes (the metadata cache is off), then the pages of every row
      // group together (one per row group before).
      val groups = metric(plan, LmMetrics.RowGroupsRead) - metric(sortPlan, LmMetrics.RowGroupsRead)
      assert(groups >= 2, s"the kept rows lie in $groups row groups\n$plan")
      assert(trips <= firstPass + 3, s"$trips round trips, $firstPass for the first pass alone\n$plan")
      // On an object store the first pass reads split by split (fetching ahead), never row group by
      // row group by statistics.
      assert(metric(plan, LmMetrics.TopKRowGroupsUnread) == 0 && metric(plan, LmMetrics.TopKPassesRepeated) == 0 &&
        metric(plan, LmMetrics.TopKRowsRanked) == rows, plan.toString)
      info(s"top-n: $trips round trips and $lm requests; the sort columns alone $firstPass and $sortOnly; " +
        s"the second pass read $groups row groups")
    }
  }

  test("a top-k on an object store with the metadata cache: one pass, one request per row group, fewer than vanilla") {
    withConf(LmConf.TOP_K_OBJECT_STORE_MIN_BYTES.key -> "0", LmConf.METADATA_CACHE_MAX_BYTES.key -> (64L << 20).toString) {
      val topN = (t: DataFrame) => t.orderBy(col("d").desc, col("id")).limit(10)
      checkSparkAnswerAndLmUsed(topN(table))
      val vanilla = withConf("spark.lmspark.enabled" -> "false")(requests(topN(table))._1)
      // Whether vanilla Spark fetched its row groups apart (parquet-java's vectored reads, as on 4.1
      // and 4.3); on 3.5 and 4.0 it reads the file through as one stream, one request for all.
      val vanillaApart = SimulatedStore.vectoredCalls.get() > 0
      lmspark.meta.MetadataCache.clear()
      val (cold, _) = requests(topN(table))
      val (warm, plan) = requests(topN(table))
      val scan = lmScans(plan) match { case Seq(s) => s; case other => fail(s"one scan expected: $other\n$plan") }
      assert(scan.topK && scan.topKOnePass, plan.toString)
      // The footer and page indexes come from the cache: each row group read is one round trip of one
      // request (its columns' chunks lie end to end), and there is no second pass.
      val groups = metric(plan, LmMetrics.RowGroupsRead)
      assert(groups == 4, plan.toString)
      assert(metric(plan, LmMetrics.IoRoundTrips) == groups && warm == groups,
        s"$warm requests in ${metric(plan, LmMetrics.IoRoundTrips)} round trips for $groups row groups\n$plan")
      // Fewer than vanilla's, where vanilla fetches each row group with a request of its own; where it
      // streams the file through, a request per row group read is more than its few (reported).
      if (vanillaApart) assert(warm < vanilla, s"lmspark sent $warm requests, vanilla Spark $vanilla\n$plan")
      // Once the top-k holds 10 rows, a row group's rows that sort after its threshold are not ranked.
      assert(metric(plan, LmMetrics.TopKRowsRanked) < rows, plan.toString)
      info(s"top-n in one pass: $warm requests warm, $cold cold, vanilla $vanilla (row groups apart: $vanillaApart); " +
        s"${metric(plan, LmMetrics.TopKRowsRanked)} of $rows rows ranked")
    }
  }

  test("a row group read filter-first whose other columns are small: one round trip, not two") {
    val q = (t: DataFrame) => t.where(col("d") < 50.0).select("k")
    checkSparkAnswerAndLmUsed(q(table))
    val (_, plan) = requests(q(table))
    // With no gap read through (and no single stage), the other column's pages are a second stage,
    // fetched after the pass.
    val (_, twoStages) = withConf(LmConf.IO_MAX_COALESCE_GAP.key -> "0", LmConf.IO_SINGLE_STAGE_MAX_BYTES.key -> "0")(
      requests(q(table)))
    val late = metric(plan, LmMetrics.RowGroupsLate)
    assert(late == 4 && metric(twoStages, LmMetrics.RowGroupsLate) == 4, plan.toString)
    assert(metric(twoStages, LmMetrics.IoRoundTrips) - metric(plan, LmMetrics.IoRoundTrips) == late,
      s"round trips: ${metric(plan, LmMetrics.IoRoundTrips)}, two stages ${metric(twoStages, LmMetrics.IoRoundTrips)}")
  }

  test("a filter-first read whose passing rows need every page: one stage from the second row group on") {
    val eight = lmspark.testutil.SortedKeyTable.write(spark, newDir("dense"), rows, 5000, rowGroups = 8)
    val path = "simstore://" + eight.getAbsolutePath
    // `d < 50` passes half the rows, all over every row group: the pass leaves no page of `s` unread.
    // With no gap read through, only the rule under test makes one stage of two.
    withConf(LmConf.IO_MAX_COALESCE_GAP.key -> "0") {
      def q = spark.read.parquet(path).where(col("d") < 50.0).select("s")
      checkSparkAnswerAndLmUsed(q)
      val vanilla = withConf("spark.lmspark.enabled" -> "false")(requests(q)._1)
      // Whether vanilla fetched its row groups apart (4.1 and later); 3.5 and 4.0 stream the file
      // through, a request per run of adjacent chunks read.
      val vanillaApart = SimulatedStore.vectoredCalls.get() > 0
      val (lm, plan) = requests(q)
      val (byStage, stagePlan) = withConf(LmConf.IO_SINGLE_STAGE_MAX_BYTES.key -> "0")(requests(q))
      val late = metric(plan, LmMetrics.RowGroupsLate)
      assert(late == 8 && metric(stagePlan, LmMetrics.RowGroupsLate) == 8, plan.toString)
      // The first row group in two stages (nothing known yet), each later one in one.
      assert(metric(stagePlan, LmMetrics.IoRoundTrips) - metric(plan, LmMetrics.IoRoundTrips) == late - 1,
        s"round trips: ${metric(plan, LmMetrics.IoRoundTrips)}, by stage ${metric(stagePlan, LmMetrics.IoRoundTrips)}\n$plan")
      // The same pages, read with fewer requests.
      assert(metric(plan, LmMetrics.PagesRead) == metric(stagePlan, LmMetrics.PagesRead), plan.toString)
      assert(lm < byStage, s"requests: $lm, by stage $byStage, vanilla $vanilla")
      if (vanillaApart) assert(lm <= vanilla, s"requests: $lm, by stage $byStage, vanilla $vanilla")
      info(s"dense filter-first: $lm requests, $byStage by stage, vanilla $vanilla (row groups apart: $vanillaApart)")
    }
    // Where the page index leaves some pages of every row group read (`id` in ranges of 30,000 of
    // its 50,000 rows) and `d < 50` keeps rows on all of them, the second stage skips the other
    // pages: the next row group keeps two stages (few candidate pages alone make one stage of two
    // below `singleStageMaxBytes`: 1 byte).
    withConf(LmConf.IO_MAX_COALESCE_GAP.key -> "0") {
      val inRanges = (1 to 4).map(g => col("id").between(g * 50000L + 10000L, g * 50000L + 40000L)).reduce(_ || _)
      def q = spark.read.parquet(path).where(inRanges && col("d") < 50.0).select("s")
      checkSparkAnswerAndLmUsed(q)
      val (_, plan) = withConf(LmConf.IO_SINGLE_STAGE_MAX_BYTES.key -> "1")(requests(q))
      val (_, stagePlan) = withConf(LmConf.IO_SINGLE_STAGE_MAX_BYTES.key -> "0")(requests(q))
      assert(metric(plan, LmMetrics.RowGroupsLate) == 4 && metric(plan, LmMetrics.PagesPruned) > 0, plan.toString)
      assert(metric(plan, LmMetrics.IoRoundTrips) == metric(stagePlan, LmMetrics.IoRoundTrips),
        s"round trips: ${metric(plan, LmMetrics.IoRoundTrips)}, by stage ${metric(stagePlan, LmMetrics.IoRoundTrips)}\n$plan")
    }
  }

  test("a filter-first read fetches the next row groups' first stages while one decodes") {
    val eight = lmspark.testutil.SortedKeyTable.write(spark, newDir("eight"), rows, 5000, rowGroups = 8)
    val path = "simstore://" + eight.getAbsolutePath
    // Two stages in every row group (no gap read through, no single stage): `d`, then `s`.
    withConf(LmConf.IO_MAX_COALESCE_GAP.key -> "0", LmConf.IO_SINGLE_STAGE_MAX_BYTES.key -> "0") {
      def q = spark.read.parquet(path).where(col("d") < 50.0).select("s")
      checkSparkAnswerAndLmUsed(q)
      val (_, plan) = requests(q)
      assert(metric(plan, LmMetrics.RowGroupsLate) == 8, plan.toString)
      val asked = SimulatedStore.asked.asScala.toIndexedSeq
      val footer = org.apache.parquet.hadoop.ParquetFileReader.open(
        org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(eight.toURI),
          spark.sessionState.newHadoopConf())).getFooter
      /** The first range asked for in row group `rg`'s chunk of `column`. */
      def firstAsked(rg: Int, column: String): Int = {
        val c = footer.getBlocks.get(rg).getColumns.asScala.find(_.getPath.toDotString == column).get
        val i = asked.indexWhere { case (o, n) => o < c.getStartingPos + c.getTotalSize && o + n > c.getStartingPos }
        assert(i >= 0, s"row group $rg's $column was never asked for")
        i
      }
      // Ahead of the second stage of row group r + 1, the first stages of row groups up to r + 4.
      (0 to 3).foreach { r =>
        assert(firstAsked(r + 4, "d") < firstAsked(r + 1, "s"),
          s"row group ${r + 4}'s filter column asked for after row group ${r + 1}'s output column")
      }
    }
  }

  test("with vectored reads and prefetch off, answers stay the same") {
    withConf(lmspark.LmConf.IO_VECTORED.key -> "false", lmspark.LmConf.IO_PREFETCH_MAX_BYTES.key -> "0") {
      checkSparkAnswerAndLmUsed(table.where(col("k") === 3 && col("d") < 50.0).select("id", "v", "s"))
      checkSparkAnswerAndLmUsed(table.where(col("id") === 234567L))
    }
  }
}
