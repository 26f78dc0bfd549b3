package lmspark.scan

import scala.collection.compat._
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
import lmspark.io.PageSource
import lmspark.plan.LmMetrics
import lmspark.testutil.LmSparkSession

/** Whole scans with page windows far smaller than the chunks (and than most pages), so that every
  * column source refills its window many times, the filter-first pass re-reads what the predicate
  * cache evicts (`reopen` of a chunk its window no longer holds), and pruned layouts refill inside
  * their coalesced ranges: the rows equal vanilla Spark's with pushdown off, what is decoded (pages,
  * values, rows) equals the same scan with the default windows, and a scan of every row reads each
  * byte of every chunk exactly once. */
class WindowedScanSuite extends AnyFunSuite with LmSparkSession {

  private val Rows = 120000L

  /** Several row groups of pages of at most 2,000 rows, page indexes; `a` has no page or row group
    * that statistics can prune for `a = 7`, `id` is sorted. */
  private lazy val file: File = {
    val dir = newDir("windowed")
    spark.range(0, Rows, 1, 1)
      .select(col("id"), (col("id") * 7919 % 1000).cast("int").as("a"),
        concat(lit("s"), (col("id") % 5000).cast("string")).as("b"), (col("id") / 3.0).as("c"))
      .write
      .option("parquet.block.size", 512 * 1024)
      .option("parquet.page.row.count.limit", 2000)
      .parquet(dir)
    new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
  }

  private def chunkBytes: Long = {
    val r = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), new Configuration()))
    try r.getFooter.getBlocks.asScala.map(_.getColumns.asScala.map(_.getTotalSize).sum).sum finally r.close()
  }

  private def withWindow[T](bytes: Int)(body: => T): T = {
    PageSource.windowForTests = bytes
    try body finally PageSource.windowForTests = 0
  }

  private val decodedKeys = Seq(LmMetrics.PagesRead, LmMetrics.ValuesDecoded, LmMetrics.RowGroupsRead,
    LmMetrics.RowsMaterialized, LmMetrics.CacheHits, LmMetrics.CacheEvictions, "numOutputRows")

  /** Checks the query against vanilla Spark and returns the scan's metrics. */
  private def run(query: => DataFrame): Map[String, Long] = {
    val plan = checkSparkAnswerAndLmUsed(query)
    lmScans(plan).flatMap(_.metrics.map { case (k, m) => k -> m.value }).groupMapReduce(_._1)(_._2)(_ + _)
  }

  private val alwaysLate = Seq(LmConf.LM_DENSE_FRACTION.key -> "1", LmConf.LM_SCATTERED_FRACTION.key -> "1")

  private val queries: Seq[(String, Seq[(String, String)], () => DataFrame)] = Seq(
    ("every row", Nil, () => spark.read.parquet(file.getAbsolutePath)),
    ("late materialization", alwaysLate, () => spark.read.parquet(file.getAbsolutePath).where("a = 7").select("a", "b", "c")),
    ("late materialization, cache evicting", alwaysLate :+ (LmConf.PREDICATE_CACHE_MAX_BYTES.key -> "1"),
      () => spark.read.parquet(file.getAbsolutePath).where("a = 7").select("a", "b", "c")),
    ("page pruning", Nil, () => spark.read.parquet(file.getAbsolutePath).where("id >= 30000 AND id < 33500 OR id = 99999")),
    ("page pruning, coalescing", Seq("spark.lmspark.io.maxCoalesceGap" -> "100000"),
      () => spark.read.parquet(file.getAbsolutePath).where("id % 1000 < 3 AND id < 60000").select("id", "b")))

  for ((name, conf, query) <- queries; window <- Seq(1, 777, 5000)) {
    test(s"$name, $window-byte windows: vanilla Spark's rows, and what the default windows decode") {
      withConf(conf: _*) {
        val default = run(query())
        val small = withWindow(window)(run(query()))
        for (k <- decodedKeys) assert(small.get(k) == default.get(k), s"$k: ${small.get(k)} vs ${default.get(k)}")
        assert(small(LmMetrics.BytesRead) > 0)
      }
    }
  }

  test("a scan of every row reads each byte of every chunk once, whatever the window") {
    val total = chunkBytes
    for (window <- Seq(1, 777, 5000, 0)) {
      val m = withWindow(window)(run(spark.read.parquet(file.getAbsolutePath)))
      assert(m(LmMetrics.BytesRead) == total, s"window $window")
    }
  }
}
