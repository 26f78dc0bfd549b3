package lmspark.scan

import java.io.File
import java.nio.file.{Files, StandardCopyOption}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.LmConf
import lmspark.meta.MetadataCache
import lmspark.plan.LmMetrics
import lmspark.testutil.LmSparkSession

/** The executor's metadata cache under real queries: answers equal vanilla Spark's (filter
  * pushdown off) whether the cache is cold, warm or off; a repeated query finds all its metadata
  * (footers, page indexes and their checked page statistics, bloom filters, dictionaries) in the
  * cache and prunes exactly as the cold run did; page statistics converted for one read type are
  * never served to a read of another; and a file rewritten in place, even to the same length, is
  * read anew. */
class MetadataCacheScanSuite extends AnyFunSuite with LmSparkSession {

  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.files.maxPartitionBytes" -> "1g", "spark.sql.files.minPartitionNum" -> "1",
    LmConf.METADATA_CACHE_MAX_BYTES.key -> (64L << 20).toString)

  private val rows = 200000L

  /** Four row groups sorted by `id`, pages of 4000 rows, page indexes; `k` dictionary-encoded,
    * a bloom filter on `s`. */
  private lazy val file: File =
    lmspark.testutil.SortedKeyTable.write(spark, newDir("cached"), rows, 4000, Map("parquet.bloom.filter.enabled#s" -> "true"))

  private def table: DataFrame = spark.read.parquet(file.getAbsolutePath)

  private def metric(plan: SparkPlan, name: String): Long = lmScans(plan).map(_.metrics(name).value).sum

  private val queries: Seq[(String, DataFrame => DataFrame)] = Seq(
    "point lookup" -> (_.where(col("id") === 123457L)),
    "range" -> (_.where(col("id").between(60000L, 61000L)).select("id", "s")),
    "dictionary filter" -> (_.where(col("k") === 3 && col("d") < 50.0).select("id", "d")),
    "bloom filter" -> (_.where(col("s") === "s12345" || col("s") === "nope").select("id")),
    "absent value" -> (_.where(col("s") === "nope")),
    "aggregate" -> (_.agg(sum("id"), count("s"), max("d"))))

  /** What pruning decided, which must not depend on where the metadata came from. */
  private val decisions = Seq(LmMetrics.RowGroupsRead, LmMetrics.PrunedByStatistics, LmMetrics.PrunedByDictionary,
    LmMetrics.PrunedByBloomFilter, LmMetrics.PrunedByPageIndex, LmMetrics.PagesPruned, LmMetrics.PagesRead)

  test("a repeated query finds all its metadata cached, prunes the same, and answers the same") {
    MetadataCache.clear()
    queries.foreach { case (name, q) =>
      val cold = checkSparkAnswerAndLmUsed(q(table))
      val warm = checkSparkAnswerAndLmUsed(q(table))
      assert(metric(warm, LmMetrics.MetadataCacheMisses) == 0, s"$name: misses on the warm run\n$warm")
      assert(metric(warm, LmMetrics.MetadataCacheHits) > 0, s"$name: no hits on the warm run\n$warm")
      decisions.foreach { m => assert(metric(warm, m) == metric(cold, m), s"$name: $m cold ${metric(cold, m)}, warm ${metric(warm, m)}") }
    }
    assert(MetadataCache.size > 0)
  }

  test("a repeated read of a row group decodes no dictionary page again; with the dictionaries' bound 0 it does") {
    // Four row groups sorted by id, pages of 2000 rows; every column but id dictionary-encoded.
    val dir = newDir("dictionaries")
    val df = spark.range(0, 80000, 1, 1).select(col("id"), (col("id") % 7).cast("int").as("k"),
      concat(lit("name"), (col("id") * 13 % 900).cast("string")).as("name"),
      (col("id") * 31 % 300 / 100.0).cast("decimal(12,2)").as("price"),
      date_add(lit("2020-01-01").cast("date"), (col("id") % 100).cast("int")).as("day"))
    lmspark.testutil.WriterLayouts.writeRowGroups(df, dir, 20000, Map("parquet.page.row.count.limit" -> "2000"))
    val f = new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
    val fileKey = Some(lmspark.meta.FileKey(new org.apache.hadoop.fs.Path(f.toURI).toString, f.length,
      Files.getLastModifiedTime(f.toPath).toMillis))
    // Per row group, the leaves whose chunk starts with a dictionary page (parquet-java's footer),
    // and the bytes of those pages out of the codec (parquet-java's reader).
    val (withDictionary: Seq[Set[String]], dictionaryBytes: Seq[Map[String, Long]]) = {
      val r = org.apache.parquet.hadoop.ParquetFileReader.open(
        org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(f.toURI), new org.apache.hadoop.conf.Configuration()))
      try {
        val leaves = r.getFooter.getFileMetaData.getSchema.getColumns.asScala.toSeq
        r.getFooter.getBlocks.asScala.toSeq.indices.map { rg =>
          val block = r.getFooter.getBlocks.get(rg)
          val names = block.getColumns.asScala.filter(_.hasDictionaryPage).map(_.getPath.toDotString).toSet
          val pages: org.apache.parquet.column.page.DictionaryPageReadStore = r.getDictionaryReader(block)
          (names, leaves.filter(l => names.contains(l.getPath.mkString("."))).map(l =>
            l.getPath.mkString(".") -> pages.readDictionaryPage(l).getUncompressedSize.toLong).toMap)
        }.unzip
      } finally r.close()
    }
    assert(withDictionary.size == 4 && withDictionary.forall(_ == Set("k", "name", "price", "day")), s"dictionary-encoded chunks: $withDictionary")
    def kept(rg: Int): Set[String] = Seq("id", "k", "name", "price", "day")
      .filter(l => MetadataCache.contains(fileKey, MetadataCache.Dictionary(rg, Seq(l)))).toSet
    val read = spark.read.parquet(dir)
    // With each lookup, the leaves whose dictionary dictionary pruning reads (k = 3 lies inside k's
    // bounds): its reads count no decompressed bytes, so only the readers' dictionaries are in the
    // cold run's figure.
    Seq((1, col("id") === 23457L, Set.empty[String]),
      (3, col("id").between(70001L, 70010L) && col("k") === 3, Set("k"))).foreach { case (rg, cond, pruning) =>
      MetadataCache.clear()
      val cold = checkSparkAnswerAndLmUsed(read.where(cond))
      assert(kept(rg) == withDictionary(rg) && (0 until 4).filter(_ != rg).forall(kept(_).isEmpty),
        s"row group $rg: kept ${(0 until 4).map(kept)}, expected ${withDictionary(rg)}")
      val warm = checkSparkAnswerAndLmUsed(read.where(cond))
      val (c, w) = (metric(cold, LmMetrics.BytesDecompressed), metric(warm, LmMetrics.BytesDecompressed))
      val readers = dictionaryBytes(rg).collect { case (l, b) if !pruning.contains(l) => b }.sum
      assert(c - w == readers, s"warm run decompressed $w bytes, the cold one $c: the difference is not " +
        s"the $readers bytes of the dictionary pages the readers decoded (${dictionaryBytes(rg)})")
      decisions.foreach { m => assert(metric(warm, m) == metric(cold, m), s"$m cold ${metric(cold, m)}, warm ${metric(warm, m)}") }
      withConf(LmConf.METADATA_CACHE_DICTIONARY_MAX_BYTES.key -> "0") {
        MetadataCache.clear()
        val off = Seq(checkSparkAnswerAndLmUsed(read.where(cond)), checkSparkAnswerAndLmUsed(read.where(cond)))
        assert(off.map(metric(_, LmMetrics.BytesDecompressed)) == Seq(c, c), "with no dictionaries kept")
        assert((0 until 4).forall(kept(_).isEmpty))
      }
      withConf(LmConf.VERIFY_CHECKSUMS.key -> "true") {
        MetadataCache.clear()
        checkSparkAnswerAndLmUsed(read.where(cond))
        assert((0 until 4).forall(kept(_).isEmpty), "kept while verifying checksums")
      }
    }
  }

  test("with the cache off nothing is looked up, and the answers are the same") {
    withConf(LmConf.METADATA_CACHE_MAX_BYTES.key -> "0") {
      queries.foreach { case (name, q) =>
        val plan = checkSparkAnswerAndLmUsed(q(table))
        assert(metric(plan, LmMetrics.MetadataCacheHits) == 0 && metric(plan, LmMetrics.MetadataCacheMisses) == 0, name)
      }
    }
  }

  test("page statistics are kept per read type: the same INT32 column read as int and as smallint prunes alike") {
    MetadataCache.clear()
    val dir = newDir("widened")
    // Values within SMALLINT's range: every Spark line reads INT32 as SMALLINT, and its bounds are then used.
    spark.range(0, 30000, 1, 1).select(col("id").cast("int").as("x"), (col("id") * 3).as("y")).write
      .option("parquet.page.row.count.limit", "1000").option("parquet.enable.dictionary", "false").parquet(dir)
    def read(t: String): DataFrame = spark.read.schema(s"x $t, y long").parquet(dir)
    val cases = Seq[(String, DataFrame => DataFrame)](
      "int" -> (_.where(col("x").between(12345, 12400))),
      "smallint" -> (_.where(col("x").between(12345, 12400))),
      "int" -> (_.where(col("x") >= 29990)),
      "smallint" -> (_.where(col("x") < 7)))
    // Twice round: the second time every read type's page statistics come from the cache.
    assertPrunedThenCached((cases ++ cases).map { case (t, q) => checkSparkAnswerAndLmUsed(q(read(t))) })
  }

  /** `plans` are some queries' cold runs then, in the same order, their warm runs: every run pruned
    * pages, and each warm run missed nothing in the cache and pruned as its cold run did. */
  private def assertPrunedThenCached(plans: Seq[SparkPlan]): Unit = {
    plans.foreach(p => assert(metric(p, LmMetrics.PagesPruned) > 0, s"no page pruned:\n$p"))
    plans.zip(plans.drop(plans.size / 2)).foreach { case (cold, warm) =>
      assert(metric(warm, LmMetrics.MetadataCacheMisses) == 0, s"misses on the warm run\n$warm")
      decisions.foreach { m => assert(metric(warm, m) == metric(cold, m), s"$m cold ${metric(cold, m)}, warm ${metric(warm, m)}") }
    }
  }

  test("a decimal column's page statistics (INT64 and FIXED_LEN_BYTE_ARRAY) are found in the cache by a repeated query") {
    MetadataCache.clear()
    val dir = newDir("decimals")
    spark.range(0, 30000, 1, 1).select(col("id"), (col("id") / 100).cast("decimal(12,2)").as("p"),
      (col("id") * 7 / 1000).cast("decimal(30,5)").as("w")).write
      .option("parquet.page.row.count.limit", "1000").option("parquet.enable.dictionary", "false").parquet(dir)
    def read: DataFrame = spark.read.parquet(dir)
    val cases = Seq[DataFrame => DataFrame](
      _.where(col("p").between(lit(123.45).cast("decimal(12,2)"), lit(124.5).cast("decimal(12,2)"))),
      _.where(col("w") >= lit(200.5).cast("decimal(30,5)")).select("id"),
      _.where(col("p") < 3 && col("w") > 0.01))
    assertPrunedThenCached((cases ++ cases).map(q => checkSparkAnswerAndLmUsed(q(read))))
  }

  /** One uncompressed, dictionary-free file of `n` fixed-width values `id * factor`: files with the
    * same `n` have the same length whatever the factor. */
  private def fixedWidthFile(name: String, n: Long, factor: Long): File = {
    val dir = newDir(name)
    spark.range(0, n, 1, 1).select(col("id"), (col("id") * factor).as("v")).write
      .option("compression", "none").option("parquet.enable.dictionary", "false").parquet(dir)
    new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
  }

  test("a file rewritten in place (other bytes of the same length, or another length) is read anew") {
    val a = fixedWidthFile("a", 50000L, 3L)
    val b = fixedWidthFile("b", 50000L, 5L)
    val c = fixedWidthFile("c", 70000L, 7L)
    assert(a.length == b.length, "the rewrite keeps the length")
    val dir = new File(newDir("rewritten"))
    dir.mkdirs()
    val target = new File(dir, "t.parquet")
    def queryAll(): Seq[SparkPlan] = Seq[DataFrame => DataFrame](
      _.where(col("v") === 30000L * 3),
      _.where(col("v") === 30000L * 5),
      _.where(col("v") < 1000L).select("id"),
      _.agg(sum("v"), count("id"))).map(q => checkSparkAnswerAndLmUsed(q(spark.read.parquet(dir.getAbsolutePath))))

    var mtime = 1700000000000L
    def install(f: File): Unit = {
      Files.copy(f.toPath, target.toPath, StandardCopyOption.REPLACE_EXISTING)
      mtime += 60000L // a minute later: distinct on every file system's clock
      assert(target.setLastModified(mtime))
    }
    install(a)
    queryAll()
    install(b)
    val afterSameLength = queryAll()
    assert(afterSameLength.map(metric(_, LmMetrics.MetadataCacheMisses)).sum > 0, "the rewritten file's footer was served from the cache")
    install(c)
    val afterLonger = queryAll()
    assert(afterLonger.map(metric(_, LmMetrics.MetadataCacheMisses)).sum > 0)
  }
}
