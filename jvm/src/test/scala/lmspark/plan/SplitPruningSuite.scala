package lmspark.plan

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.column.statistics.{BinaryStatistics, LongStatistics}
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.BlockMetaData
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.io.api.Binary
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.LmConf
import lmspark.testutil.LmSparkSession

/** Split pruning at planning ([[lmspark.scan.SplitPruner]]): splits whose row groups statistics all
  * prune, or that hold no row group, are dropped before any task runs, and nothing else changes.
  *
  * The property cases: seeded random tables (files written by Spark with small row groups, the key
  * `k` sorted, clustered or random, with nulls), read with split sizes that cut files into many
  * splits, under random filters on `k` (ranges, equality, IN, IS NULL, OR of two ranges) with other
  * conjuncts and columns. Each case's rows equal vanilla Spark's (lmspark and pushdown off) with split
  * pruning on and off, and the splits dropped are exactly those an oracle finds from parquet-java's
  * own footer: the splits none of whose row groups (by midpoint) has statistics `k` could satisfy.
  * Fixed cases: a point lookup runs one task; a file rewritten in place between queries is never
  * judged by its old footer; the footer budget; a bucketed scan keeps its splits; a corrupt file
  * among the splits fails or is skipped as without split pruning.
  *
  * Packing ([[lmspark.scan.SplitPacker]], on by default) then groups the kept splits into partitions
  * by the bytes lmspark reads: the property cases check that it regroups exactly the kept splits; a
  * scan reading 2 of 24 columns runs fewer tasks with the same rows, one reading them all keeps
  * Spark's partitions, and a scan with no filter packs only from footers the driver's cache holds.
  * Under a packed scan, `input_file_*` values are vanilla's, and a corrupt page fails the query naming
  * its file or, with `ignoreCorruptFiles`, is skipped with vanilla's rows.
  *
  * `LMSPARK_TEST_SEED` (default 20261127) changes every table and case; a failure prints the seed,
  * the table and the SQL. */
class SplitPruningSuite extends AnyFunSuite with LmSparkSession {

  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.files.openCostInBytes" -> "1024",
    "spark.sql.adaptive.enabled" -> "false")

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261127L)
  private val Tables = 8
  private val CasesPerTable = 14

  private val schema = StructType(Seq(StructField("id", LongType, nullable = false), StructField("k", LongType),
    StructField("v", StringType)))

  private final case class Table(dir: String, params: String)

  /** `files` files of `k` laid out as `order` says, with row groups of about `blockBytes`. */
  private def write(name: String, r: Random, files: Int, rows: Int, order: String, blockBytes: Int): Table = {
    val keys = order match {
      case "sorted" => (0 until rows).map(i => i.toLong * 3)
      case "clustered" => (0 until rows).map(i => (i / 500).toLong * 1500 + r.nextInt(1500))
      case _ => (0 until rows).map(_ => r.nextInt(rows * 3).toLong)
    }
    val data = keys.zipWithIndex.map { case (key, i) =>
      Row(i.toLong, if (r.nextInt(20) == 0) null else key, if (r.nextInt(10) == 0) null else s"v${r.nextInt(50)}")
    }
    val dir = newDir(name)
    spark.createDataFrame(spark.sparkContext.parallelize(data, files), schema).write
      .option("parquet.block.size", blockBytes.toString)
      .option("parquet.page.row.count.limit", "500")
      .parquet(dir)
    Table(dir, s"$files files, $rows rows, k $order, row groups of ~$blockBytes bytes")
  }

  // ---- the oracle: parquet-java's footers ----

  /** Whether a row group whose `k` statistics are `s` may hold a row passing `f`. */
  private def mayMatch(f: KFilter, s: LongStatistics, rows: Long): Boolean = {
    val nulls = if (s.isNumNullsSet) s.getNumNulls else rows
    def inRange(lo: Long, hi: Long) = s.hasNonNullValue && s.getMax >= lo && s.getMin <= hi
    f match {
      case KFilter.Range(lo, hi) => inRange(lo, hi)
      case KFilter.In(vs) => vs.exists(v => inRange(v, v))
      case KFilter.IsNull => nulls > 0
      case KFilter.Outside(lo, hi) => s.hasNonNullValue && (s.getMin < lo || s.getMax > hi)
    }
  }

  /** The conjunct a case adds to its `k` filter, and whether a row group may hold a row passing it,
    * by its `id` and `v` statistics. */
  private final case class Extra(sql: String, mayMatch: BlockMetaData => Boolean)

  private def statsOf(b: BlockMetaData, column: String) =
    b.getColumns.asScala.find(_.getPath.toDotString == column).get.getStatistics

  private val extras = Seq(
    Extra("", _ => true),
    Extra(" AND v IS NOT NULL", b => { val v = statsOf(b, "v"); !v.isNumNullsSet || v.getNumNulls < b.getRowCount }),
    Extra(" AND id % 3 <> 1", _ => true),
    Extra(" AND (v = 'v7' OR id < 100)", b => {
      val v = statsOf(b, "v").asInstanceOf[BinaryStatistics]
      val id = statsOf(b, "id").asInstanceOf[LongStatistics]
      val v7 = Binary.fromString("v7")
      // Without bounds, v may be 'v7' unless its null count says every row is NULL.
      val vMay =
        if (v.hasNonNullValue) v.comparator().compare(v.genericGetMin, v7) <= 0 && v.comparator().compare(v7, v.genericGetMax) <= 0
        else !(v.isNumNullsSet && v.getNumNulls == b.getRowCount)
      vMay || !id.hasNonNullValue || id.getMin < 100
    }))

  /** The splits `(file name, start)` in which no row group (by midpoint) may hold a row passing `f`
    * and `extra`. */
  private def oracleDroppable(f: KFilter, extra: Extra, splits: Seq[(String, Long, Long)]): Set[(String, Long)] = {
    val footers = splits.map(_._1).distinct.map { p =>
      val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(p), new Configuration()))
      try p -> reader.getFooter.getBlocks.asScala.toSeq finally reader.close()
    }.toMap
    def midpoint(b: BlockMetaData) = b.getStartingPos + b.getCompressedSize / 2
    splits.filter { case (p, start, length) =>
      footers(p).filter(b => midpoint(b) >= start && midpoint(b) < start + length).forall { b =>
        !mayMatch(f, statsOf(b, "k").asInstanceOf[LongStatistics], b.getRowCount) || !extra.mayMatch(b)
      }
    }.map { case (p, start, _) => (p, start) }.toSet
  }

  private sealed trait KFilter { def sql: String }
  private object KFilter {
    final case class Range(lo: Long, hi: Long) extends KFilter { def sql = s"k >= $lo AND k <= $hi" }
    final case class In(vs: Seq[Long]) extends KFilter { def sql = s"k IN (${vs.mkString(", ")})" }
    case object IsNull extends KFilter { def sql = "k IS NULL" }
    final case class Outside(lo: Long, hi: Long) extends KFilter { def sql = s"(k < $lo OR k > $hi)" }
  }

  private def randomFilter(r: Random, maxKey: Long): KFilter = {
    def key = (r.nextDouble() * maxKey * 1.1).toLong - maxKey / 20
    r.nextInt(6) match {
      case 0 => val a = key; KFilter.Range(a, a)
      case 1 => val a = key; KFilter.Range(a, a + r.nextInt(3000))
      case 2 => val a = key; KFilter.Range(a, a + (maxKey * r.nextDouble() * 0.3).toLong)
      case 3 => KFilter.In(Seq.fill(1 + r.nextInt(3))(key).distinct)
      case 4 => KFilter.IsNull
      case _ => val a = key; KFilter.Outside(a, a + (maxKey * 0.9).toLong)
    }
  }

  private def scanOf(df: DataFrame): LmParquetScanExec = {
    val scans = lmScans(df.queryExecution.executedPlan)
    assert(scans.size == 1, df.queryExecution.executedPlan)
    scans.head
  }

  private def expected(sql: => DataFrame): Seq[String] =
    withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false")(normalized(sql.collect()))

  /** `sql` over a folder with a corrupt file `badFile`: the query fails with an error naming it, and
    * with `ignoreCorruptFiles` its rows are vanilla's (and not none). Returns the query that skipped. */
  private def failsNamingOrSkips(sql: String, badFile: String): DataFrame = {
    val e = intercept[Exception](spark.sql(sql).collect())
    assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(c => String.valueOf(c.getMessage).contains(badFile)), e)
    withConf("spark.sql.files.ignoreCorruptFiles" -> "true") {
      val df = spark.sql(sql)
      val rows = normalized(df.collect())
      assert(rows.nonEmpty && rows == expected(spark.sql(sql)))
      df
    }
  }

  (0 until Tables).foreach { t =>
    test(s"table $t: rows equal vanilla's with split pruning on and off, and the splits dropped are the oracle's") {
      val r = new Random(seed * 7919L + t)
      val order = Seq("sorted", "clustered", "random")(t % 3)
      val rows = 6000 + r.nextInt(20000)
      val table = write(s"splits-$t", r, 1 + r.nextInt(4), rows, order, Seq(4096, 16384, 65536)(r.nextInt(3)))
      val maxKey = rows * 3L
      val splitBytes = Seq("8k", "24k", "64k", "128m")(r.nextInt(4))
      withConf("spark.sql.files.maxPartitionBytes" -> splitBytes) {
        (0 until CasesPerTable).foreach { c =>
          val f = randomFilter(r, maxKey)
          val extra = extras(r.nextInt(extras.size))
          val columns = Seq("id, k, v", "k", "id", "count(*)")(r.nextInt(4))
          val sql = s"SELECT $columns FROM parquet.`${table.dir}` WHERE ${f.sql}${extra.sql}"
          val clue = s"seed $seed, table $t (${table.params}, maxPartitionBytes $splitBytes), case $c: $sql"
          withClue(clue) {
            val want = expected(spark.sql(sql))
            Seq("true", "false").foreach { on =>
              withConf(LmConf.PRUNING_SPLITS.key -> on) {
                val df = spark.sql(sql)
                assert(normalized(df.collect()) == want, s"split pruning $on")
                val outcome = scanOf(df).splitPruningOutcome
                if (on == "false") assert(outcome.isEmpty)
                else {
                  val o = outcome.get
                  val splits = o.input.flatMap(_.files).map(s => (s.toPath.toString, s.start, s.length))
                  val kept = o.kept.flatMap(_.files).map(s => (s.toPath.toString, s.start)).toSet
                  val dropped = splits.map(s => (s._1, s._2)).toSet -- kept
                  assert(dropped == oracleDroppable(f, extra, splits), o.decision)
                  assert(o.dropped == dropped.size && o.splits == splits.size)
                  assert(o.kept.indices == o.kept.map(_.index) && o.parents == o.parents.sorted.distinct)
                  // Packing (on by default) regroups exactly the kept splits.
                  scanOf(df).splitPackingOutcome.get.foreach { p =>
                    assert(p.partitions.flatMap(_.files).map(s => (s.toPath.toString, s.start)).sorted ==
                      o.kept.flatMap(_.files).map(s => (s.toPath.toString, s.start)).sorted, p.decision)
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  test("a point lookup on a table of many splits runs one task, and EXPLAIN and the metrics say what was dropped") {
    val table = write("point", new Random(seed), 4, 40000, "sorted", 8192)
    withConf("spark.sql.files.maxPartitionBytes" -> "16k") {
      val sql = s"SELECT * FROM parquet.`${table.dir}` WHERE k = 60003"
      checkSparkAnswerAndLmUsed(spark.sql(sql))
      val df = spark.sql(sql)
      df.collect()
      val scan = scanOf(df)
      val o = scan.splitPruningOutcome.get
      assert(o.splits > 20 && o.kept.size == 1 && o.kept.head.files.length == 1, o.decision)
      assert(df.queryExecution.executedPlan.execute().getNumPartitions == 1)
      assert(scan.metrics(LmMetrics.SplitsPlanned).value == o.splits)
      assert(scan.metrics(LmMetrics.SplitsPruned).value == o.splits - 1)
      assert(scan.metrics(LmMetrics.FilesRead).value == 1)
      assert(scan.metrics("numFiles").value == 4)
      val explain = df.queryExecution.explainString(org.apache.spark.sql.execution.SimpleMode)
      assert(explain.contains(s"LmSplitPruning: dropped ${o.splits - 1} of ${o.splits} splits by statistics"), explain)
    }
  }

  /** `files` files of 24 long columns `c0` to `c23`, in row groups of about 16 KB. */
  private def wide(name: String, files: Int): String = {
    val dir = newDir(name)
    spark.range(0, 24000, 1, files).selectExpr((0 until 24).map(i => s"id * ${i + 1} AS c$i"): _*).write
      .option("parquet.block.size", "16384").parquet(dir)
    dir
  }

  test("packing: a scan that reads 2 of 24 columns runs fewer tasks, its kept splits each read once, rows unchanged") {
    val dir = wide("packing", 4)
    val sql = s"SELECT c0, c5 FROM parquet.`$dir` WHERE c5 >= 0"
    withConf("spark.sql.files.maxPartitionBytes" -> "64k") {
      val want = expected(spark.sql(sql))
      val df = spark.sql(sql)
      assert(normalized(df.collect()) == want)
      val scan = scanOf(df)
      val o = scan.splitPruningOutcome.get
      val p = scan.splitPackingOutcome.get.fold(why => fail(why), identity)
      assert(p.partitions.size < o.kept.size && p.partitions.size % 2 == 0, p.decision) // local[2]: 2 task slots
      assert(p.partitions.flatMap(_.files).map(s => (s.toPath.toString, s.start)).sorted ==
        o.kept.flatMap(_.files).map(s => (s.toPath.toString, s.start)).sorted)
      assert(df.queryExecution.executedPlan.execute().getNumPartitions == p.partitions.size)
      val explain = df.queryExecution.explainString(org.apache.spark.sql.execution.SimpleMode)
      assert(explain.contains(s"LmSplitPacking: packed ${o.kept.map(_.files.length).sum} splits of ${o.kept.size} " +
        s"partitions into ${p.partitions.size}"), explain)
      withConf(LmConf.SPLITS_PACKING.key -> "false") {
        val off = spark.sql(sql)
        assert(normalized(off.collect()) == want)
        assert(scanOf(off).splitPackingOutcome.isEmpty)
        assert(off.queryExecution.executedPlan.execute().getNumPartitions == o.kept.size)
      }
      // Every column read: the partitions Spark made are already the size packing asks for.
      val all = spark.sql(s"SELECT * FROM parquet.`$dir` WHERE c5 >= 0")
      assert(normalized(all.collect()) == expected(spark.sql(s"SELECT * FROM parquet.`$dir` WHERE c5 >= 0")))
      assert(scanOf(all).splitPackingOutcome.get.isLeft, scanOf(all).splitPackingOutcome)
    }
  }

  test("packing a scan with no filter uses only the footers the driver's cache holds") {
    val dir = wide("packing-nofilter", 3)
    val sql = s"SELECT c3 FROM parquet.`$dir`"
    withConf("spark.sql.files.maxPartitionBytes" -> "64k") {
      withConf(LmConf.METADATA_CACHE_MAX_BYTES.key -> "0") {
        val df = spark.sql(sql)
        assert(normalized(df.collect()) == expected(spark.sql(sql)))
        val why = scanOf(df).splitPackingOutcome.get.swap.getOrElse(fail("packed with the cache off"))
        assert(why.contains("without a footer on the driver"), why)
      }
      spark.sql(sql).collect() // the tasks cache the footers (local mode: the driver's JVM)
      val df = spark.sql(sql)
      assert(normalized(df.collect()) == expected(spark.sql(sql)))
      val p = scanOf(df).splitPackingOutcome.get.fold(why => fail(why), identity)
      assert(df.queryExecution.executedPlan.execute().getNumPartitions == p.partitions.size)
      assert(scanOf(df).splitPruningOutcome.get.decision == "no filter lmspark prunes with")
    }
  }

  test("packing: input_file_name() and the block's start and length of every row are vanilla's") {
    val dir = wide("packing-input-file", 6) // more files than the partitions packing makes
    val sql = s"SELECT c0, c5, input_file_name() AS f, input_file_block_start() AS b, " +
      s"input_file_block_length() AS l FROM parquet.`$dir` WHERE c5 >= 0"
    withConf("spark.sql.files.maxPartitionBytes" -> "64k") {
      val df = spark.sql(sql)
      assert(normalized(df.collect()) == expected(spark.sql(sql)))
      val p = scanOf(df).splitPackingOutcome.get.fold(why => fail(why), identity)
      assert(p.partitions.exists(_.files.map(_.toPath.toString).distinct.size > 1), p.decision) // a task reads several files
    }
  }

  test("packing: a corrupt page in a packed split fails the query naming its file, or is skipped with ignoreCorruptFiles") {
    val dir = wide("packing-corrupt", 4)
    val bad = new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).sortBy(_.getName).last
    val (start, page) = lmspark.testutil.MetadataSurgery.open(bad.toPath).firstPage(0, "c5")
    val bytes = Files.readAllBytes(bad.toPath)
    val from = start.toInt + page.dataStart + 2
    java.util.Arrays.fill(bytes, from, from + math.min(64, page.header.compressed_page_size - 2), 0x55.toByte)
    Files.write(bad.toPath, bytes) // the footer is intact: split pruning reads it and packing weighs the file
    new File(bad.getParent, s".${bad.getName}.crc").delete() // the local file system's checksum of the old bytes
    val sql = s"SELECT c0, c5 FROM parquet.`$dir` WHERE c5 >= 0"
    Seq("true", "false").foreach { on =>
      withConf(LmConf.SPLITS_PACKING.key -> on, "spark.sql.files.maxPartitionBytes" -> "64k") {
        val skipping = failsNamingOrSkips(sql, bad.getName)
        assert(scanOf(skipping).splitPackingOutcome.exists(_.isRight) == (on == "true"), scanOf(skipping).splitPackingOutcome)
      }
    }
  }

  test("a file rewritten in place between queries is judged by its new footer") {
    val a = write("rewrite-a", new Random(seed + 1), 1, 5000, "sorted", 4096)
    val b = write("rewrite-b", new Random(seed + 2), 1, 7000, "sorted", 4096)
    def part(dir: String) = new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
    val target = part(a.dir)
    val sql = s"SELECT id, k FROM parquet.`${a.dir}` WHERE k >= 16000 AND k <= 16500"
    withConf("spark.sql.files.maxPartitionBytes" -> "8k") {
      assert(spark.sql(sql).collect().isEmpty) // a's keys end at 14997: every split dropped
      Files.copy(part(b.dir).toPath, target.toPath, StandardCopyOption.REPLACE_EXISTING)
      new File(target.getParent, s".${target.getName}.crc").delete() // the local file system's checksum of the old bytes
      target.setLastModified(target.lastModified() + 5000)
      val df = spark.sql(sql)
      val rows = normalized(df.collect())
      assert(rows.nonEmpty && rows == expected(spark.sql(sql)))
    }
  }

  test("the footer budget: none read with the cache off; over the budget only cached footers prune") {
    val table = write("budget", new Random(seed + 3), 3, 12000, "sorted", 4096)
    val sql = s"SELECT id FROM parquet.`${table.dir}` WHERE k BETWEEN 100 AND 200"
    def run(conf: (String, String)*): lmspark.scan.SplitPruner.Outcome =
      withConf(("spark.sql.files.maxPartitionBytes" -> "8k") +: conf: _*) {
        val df = spark.sql(sql)
        assert(normalized(df.collect()) == expected(spark.sql(sql)))
        scanOf(df).splitPruningOutcome.get
      }
    val off = run(LmConf.METADATA_CACHE_MAX_BYTES.key -> "0")
    assert(off.dropped == 0 && off.footersRead == 0 && off.decision.contains("the metadata cache is off"), off.decision)
    // Nothing is cached yet (the tasks above ran with the cache off): 3 footers to read, 2 allowed.
    val over = run(LmConf.PRUNING_SPLITS_MAX_FOOTER_READS.key -> "2")
    assert(over.dropped == 0 && over.footersRead == 0 && over.decision.contains("more than maxFooterReads 2"), over.decision)
    // The tasks above cached the footers: with no footer to read, every file is pruned.
    val cached = run(LmConf.PRUNING_SPLITS_MAX_FOOTER_READS.key -> "0")
    assert(cached.dropped > 0 && cached.footersRead == 0 && cached.footersCached == 3, cached.decision)
  }

  test("a bucketed scan keeps every split") {
    // Spark reads buckets as buckets only where that helps, unless told always to.
    withConf("spark.sql.sources.bucketing.autoBucketedScan.enabled" -> "false")(bucketed())
  }

  private def bucketed(): Unit = {
    val dir = newDir("bucketed")
    spark.range(0, 20000).selectExpr("id", "id * 3 AS k").write.bucketBy(4, "id").option("path", dir)
      .saveAsTable("split_pruning_bucketed")
    try {
      val sql = "SELECT id, k FROM split_pruning_bucketed WHERE k = 300"
      checkSparkAnswerAndLmUsed(spark.sql(sql))
      val df = spark.sql(sql)
      df.collect()
      assert(scanOf(df).splitPruningOutcome.isEmpty)
    } finally spark.sql("DROP TABLE split_pruning_bucketed")
  }

  test("a corrupt file among the splits fails the query, or is skipped with ignoreCorruptFiles, as without split pruning") {
    val table = write("corrupt", new Random(seed + 4), 3, 9000, "sorted", 4096)
    val bad = new File(table.dir).listFiles().filter(_.getName.endsWith(".parquet")).sortBy(_.getName).last
    val bytes = Files.readAllBytes(bad.toPath)
    Files.write(bad.toPath, java.util.Arrays.copyOf(bytes, bytes.length - 20)) // the footer's tail is gone
    val sql = s"SELECT id, k FROM parquet.`${table.dir}` WHERE k >= 0"
    Seq("true", "false").foreach { on =>
      withConf(LmConf.PRUNING_SPLITS.key -> on, "spark.sql.files.maxPartitionBytes" -> "8k") {
        failsNamingOrSkips(sql, bad.getName)
      }
    }
  }
}
