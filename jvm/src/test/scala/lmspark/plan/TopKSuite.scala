package lmspark.plan

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, SortOrder, UnsafeProjection}
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering
import org.apache.spark.sql.execution.{SparkPlan, TakeOrderedAndProjectExec}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.lmspark.SparkTopK
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.LmConf
import lmspark.testutil.{HalfFloatFiles, LmSparkSession, TopKChecks}

/** Late materialization under `ORDER BY ... LIMIT k` ([[TopKRule]], [[TopKRead]], [[TopKThreshold]]).
  *
  * The property the top-k scan must keep: each task hands `TakeOrderedAndProject` exactly the rows,
  * in exactly the order, that Spark's own per-task top-k (`Utils.takeOrdered`) leaves of the rows
  * vanilla Spark's scan yields in that task, ties included. The differential cases check it task by
  * task against vanilla Spark (lmspark off, pushdown off) on seeded random tables (several files cut
  * into splits, small row groups and pages, dictionary on or off, partitioned or not) full of ties,
  * NULLs, NaN and -0.0, under random sort orders (1 to 3 keys, each direction and NULL order), limits
  * and projections; and the query's rows, in order, through `TakeOrderedAndProject`'s own shuffle.
  * [[TopKThreshold]] is checked against Spark's top-k itself: offering only the rows it admits gives
  * the same rows as offering all of them. The differential cases run with pass 1's page pruning
  * (`spark.lmspark.topK.pagePruning.enabled`) on and off, and through the simulated object store,
  * where the top-k reads in one pass ([[TopKRead.OnePass]]). Fixed cases: the row groups pass 1 leaves
  * and the rows it ranks, against Spark's top-k's threshold simulated on ranks and parquet-java's
  * column index; the pages read, a file handed to Spark's reader, the declines EXPLAIN shows, the
  * flag, canonicalisation.
  *
  * `LMSPARK_TEST_SEED` (default 20261128) changes every table and case; a failure prints the seed,
  * the table and the query. */
class TopKSuite extends AnyFunSuite with LmSparkSession with TopKChecks {

  /** Small splits; the simulated object store (no latency) for the cases read through it. */
  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.files.openCostInBytes" -> "1024",
    "spark.sql.files.maxPartitionBytes" -> "24k") ++ lmspark.testutil.SimulatedStore.conf(latencyMs = 0.0, mbPerSec = 1e6)

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261128L)

  // ---- the threshold against Spark's top-k ----

  test("offering only the rows TopKThreshold admits gives Spark's top-k of all rows, ties included") {
    val r = new Random(seed)
    val types: Seq[DataType] = Seq(IntegerType, LongType)
    for (c <- 0 until 400) {
      val n = r.nextInt(3000)
      val distinct = 1 + r.nextInt(if (r.nextBoolean()) 5 else 500)
      val k = Seq(0, 1, 2, 3, 10, 37, 200, 5000)(r.nextInt(8))
      val order = SortOrder(BoundReference(0, IntegerType, nullable = true),
        if (r.nextBoolean()) org.apache.spark.sql.catalyst.expressions.Ascending
        else org.apache.spark.sql.catalyst.expressions.Descending)
      val ordering = new LazilyGeneratedOrdering(Seq(order), types.zipWithIndex.map { case (t, i) =>
        org.apache.spark.sql.catalyst.expressions.AttributeReference(s"c$i", t)() })
      val project = UnsafeProjection.create(types.toArray)
      val rows: Seq[InternalRow] = (0 until n).map { i =>
        val key = if (r.nextInt(10) == 0) null else Integer.valueOf(r.nextInt(distinct))
        project(InternalRow(key, i.toLong)).copy()
      }
      val all = SparkTopK.takeOrdered(rows.iterator, k, ordering).map(_.getLong(1)).toList
      val threshold = new TopKThreshold(k, ordering)
      val admitted = rows.iterator.filter { row =>
        val in = threshold.admits(row)
        if (in) threshold.offered(row)
        in
      }
      val filtered = SparkTopK.takeOrdered(admitted, k, ordering).map(_.getLong(1)).toList
      assert(filtered == all, s"seed $seed case $c: $n rows, $distinct keys, k $k, $order")
    }
  }

  // ---- differential: task by task against vanilla Spark ----

  private val schema = StructType(Seq(
    StructField("id", LongType, nullable = false), StructField("k", IntegerType), StructField("d", DoubleType),
    StructField("s", StringType), StructField("dec", DecimalType(9, 2)), StructField("pad", StringType),
    StructField("c", IntegerType, nullable = false)))

  private case class Table(dir: String, params: String, keys: Seq[String])

  private def randomTable(r: Random, t: Int): Table = {
    val rows = 2000 + r.nextInt(6000)
    val files = 1 + r.nextInt(4)
    val partitioned = r.nextBoolean()
    val dictionary = r.nextBoolean()
    val kRange = if (r.nextBoolean()) 4 else 300
    val doubles = Array(Double.NaN, -0.0, 0.0, 1.5, Double.NegativeInfinity, Double.PositiveInfinity)
    val data = (0 until rows).map { i =>
      Row(i.toLong,
        if (r.nextInt(8) == 0) null else r.nextInt(kRange),
        r.nextInt(9) match { case 0 => null; case j if j < 7 => doubles(j - 1); case _ => r.nextInt(50) / 4.0 },
        if (r.nextInt(10) == 0) null else s"s${r.nextInt(if (kRange == 4) 3 else 60)}",
        if (r.nextInt(12) == 0) null else java.math.BigDecimal.valueOf(r.nextInt(40).toLong, 1),
        "x" * r.nextInt(40), i / 37)
    }
    val df0 = spark.createDataFrame(spark.sparkContext.parallelize(data, files), schema)
    val df = if (partitioned) df0.withColumn("p", (col("id") % 3).cast("int")) else df0
    val dir = newDir(s"topk-$t")
    val pageRows = Seq(50, 200, 1000)(r.nextInt(3))
    val blockBytes = Seq(4096, 16384, 1 << 20)(r.nextInt(3))
    val w = df.write.option("parquet.block.size", blockBytes.toString)
      .option("parquet.page.row.count.limit", pageRows.toString)
      .option("parquet.enable.dictionary", dictionary.toString)
    if (partitioned) w.partitionBy("p").parquet(dir) else w.parquet(dir)
    Table(dir, s"$files files, $rows rows, k of $kRange values, pages of $pageRows rows, row groups of " +
      s"~$blockBytes bytes, dictionary $dictionary, partitioned $partitioned",
      Seq("k", "d", "s", "dec", "c") ++ (if (partitioned) Seq("p") else Nil))
  }

  private def orderOf(r: Random, c: String): Column = r.nextInt(4) match {
    case 0 => col(c).asc
    case 1 => col(c).asc_nulls_last
    case 2 => col(c).desc
    case _ => col(c).desc_nulls_first
  }

  test("each task yields Spark's per-task top-k of Spark's scan, on random tables, orders and limits") {
    val r = new Random(seed)
    var unread = 0L // row groups pass 1 left by statistics, over every case
    var repeated = 0L // passes by statistics that ties sent back to Spark's order
    var prunedUnread = 0L // row groups left unread with page pruning on
    var onePass = 0 // cases read in one pass, through the object store
    var onePassUnread = 0L // row groups left unread by them
    // Six tables, and up to six more while some way of the first pass by statistics was not taken
    // (which ways the cases take depends on the seed).
    def covered = unread > 0 && repeated > 0 && prunedUnread > 0 && onePassUnread > 0
    var t = 0
    while (t < 6 || (t < 12 && !covered)) {
      val table = randomTable(r, t)
      t += 1
      val batchSize = Seq(64, 1000, 4096)(r.nextInt(3))
      withConf("spark.lmspark.batchSize" -> batchSize.toString) {
        for (c <- 0 until 8) {
          val keys = r.shuffle(table.keys).take(1 + r.nextInt(3))
          val orders = keys.map(orderOf(r, _))
          val limit = Seq(1, 2, 7, 25, 150, 4000)(r.nextInt(6))
          val others = r.shuffle(Seq("id", "pad", "s", "dec", "d")).take(1 + r.nextInt(3)).filterNot(keys.contains)
          val columns = (if (others.isEmpty) Seq("id") else others) ++ (if (r.nextBoolean()) keys else Nil)
          def q(root: String) = spark.read.parquet(root + table.dir).select((columns ++ keys).distinct.map(col): _*)
            .orderBy(orders: _*).limit(limit).select(columns.distinct.map(col): _*)
          // Local disk with pass 1's page pruning on and off, and the object store (one pass when the
          // first key is a data column: page pruning on, the metadata cache on by default).
          for ((pagePruning, store) <- Seq((true, false), (false, false), (true, true)))
            withConf(LmConf.TOP_K_PAGE_PRUNING.key -> pagePruning.toString, LmConf.TOP_K_OBJECT_STORE_MIN_BYTES.key -> "0") {
              val scan = checkTopK(q(if (store) "simstore://" else ""), s"seed $seed table ${table.params}, batch " +
                s"$batchSize, page pruning $pagePruning, store $store: columns $columns ORDER BY $orders LIMIT $limit")
              val left = scan.metrics(LmMetrics.TopKRowGroupsUnread).value
              if (store) {
                if (scan.topKOnePass) { onePass += 1; onePassUnread += left }
                else assert(left == 0, s"seed $seed: a two-pass top-k on an object store read by statistics")
              } else {
                unread += left
                repeated += scan.metrics(LmMetrics.TopKPassesRepeated).value
                if (pagePruning) prunedUnread += left
              }
            }
        }
      }
    }
    // Both ways of the first pass by statistics were taken somewhere.
    assert(covered, s"seed $seed, $t tables: $unread row groups left unread ($prunedUnread with page pruning on), " +
      s"$repeated passes repeated; $onePass cases in one pass, leaving $onePassUnread row groups unread")
  }

  // ---- pass 1 by statistics ----

  /** One file of `n` rows in row groups of about 1,000 (pages of 100): `id`, `k` (distinct ints,
    * every tenth NULL: `laidOut`, nearly in file order, each at most 1,500 rows from its rank, so
    * that row groups far apart have disjoint ranges; otherwise in random order, every row group's
    * range spanning nearly all), `dec` and `s` (distinct, in `k`'s order, never NULL), `t` (three
    * values, ties everywhere). Returns its directory, the rank of each row's `dec` / `s` (the
    * distinct int they follow), and the row count of each row group, in file order. */
  private def rowGroupTable(n: Int, laidOut: Boolean): (String, IndexedSeq[Int], Seq[Long]) = {
    val r = new Random(seed + 2)
    val ks =
      if (laidOut) (0 until n).map(i => (i + r.nextInt(1500), i)).sortBy(_._1).map(_._2)
      else r.shuffle((0 until n).toIndexedSeq)
    val data = (0 until n).map { i =>
      val k = ks(i)
      Row(i.toLong, if (i % 10 == 3) null else k, java.math.BigDecimal.valueOf(k.toLong * 7 + 1, 2),
        f"s$k%08d", r.nextInt(3), "x" * r.nextInt(30))
    }
    val schema = StructType(Seq(StructField("id", LongType), StructField("k", IntegerType),
      StructField("dec", DecimalType(12, 2)), StructField("s", StringType), StructField("t", IntegerType),
      StructField("pad", StringType)))
    val dir = newDir("topk-row-groups")
    lmspark.testutil.WriterLayouts.writeRowGroups(spark.createDataFrame(spark.sparkContext.parallelize(data, 1), schema),
      dir, 1000, Map("parquet.page.row.count.limit" -> "100"))
    val file = new java.io.File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), spark.sessionState.newHadoopConf()))
    val rows = try reader.getFooter.getBlocks.asScala.toSeq.map(_.getRowCount) finally reader.close()
    (dir, ks, rows)
  }

  /** The ranks of `rowGroupTable`'s `k` in descending order, by row group (`starts`: each one's
    * first row, then the row count): later sorts larger, NULL last (all NULLs equal). */
  private def ranks(ks: IndexedSeq[Int], starts: Seq[Long]): IndexedSeq[IndexedSeq[Int]] =
    starts.indices.dropRight(1).map(g => (starts(g) until starts(g + 1)).map(i => if (i % 10 == 3) Int.MaxValue else -ks(i.toInt)))

  /** Spark's top-`limit`'s threshold simulated on ranks over `groups` of rows in turn (Guava's
    * `leastOf`: its first `limit` rows, the threshold their largest; a row sorting before it is kept;
    * at 2 x `limit` kept, the `limit` least stay and the threshold is their largest): for each row
    * group, the threshold when it comes (None: fewer than `limit` kept), and whether every row of it
    * sorts after that threshold (the row group is left, its rows never offered). */
  private def thresholds(groups: Seq[IndexedSeq[Int]], limit: Int): Seq[(Option[Int], Boolean)] = {
    val kept = scala.collection.mutable.ArrayBuffer[Int]()
    var threshold = Int.MinValue
    groups.map { rows =>
      val now = if (kept.size >= limit) Some(threshold) else None
      val skip = now.exists(t => rows.forall(_ > t))
      if (!skip) rows.foreach { v =>
        if (kept.size < limit) { kept += v; threshold = math.max(threshold, v) }
        else if (v < threshold) {
          kept += v
          if (kept.size == 2 * limit) {
            val least = kept.sorted.take(limit)
            kept.clear(); kept ++= least; threshold = least.last
          }
        }
      }
      (now, skip)
    }
  }

  /** One task over the whole file. */
  private val oneTask = Seq("spark.sql.files.maxPartitionBytes" -> "128m", "spark.sql.files.minPartitionNum" -> "1")

  /** One task, pass 1 reading each row group whole (the counts below are of whole row groups). */
  private val oneTaskNoPagePruning = oneTask :+ (LmConf.TOP_K_PAGE_PRUNING.key -> "false")

  test("pass 1 leaves unread the row groups whose statistics put all their rows after the cut") {
    val n = 20000
    val (dir, ks, groupRows) = rowGroupTable(n, laidOut = true)
    assert(groupRows.size >= 10, s"${groupRows.size} row groups")
    val starts = groupRows.scanLeft(0L)(_ + _)
    withConf(oneTaskNoPagePruning: _*) {
      for (column <- Seq("k", "dec", "s"); (order, desc, nullsFirst) <- Seq((col(column).desc, true, false),
        (col(column).asc_nulls_last, false, false), (col(column).asc, false, true)); limit <- Seq(1, 10, 100, 3000)) {
        def q = spark.read.parquet(dir).orderBy(order).limit(limit)
        val context = s"ORDER BY $order LIMIT $limit"
        checkTopK(q, context)
        val plan = executedPlan(q)
        assert(plan.execute().getNumPartitions == 1)
        val m = lmScans(plan).head.metrics
        val (unread, ranked) = (m(LmMetrics.TopKRowGroupsUnread).value, m(LmMetrics.TopKRowsRanked).value)
        // The rank of a row's key (None: NULL), and of the last row kept.
        def key(i: Int): Option[Int] = if (column == "k" && i % 10 == 3) None else Some(ks(i))
        val last: Option[Int] = q.collect().last.getAs[Any](column) match {
          case null => None
          case v: Int => Some(v)
          case v: java.math.BigDecimal => Some((v.unscaledValue.longValue - 1).toInt / 7)
          case v: String => Some(v.drop(1).toInt)
        }
        def after(i: Int): Boolean = (key(i), last) match {
          case (None, _) => !nullsFirst && last.isDefined
          case (Some(_), None) => nullsFirst
          case (Some(v), Some(c)) => if (desc) v < c else v > c
        }
        // Read best-first, the row groups whose rows all sort after the last row kept are reached
        // only once the cut is that row: exactly those are left.
        val repeated = m(LmMetrics.TopKPassesRepeated).value
        if (nullsFirst && column == "k") {
          // NULLs first: every row group may hold a NULL sorting first, so statistics can prove no
          // row group's rows all sort after any cut: pass 1 reads every row once, in Spark's order.
          assert(repeated == 0 && unread == 0 && ranked == n,
            s"$context: $repeated passes repeated, $unread row groups unread, $ranked rows ranked (expected $n)")
        } else {
          val left = groupRows.indices.filter(g => (starts(g) until starts(g + 1)).forall(i => after(i.toInt)))
          assert(unread == left.size && ranked == n - left.map(groupRows(_)).sum,
            s"$context: $unread row groups unread, $ranked rows ranked; expected ${left.size} unread, " +
              s"${n - left.map(groupRows(_)).sum} ranked")
          if (limit <= 10) assert(unread > 0, s"$context: nothing left unread")
          assert(repeated == 0, s"$context: no tie, yet the pass was repeated")
        }
      }
    }
  }

  test("a key not laid out: pass 1 reads in Spark's order from the start, once, ties or not") {
    val n = 20000
    val (dir, ks, groupRows) = rowGroupTable(n, laidOut = false)
    val starts = groupRows.scanLeft(0L)(_ + _)
    withConf(oneTaskNoPagePruning: _*) {
      // Ties everywhere, every row group holding every value: nothing is left, nothing read twice.
      for (order <- Seq(col("t").desc, col("t").asc); limit <- Seq(1, 5, 40)) {
        def q = spark.read.parquet(dir).select("id", "t", "pad").orderBy(order).limit(limit)
        checkTopK(q, s"ORDER BY $order LIMIT $limit")
        val m = lmScans(executedPlan(q)).head.metrics
        assert(m(LmMetrics.TopKPassesRepeated).value == 0 && m(LmMetrics.TopKRowGroupsUnread).value == 0 &&
          m(LmMetrics.TopKRowsRanked).value == n,
          s"ORDER BY $order LIMIT $limit: ${m(LmMetrics.TopKPassesRepeated).value} passes repeated, " +
            s"${m(LmMetrics.TopKRowGroupsUnread).value} row groups unread, ${m(LmMetrics.TopKRowsRanked).value} ranked")
      }
      // Distinct keys: left are exactly the row groups that come once `limit` rows were kept and whose
      // keys all sort after the threshold of Spark's top-k then (Guava's `leastOf`: its first `limit`
      // rows, the threshold their largest; a row sorting before it is kept; at 2 x `limit` kept,
      // the `limit` least stay and the threshold is their largest), simulated here on ranks.
      // (Which limits leave a row group depends on the seed's order; some small one must, or the
      // count checks below test nothing.)
      var leftBySmallLimits = 0L
      for (limit <- Seq(1, 10, 100, 3000)) {
        def q = spark.read.parquet(dir).orderBy(col("k").desc).limit(limit)
        checkTopK(q, s"ORDER BY k DESC LIMIT $limit")
        val m = lmScans(executedPlan(q)).head.metrics
        val left = thresholds(ranks(ks, starts), limit).zipWithIndex.collect { case ((_, true), g) => g }
        val (unread, ranked) = (m(LmMetrics.TopKRowGroupsUnread).value, m(LmMetrics.TopKRowsRanked).value)
        assert(m(LmMetrics.TopKPassesRepeated).value == 0 && unread == left.size &&
          ranked == n - left.map(groupRows(_)).sum,
          s"ORDER BY k DESC LIMIT $limit: $unread row groups unread, $ranked ranked; expected ${left.size} unread, " +
            s"${n - left.map(groupRows(_)).sum} ranked")
        if (limit <= 10) leftBySmallLimits += unread
      }
      assert(leftBySmallLimits > 0, s"seed $seed: LIMIT 1 and 10 left nothing unread")
    }
  }

  test("ties at the cut or among the kept rows: pass 1 reads again in Spark's order") {
    withConf(oneTaskNoPagePruning: _*) {
      // Ties in a file written in key order (each key twice): best-first finds the cut tied, and the
      // pass in Spark's order leaves every row group after the first, whose rows all sort after
      // the top-k's threshold by the time they come.
      val sortedDir = newDir("topk-ties-sorted")
      lmspark.testutil.WriterLayouts.writeRowGroups(spark.range(0, 20000).selectExpr("id", "cast(id / 2 as int) as k",
        "repeat('x', cast(id % 29 as int)) as pad").coalesce(1), sortedDir, 1000, Map("parquet.page.row.count.limit" -> "100"))
      for (limit <- Seq(1, 9, 101)) {
        def q = spark.read.parquet(sortedDir).orderBy(col("k")).limit(limit)
        checkTopK(q, s"sorted file, ORDER BY k LIMIT $limit")
        val m = lmScans(executedPlan(q)).head.metrics
        assert(m(LmMetrics.TopKPassesRepeated).value == 1 && m(LmMetrics.TopKRowGroupsUnread).value > 0 &&
          m(LmMetrics.TopKRowsRanked).value < 20000 + 2000,
          s"sorted file, LIMIT $limit: ${m(LmMetrics.TopKPassesRepeated).value} passes repeated, " +
            s"${m(LmMetrics.TopKRowGroupsUnread).value} row groups unread, ${m(LmMetrics.TopKRowsRanked).value} rows ranked")
      }
      // With statistics pruning off, pass 1 reads every row, in Spark's order.
      withConf("spark.lmspark.pruning.statistics.enabled" -> "false", "spark.lmspark.pruning.guarantees.enabled" -> "false") {
        def q = spark.read.parquet(sortedDir).orderBy(col("k").desc).limit(10)
        checkTopK(q, "statistics off")
        val m = lmScans(executedPlan(q)).head.metrics
        assert(m(LmMetrics.TopKRowGroupsUnread).value == 0 && m(LmMetrics.TopKRowsRanked).value == 20000)
      }
    }
  }

  test("pass 1 reads a row group after the top-k is full only where its pages may hold a row the top-k keeps") {
    val n = 20000
    val (dir, ks, groupRows) = rowGroupTable(n, laidOut = false)
    val starts = groupRows.scanLeft(0L)(_ + _)
    // Per row group, k's pages: (first row in the file, rows, largest k; None: NULLs only), by parquet-java.
    val file = new java.io.File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), spark.sessionState.newHadoopConf()))
    def int(b: java.nio.ByteBuffer): Int = b.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(0)
    val pages: Seq[Seq[(Long, Long, Option[Int])]] = try {
      reader.getFooter.getBlocks.asScala.toSeq.zipWithIndex.map { case (b, g) =>
        val c = b.getColumns.asScala.find(_.getPath.toDotString == "k").get
        val (ci, oi) = (reader.readColumnIndex(c), reader.readOffsetIndex(c))
        (0 until oi.getPageCount).map { p =>
          (starts(g) + oi.getFirstRowIndex(p), oi.getLastRowIndex(p, b.getRowCount) - oi.getFirstRowIndex(p) + 1,
            if (ci.getNullPages.get(p)) None else Some(int(ci.getMaxValues.get(p))))
        }
      }
    } finally reader.close()
    assert(pages.head.size >= 5, s"${pages.head.size} pages in the first row group")
    withConf(oneTask: _*) {
      for (limit <- Seq(1, 10, 100, 3000)) {
        def q = spark.read.parquet(dir).select("id", "k", "pad").orderBy(col("k").desc).limit(limit)
        val m = checkTopK(q, s"ORDER BY k DESC LIMIT $limit").metrics
        val off = withConf(LmConf.TOP_K_PAGE_PRUNING.key -> "false")(checkTopK(q, s"LIMIT $limit, page pruning off").metrics)
        // Each row group read once the top-k is full is read only where a page's largest k reaches
        // the threshold's (the bound is k >= the threshold's k: a row passes when its rank is at
        // most the threshold), and at least its rows the top-k would keep are ranked.
        val groups = ranks(ks, starts)
        var (least, most, left, leftRows) = (0L, 0L, 0, 0L)
        for (((threshold, skip), g) <- thresholds(groups, limit).zipWithIndex) threshold match {
          case _ if skip => left += 1; leftRows += groups(g).size
          case None => least += groups(g).size; most += groups(g).size
          case Some(t) =>
            least += groups(g).count(_ <= t)
            most += pages(g).filter(_._3.exists(-_ <= t)).map(_._2).sum
        }
        val context = s"LIMIT $limit"
        val (unread, ranked) = (m(LmMetrics.TopKRowGroupsUnread).value, m(LmMetrics.TopKRowsRanked).value)
        assert(m(LmMetrics.TopKPassesRepeated).value == 0 && unread == left &&
          off(LmMetrics.TopKRowGroupsUnread).value == left, s"$context: $unread row groups unread " +
          s"(${off(LmMetrics.TopKRowGroupsUnread).value} with page pruning off), expected $left")
        assert(ranked >= least && ranked <= most, s"$context: $ranked rows ranked, expected $least to $most")
        assert(off(LmMetrics.TopKRowsRanked).value == n - leftRows,
          s"$context, page pruning off: ${off(LmMetrics.TopKRowsRanked).value} rows ranked, expected ${n - leftRows}")
        if (limit <= 100) {
          val (read, readOff) = (m(LmMetrics.PagesRead).value, off(LmMetrics.PagesRead).value)
          assert(read < readOff && ranked < off(LmMetrics.TopKRowsRanked).value,
            s"$context: $read pages read and $ranked rows ranked, against $readOff and ${off(LmMetrics.TopKRowsRanked).value} with page pruning off")
        }
      }
    }
  }

  test("a file handed to Spark's reader: its rows are ranked and read again from every row") {
    val dir = newDir("topk-f16")
    HalfFloatFiles.write(dir, "f16", 0, 3000, float16 = true, xOf = i => (i % 37).toInt)
    HalfFloatFiles.write(dir, "plain", 3000, 6000, float16 = false, xOf = i => (i % 41).toInt)
    for (order <- Seq(col("x").desc, col("x").asc)) {
      def q = spark.read.schema(HalfFloatFiles.schema).parquet(dir).orderBy(order).limit(23)
      val scan = checkTopK(q, s"FLOAT16 file, ORDER BY $order")
      assert(scan.metrics(LmMetrics.FilesFallback).value >= 1, "no file went to Spark's reader")
    }
  }

  // ---- what is read ----

  test("pages: the sort column's, and one page per other column for each row kept") {
    val dir = newDir("topk-pages")
    val r = new Random(seed + 1)
    val n = 20000
    val data = (0 until n).map(i => Row(i.toLong, r.nextInt(1000000), s"a${r.nextInt()}", s"b${r.nextLong()}"))
    val pageSchema = StructType(Seq(StructField("id", LongType), StructField("k", IntegerType),
      StructField("a", StringType), StructField("b", StringType)))
    spark.createDataFrame(spark.sparkContext.parallelize(data, 1), pageSchema).write
      .option("parquet.page.row.count.limit", "100").option("parquet.block.size", (1 << 20).toString).parquet(dir)
    val files = new java.io.File(dir).listFiles().filter(_.getName.endsWith(".parquet"))
    /** Data pages by column, from parquet-java's offset indexes. */
    val pages: Map[String, Int] = files.toSeq.flatMap { f =>
      val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(f.getAbsolutePath),
        spark.sessionState.newHadoopConf()))
      try reader.getFooter.getBlocks.asScala.flatMap(_.getColumns.asScala.map(c =>
        c.getPath.toDotString -> reader.readOffsetIndex(c).getPageCount))
      finally reader.close()
    }.groupBy(_._1).map { case (c, ps) => c -> ps.map(_._2).sum }
    val limit = 5
    def q = spark.read.parquet(dir).orderBy(col("k").desc).limit(limit)
    val scan = checkTopK(q, "pages")
    val m = scan.metrics
    val kept = m(LmMetrics.NumOutputRows).value
    assert(m(LmMetrics.TopKRowsRanked).value == n)
    assert(kept >= limit && kept <= limit * scan.execute().getNumPartitions)
    val read = m(LmMetrics.PagesRead).value
    // Pass 2 reads every column, the sort column too, for the rows kept.
    assert(read >= pages("k") && read <= pages("k") + kept * pages.size,
      s"$read pages read; k has ${pages("k")}, ${kept} rows kept, pages by column $pages")
    val whole = withConf("spark.lmspark.topK.enabled" -> "false") {
      val plan = executedPlan(q)
      lmScans(plan).map(_.metrics(LmMetrics.PagesRead).value).sum
    }
    assert(whole == pages.values.sum, s"without the top-k, $whole pages read of ${pages.values.sum}")
  }

  // ---- planning ----

  private def smallTable(): String = {
    val dir = newDir("topk-small")
    spark.range(0, 3000).selectExpr("id", "cast(id % 17 as int) as k", "cast(id as string) as v")
      .write.parquet(dir)
    dir
  }

  test("declines show in EXPLAIN, the scan stays as it was, and answers are Spark's") {
    val dir = smallTable()
    def declined(q: => DataFrame, why: String): Unit = {
      val plan = checkSparkAnswerAndLmUsed(q)
      val scan = lmScans(plan).head
      assert(!scan.topK && scan.topKNote.exists(_.contains(why)), s"expected a decline for '$why':\n$plan")
      assert(q.queryExecution.explainString(org.apache.spark.sql.execution.ExplainMode.fromString("simple"))
        .contains(s"LmTopK: not used: "))
      assert(withConf("spark.lmspark.enabled" -> "false") { inOrder(q.rdd.collect()) } == inOrder(q.rdd.collect()))
    }
    withConf("spark.lmspark.topK.maxRows" -> "10") {
      declined(spark.read.parquet(dir).orderBy(col("k"), col("id")).limit(11), "above spark.lmspark.topK.maxRows")
    }
    declined(spark.read.parquet(dir).orderBy(col("k"), col("id"), col("v")).limit(5), "every column the scan reads")
  }

  test("the flag turns it off; a filter between keeps it off; EXPLAIN shows it when used") {
    val dir = smallTable()
    // `collect()` merges the tasks' top-k in the order they finish, so the order has no ties.
    def q = spark.read.parquet(dir).orderBy(col("k").desc, col("id")).limit(4)
    withConf("spark.lmspark.topK.enabled" -> "false") {
      val scan = lmScans(checkSparkAnswerAndLmUsed(q)).head
      assert(!scan.topK && scan.topKNote.isEmpty)
    }
    val filtered = lmScans(checkSparkAnswerAndLmUsed(spark.read.parquet(dir).where(col("v") =!= "7")
      .orderBy(col("k").desc, col("id")).limit(4))).head
    assert(!filtered.topK)
    assert(q.queryExecution.explainString(org.apache.spark.sql.execution.ExplainMode.fromString("simple"))
      .contains("LmTopK: each task's top 4 rows by k DESC NULLS LAST, id ASC NULLS FIRST"))
  }

  test("file metadata columns: each row kept carries its file's constants and row index, as Spark's scan gives them") {
    val dir = newDir("topk-metadata")
    spark.range(0, 6000).selectExpr("id", "cast(id * 7919 % 1009 as int) as k", "cast(id as string) as v")
      .repartition(3).write.parquet(dir)
    // On local disk; through the object store in one pass (whose reads cannot take the row index
    // as a column: with it, in two).
    for ((limit, descending) <- Seq(1 -> false, 9 -> true, 130 -> false); (store, rowIndex) <- Seq(false -> true,
        true -> false, true -> true)) withConf(LmConf.TOP_K_OBJECT_STORE_MIN_BYTES.key -> "0") {
      val order = if (descending) col("k").desc else col("k")
      def q = spark.read.parquet((if (store) "simstore://" else "") + dir).select(Seq(col("id"), col("v"), col("k"),
        col("_metadata.file_name"), col("_metadata.file_block_start"), col("_metadata.file_modification_time")) ++
        (if (rowIndex) Seq(col("_metadata.row_index")) else Nil): _*).orderBy(order, col("id")).limit(limit)
      val scan = checkTopK(q, s"ORDER BY $order, id LIMIT $limit, store $store, row index $rowIndex")
      assert(scan.topKOnePass == (store && !rowIndex), s"store $store, row index $rowIndex")
    }
    // Sorting by a file constant: pass 1 reads no such column, so the scan declines.
    def byFile = spark.read.parquet(dir).select(col("id"), col("_metadata.file_name").as("f")).orderBy(col("f"), col("id")).limit(3)
    assert(!lmScans(checkSparkAnswerAndLmUsed(byFile)).head.topK)
  }

  test("a top-k scan is not the same scan as a plain one (no exchange reuse across them)") {
    val dir = smallTable()
    val plain = lmScans(executedPlan(spark.read.parquet(dir))).head
    def top = lmScans(executedPlan(spark.read.parquet(dir).orderBy(col("k")).limit(3))).head
    val (a, b) = (top, top)
    assert(a.topK && b.topK)
    assert(a.sameResult(b))
    assert(!a.sameResult(plain) && !plain.sameResult(a))
    val other = lmScans(executedPlan(spark.read.parquet(dir).orderBy(col("k")).limit(4))).head
    assert(!a.sameResult(other))
  }
}
