package lmspark.plan

import java.math.{BigDecimal => JBigDecimal}
import java.time.{Instant, LocalDate}

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.delta.tables.DeltaTable
import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart}
import org.apache.spark.sql.{DataFrame, Row, functions}
import org.apache.spark.sql.execution.{FileSourceScanExec, SimpleMode, SparkPlan}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.shim.DeltaTables
import lmspark.testutil.{FilterColumn, LmSparkSession, RandomPredicates, TopKChecks}

/**
 * Delta Lake tables through lmspark, against Delta's own reader (lmspark off, filter pushdown off)
 * on the same session: seeded random filters and projections over real Delta tables written by
 * Delta itself.
 *  - A table whose scan reads as plain Parquet (no deletion vectors marked, no column mapping) is
 *    read by lmspark's scan, partitioned or not.
 *  - A table with deleted rows marked in deletion vectors (by DELETE, UPDATE and MERGE) is read by
 *    lmspark's scan, in one split per file or several; the rows are also checked against the
 *    generated rows with the DML applied without Delta, and the pages read and values decoded
 *    against the file's offset index and the deleted rows.
 *  - Tables with column mapping, by name (after renames that swap two names, and a dropped
 *    column) and by id (partitioned, with deletion vectors), are read by lmspark's scan.
 *  - Executing lmspark's scan of a table with deletion vectors starts no Spark job to list the
 *    table's files again (Delta's reader starts one), counted by a listener.
 *  - A change data feed read (after UPDATE, DELETE and an append, with deletion vectors off and
 *    on): its files are read by Delta's reader, not lmspark's (the read functions of its RDD's file
 *    scans), and its rows are Delta's and those computed from the DML without Delta.
 *
 * Each table takes 15 to 75 random cases (260 in all, about 2 s each with both sides in the
 * slowest run measured, and `make test` must fit CI's time limit): another seed draws others.
 * The seed is printed; `LMSPARK_TEST_SEED=<seed>` reruns a failing case, whose SQL is printed.
 */
class DeltaScanSuite extends AnyFunSuite with LmSparkSession with TopKChecks {

  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.extensions" -> "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog" -> "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    // Delta keeps a table's log state in this many partitions (50 by default), and its data skipping
    // runs a job over all of them before every query: on these few-file tables that job was most of
    // each case's time. Both sides of every comparison plan through it alike.
    "spark.databricks.delta.snapshotPartitions" -> "2")

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261129L)

  private val schema = StructType(Seq(
    StructField("id", LongType, nullable = false), StructField("k", IntegerType), StructField("l", LongType),
    StructField("d", DoubleType), StructField("s", StringType), StructField("cat", StringType),
    StructField("dec", DecimalType(9, 2)), StructField("dt", DateType), StructField("ts", TimestampType),
    StructField("bool", BooleanType)))

  private val rowCount = 2400

  /** `rowCount` seeded rows of [[schema]], about 5 % nulls in every nullable column. */
  private def rows(r: Random): Seq[Row] = {
    def maybe[T](v: => T): Any = if (r.nextInt(100) < 5) null else v
    (0 until rowCount).map { i =>
      Row(i.toLong, maybe(r.nextInt(2001) - 1000), maybe(r.nextLong() % 1000000000L),
        maybe(if (r.nextInt(50) == 0) Double.NaN else (r.nextInt(20001) - 10000) / 8.0),
        maybe(Seq.fill(r.nextInt(5))(('a' + r.nextInt(5)).toChar).mkString), maybe(f"c${r.nextInt(12)}%02d"),
        maybe(JBigDecimal.valueOf(r.nextInt(2000001) - 1000000L, 2)), maybe(LocalDate.ofEpochDay(r.nextInt(20000) - 5000L)),
        maybe(Instant.ofEpochSecond(r.nextInt(2000000000) - 1000000000L, r.nextInt(1000000) * 1000L)),
        maybe(r.nextBoolean()))
    }
  }

  /** Writes `data` as a new Delta table in 4 files (partitioned by `cat` if asked), with the
    * given table-property defaults, and returns its path. */
  private def deltaTable(label: String, data: Seq[Row], partitioned: Boolean, properties: (String, String)*): String = {
    val path = newDir(label)
    val defaults = properties.map { case (k, v) => s"spark.databricks.delta.properties.defaults.$k" -> v }
    withConf(defaults: _*) {
      val w = spark.createDataFrame(data.asJava, schema).repartition(4).write.format("delta")
      (if (partitioned) w.partitionBy("cat") else w).save(path)
    }
    path
  }

  private def read(path: String): DataFrame = spark.read.format("delta").load(path)

  /** `data` as Spark collects rows of [[schema]] (external date and timestamp types). */
  private def asRows(data: Seq[Row]): Array[Row] = asRowsOf(data, schema)

  private def asRowsOf(data: Seq[Row], s: StructType): Array[Row] = spark.createDataFrame(data.asJava, s).collect()

  /** The Delta scans of `plan` lmspark declined, with their reasons. */
  private def declinedDeltaScans(plan: SparkPlan): Seq[(FileSourceScanExec, Seq[String])] =
    sparkParquetScans(plan).flatMap(s => Fallback.reasonsOf(s).map(s -> _))

  /** `n` seeded random (filter, projection) pairs over `data`'s columns, each checked against
    * Delta's reader; `served`: lmspark's scan must read the table, else it must be declined with a
    * reason containing `reason`. Failures are gathered and reported with the seed and SQL. */
  private def differential(label: String, path: String, data: Seq[Row], n: Int, served: Boolean, reason: String = "",
      columnsOf: StructType = schema): Int = {
    val columns = columnsOf.fields.toIndexedSeq.zipWithIndex.map { case (f, i) =>
      FilterColumn(f.name, f.dataType, data.toIndexedSeq.map(_.get(i)), IndexedSeq(0))
    }
    val r = new Random(seed ^ label.hashCode)
    val gen = new RandomPredicates(columns, r)
    val failures = Seq.newBuilder[String]
    var scans = 0
    (0 until n).foreach { i =>
      val predicate = gen.predicate()
      val projection = r.shuffle(columnsOf.fieldNames.toSeq).take(1 + r.nextInt(columnsOf.size))
      val sql = s"SELECT ${projection.mkString(", ")} WHERE $predicate"
      try {
        val plan = checkSparkAnswer(read(path).where(predicate).select(projection.map(functions.col): _*))
        // A predicate Spark's optimizer proves false leaves no scan at all (an empty local relation).
        val scanned = lmScans(plan).nonEmpty || sparkParquetScans(plan).nonEmpty
        if (scanned) scans += 1
        if (scanned && served && lmScans(plan).isEmpty) failures += s"$label #$i: lmspark's scan was not used\n    $sql\n$plan"
        if (scanned && !served) {
          val declined = declinedDeltaScans(plan)
          if (lmScans(plan).nonEmpty || declined.isEmpty || !declined.forall(_._2.exists(_.contains(reason))))
            failures += s"$label #$i: expected a decline naming '$reason', got ${declined.map(_._2)}\n    $sql\n$plan"
        }
      } catch {
        case e: org.scalatest.exceptions.TestFailedException => failures += s"$label #$i: ${e.getMessage}\n    $sql"
      }
    }
    val all = failures.result()
    if (all.nonEmpty) fail(s"${all.size} of $n cases failed (seed $seed; rerun with LMSPARK_TEST_SEED=$seed):\n" +
      all.take(5).mkString("\n"))
    assert(scans >= n / 2, s"only $scans of $n cases scanned the table (the rest were optimized away)")
    info(s"$label: $n cases, $scans of them scanned the table")
    n
  }

  test("Delta classes are on this line's classpath") {
    assert(DeltaTables.available)
    info(s"seed $seed")
  }

  test("a Delta table read as plain Parquet goes through lmspark's scan, with Delta's answers") {
    val data = rows(new Random(seed))
    val path = deltaTable("plain", data, partitioned = false)
    assert(read(path).count() == data.size)
    differential("plain", path, data, 25, served = true)
  }

  test("a partitioned Delta table goes through lmspark's scan, with Delta's answers") {
    val data = rows(new Random(seed + 1))
    val path = deltaTable("partitioned", data, partitioned = true)
    differential("partitioned", path, data, 15, served = true)
  }

  test("deletion vectors enabled but none written: the scan reads as plain Parquet") {
    val data = rows(new Random(seed + 2))
    val path = deltaTable("dv-none", data, partitioned = false, "enableDeletionVectors" -> "true")
    differential("dv-none", path, data, 15, served = true)
  }

  test("deleted rows marked in deletion vectors: lmspark's scan drops them, with Delta's rows") {
    val data = rows(new Random(seed + 3))
    val path = deltaTable("dv", data, partitioned = false, "enableDeletionVectors" -> "true")
    DeltaTable.forPath(spark, path).delete("id % 7 = 3")
    // The table's own oracle: the generated rows minus the deleted ones, for lmspark on and off.
    val kept = data.filter(_.getLong(0) % 7 != 3)
    withConf("spark.lmspark.enabled" -> "true") { assert(read(path).count() == kept.size) }
    withConf("spark.lmspark.enabled" -> "false") { assert(read(path).count() == kept.size) }
    val plan = withConf("spark.lmspark.enabled" -> "true") {
      val df = read(path)
      assert(normalized(df.collect()) == normalized(asRows(kept)))
      df.queryExecution.executedPlan
    }
    assert(lmScans(plan).nonEmpty && declinedDeltaScans(plan).isEmpty, plan)
    assert(lmScans(plan).map(_.metrics(LmMetrics.RowsDeleted).value).sum == data.size - kept.size, plan)
    differential("dv", path, kept, 50, served = true)
  }

  /** `data` after the DML of [[dmlTable]], computed without Delta. */
  private def afterDml(data: Seq[Row]): Seq[Row] = {
    val updated = data.filter(_.getLong(0) % 7 != 3).map { r =>
      if (r.getLong(0) % 11 == 5 && !r.isNullAt(1)) Row.fromSeq(r.toSeq.updated(1, r.getInt(1) + 1)) else r
    }
    val source = mergeSource(data)
    val sourceIds = source.map(_.getLong(0)).toSet
    val merged = updated.flatMap { r =>
      val id = r.getLong(0)
      if (!sourceIds.contains(id)) Some(r)
      else if (id % 2 == 0) None
      else Some(Row.fromSeq(r.toSeq.updated(4, "merged")))
    }
    val present = updated.map(_.getLong(0)).toSet
    merged ++ source.filterNot(r => present.contains(r.getLong(0)))
  }

  /** MERGE's source: every 13th id of `data`, and 40 new ids. */
  private def mergeSource(data: Seq[Row]): Seq[Row] =
    data.filter(_.getLong(0) % 13 == 0).map(r => Row.fromSeq(r.toSeq.updated(4, "merged"))) ++
      rows(new Random(seed + 99)).take(40).map(r => Row.fromSeq(r.toSeq.updated(0, rowCount + r.getLong(0))))

  /** A Delta table with deletion vectors, several row groups of small pages per file, and rows
    * deleted, updated and merged (each of which marks rows in deletion vectors). */
  private def dmlTable(label: String, data: Seq[Row]): String = {
    val path = withHadoopConf("parquet.block.size" -> "16384", "parquet.page.row.count.limit" -> "100") {
      val p = deltaTable(label, data, partitioned = false, "enableDeletionVectors" -> "true")
      val table = DeltaTable.forPath(spark, p)
      table.delete("id % 7 = 3")
      table.update(functions.expr("id % 11 = 5"), Map("k" -> functions.expr("k + 1")).asJava)
      table.as("t").merge(spark.createDataFrame(mergeSource(data).asJava, schema).as("s"), "t.id = s.id")
        .whenMatched("t.id % 2 = 0").delete()
        .whenMatched().updateExpr(Map("s" -> "s.s").asJava)
        .whenNotMatched().insertAll()
        .execute()
      p
    }
    val dvFiles = new java.io.File(path).listFiles().count(_.getName.startsWith("deletion_vector_"))
    assert(dvFiles > 0, s"no deletion vector file in $path")
    path
  }

  private def withHadoopConf[T](pairs: (String, String)*)(body: => T): T = {
    val conf = spark.sparkContext.hadoopConfiguration
    val old = pairs.map { case (k, _) => k -> Option(conf.get(k)) }
    pairs.foreach { case (k, v) => conf.set(k, v) }
    try body finally old.foreach { case (k, v) => v.fold(conf.unset(k))(conf.set(k, _)) }
  }

  /** The Spark jobs `body` starts, counted by a listener. A marker job run after `body` flushes the
    * listener bus (its events arrive in order): once the marker's start is seen, so are the others'. */
  private def jobsStartedBy(body: => Unit): Int = {
    val sc = spark.sparkContext
    val key = "lmspark.test.jobMarker"
    val seen = new java.util.concurrent.ConcurrentLinkedQueue[String]
    val listener = new SparkListener {
      override def onJobStart(e: SparkListenerJobStart): Unit =
        seen.add(Option(e.properties).flatMap(p => Option(p.getProperty(key))).getOrElse("job"))
    }
    sc.addSparkListener(listener)
    try {
      body
      val marker = java.util.UUID.randomUUID.toString
      sc.setLocalProperty(key, marker)
      try sc.parallelize(Seq(1), 1).count() finally sc.setLocalProperty(key, null)
      val deadline = System.nanoTime() + 120L * 1000 * 1000 * 1000
      while (!seen.contains(marker)) {
        assert(System.nanoTime() < deadline, "the listener never saw the marker job")
        Thread.sleep(10)
      }
      seen.asScala.count(_ == "job")
    } finally sc.removeSparkListener(listener)
  }

  test("Delta's prepared file listing is reused: executing lmspark's scan starts no listing job of its own") {
    val data = rows(new Random(seed + 11))
    val path = deltaTable("dv-listing", data, partitioned = false, "enableDeletionVectors" -> "true")
    DeltaTable.forPath(spark, path).delete("id % 5 = 1")
    // Planned first, then counted while it executes: Delta's data skipping at planning is the same
    // on both sides; at execution Delta's reader lists the files again (its scan's filters hold the
    // is-deleted one, which the prepared listing's do not), lmspark's scan takes the prepared list.
    def executed(lm: Boolean): (Int, Seq[String]) =
      withConf("spark.lmspark.enabled" -> lm.toString, "spark.sql.parquet.filterPushdown" -> lm.toString) {
        val df = read(path).where("k > 0 AND id < 2000").select("id", "k", "s", "dec")
        val plan = df.queryExecution.executedPlan
        assert(lmScans(plan).nonEmpty == lm, plan)
        var out = Seq.empty[String]
        val jobs = jobsStartedBy { out = df.collect().map(_.toString).toSeq.sorted }
        (jobs, out)
      }
    val (lmJobs, lmRows) = executed(lm = true)
    val (deltaJobs, deltaRows) = executed(lm = false)
    assert(lmRows == deltaRows)
    assert(lmRows.nonEmpty)
    assert(lmJobs == 1, s"lmspark's execution started $lmJobs jobs, not the query's one")
    assert(deltaJobs >= lmJobs)
    info(s"jobs while the query executes: lmspark $lmJobs, Delta's reader $deltaJobs; ${lmRows.size} rows")
  }

  test("DELETE, UPDATE and MERGE with deletion vectors: lmspark's rows are the table's, in every split") {
    val data = rows(new Random(seed + 6))
    val path = dmlTable("dv-dml", data)
    val expected = afterDml(data)
    Seq("128MB", "24KB").foreach { split =>
      withConf("spark.lmspark.enabled" -> "true", "spark.sql.files.maxPartitionBytes" -> split,
          "spark.sql.files.openCostInBytes" -> "1") {
        val df = read(path)
        val actual = df.collect()
        val plan = df.queryExecution.executedPlan
        assert(lmScans(plan).nonEmpty && declinedDeltaScans(plan).isEmpty, plan)
        assert(normalized(actual) == normalized(asRows(expected)), s"splits of at most $split")
        assert(df.rdd.getNumPartitions >= 1)
      }
    }
    withConf("spark.sql.files.maxPartitionBytes" -> "24KB", "spark.sql.files.openCostInBytes" -> "1") {
      assert(read(path).rdd.getNumPartitions > 4, "the small splits did not split the files")
      differential("dv-dml", path, expected, 75, served = true)
    }
  }

  test("deleted rows are never decoded, and pages whose rows are all deleted are never read") {
    val data = rows(new Random(seed + 7))
    val path = withHadoopConf("parquet.block.size" -> "32768", "parquet.page.row.count.limit" -> "100") {
      val p = newDir("dv-pages")
      withConf("spark.databricks.delta.properties.defaults.enableDeletionVectors" -> "true") {
        spark.createDataFrame(data.asJava, schema).coalesce(1).sortWithinPartitions("id").write.format("delta").save(p)
      }
      p
    }
    // Whole pages (ids 300 to 899) and scattered rows.
    def deleted(id: Long): Boolean = (id >= 300 && id < 900) || id % 9 == 4
    DeltaTable.forPath(spark, path).delete("(id >= 300 AND id < 900) OR id % 9 = 4")
    val kept = data.filterNot(r => deleted(r.getLong(0)))
    // The oracle: per column chunk, the pages (by the file's offset index) holding a kept row.
    val file = new java.io.File(path).listFiles().filter(_.getName.endsWith(".parquet")).toSeq
    assert(file.size == 1, file)
    val reader = org.apache.parquet.hadoop.ParquetFileReader.open(org.apache.parquet.hadoop.util.HadoopInputFile
      .fromPath(new org.apache.hadoop.fs.Path(file.head.getAbsolutePath), spark.sessionState.newHadoopConf()))
    val (groups, pagesWithKeptRows) = try {
      val blocks = reader.getFooter.getBlocks.asScala
      var first = 0L
      var pages = 0L
      blocks.foreach { b =>
        b.getColumns.asScala.foreach { c =>
          val oi = reader.readOffsetIndex(c)
          (0 until oi.getPageCount).foreach { p =>
            val end = if (p + 1 < oi.getPageCount) oi.getFirstRowIndex(p + 1) else b.getRowCount
            // One file sorted by id, ids from 0: a row's index in the file is its id.
            if ((oi.getFirstRowIndex(p) until end).exists(r => !deleted(first + r))) pages += 1
          }
        }
        first += b.getRowCount
      }
      (blocks.size, pages)
    } finally reader.close()
    assert(groups > 1, s"one row group only in $file")
    assert(data.map(_.getLong(0)) == data.indices.map(_.toLong))
    // Selections walked run by run (selectors) decode no deleted row; walked as masks, they decode stretches of
    // rows between the pages left out and copy the kept ones: more values, the same pages. Under auto, the
    // deleted runs shorter than the selection threshold (the scattered ones here) stay selected, flagged for
    // Delta's filter: more values, the same pages, the same rows.
    Seq("selectors" -> true, "auto" -> false, "mask" -> false).foreach { case (policy, exact) =>
      withConf("spark.lmspark.enabled" -> "true", "spark.lmspark.selection.policy" -> policy) {
        val df = read(path)
        assert(normalized(df.collect()) == normalized(asRows(kept)), policy)
        val m = lmScans(df.queryExecution.executedPlan).head.metrics
        assert(m(LmMetrics.PagesRead).value == pagesWithKeptRows, s"pages read, policy $policy; $groups row groups")
        assert(m(LmMetrics.PagesPruned).value > 0, policy)
        // Every column of the file, the row index and Delta's is-deleted column, for the kept rows only.
        val decoded = m(LmMetrics.ValuesDecoded).value
        val keptValues = kept.size.toLong * (schema.size + 2)
        assert(if (exact) decoded == keptValues else decoded >= keptValues, s"$decoded values decoded, policy $policy")
        assert(m(LmMetrics.RowsDeleted).value == data.size - kept.size, policy)
      }
    }
  }

  test("ORDER BY ... LIMIT over deleted rows: each task's top-k is Delta's, no deleted row ranked, in every split") {
    val data = rows(new Random(seed + 12))
    val dml = dmlTable("dv-topk", data)
    val partitioned = deltaTable("dv-topk-cat", data, partitioned = true, "enableDeletionVectors" -> "true",
      "columnMapping.mode" -> "id", "minReaderVersion" -> "2", "minWriterVersion" -> "5")
    DeltaTable.forPath(spark, partitioned).delete("id % 4 = 1 OR (id > 700 AND id < 1900)")
    val r = new Random(seed + 13)
    val sortable = IndexedSeq("id", "k", "l", "d", "s", "dec", "dt", "ts", "cat")
    def order(c: String) = r.nextInt(4) match {
      case 0 => functions.col(c).asc
      case 1 => functions.col(c).desc
      case 2 => functions.col(c).asc_nulls_last
      case _ => functions.col(c).desc_nulls_first
    }
    var cases = 0
    var ranked = 0L
    for ((label, path) <- Seq("dml" -> dml, "partitioned, mapped by id" -> partitioned); split <- Seq("128MB", "24KB")) {
      withConf("spark.sql.files.maxPartitionBytes" -> split, "spark.sql.files.openCostInBytes" -> "1",
          "spark.lmspark.batchSize" -> Seq("64", "4096")(r.nextInt(2))) {
        for (_ <- 0 until 5) {
          val keys = r.shuffle(sortable).take(1 + r.nextInt(2))
          val orders = keys.map(order)
          val limit = Seq(1, 3, 17, 120, 5000)(r.nextInt(5))
          val others = r.shuffle(schema.fieldNames.toSeq).take(r.nextInt(4))
          val columns = if (r.nextBoolean()) Nil else (keys ++ others).distinct
          def q = {
            val all = read(path)
            (if (columns.isEmpty) all else all.select(columns.map(functions.col): _*)).orderBy(orders: _*).limit(limit)
          }
          val scan = checkTopK(q, s"seed $seed, $label, splits of $split: columns ${columns.mkString(",")} " +
            s"ORDER BY ${orders.mkString(", ")} LIMIT $limit")
          ranked += scan.metrics(LmMetrics.TopKRowsRanked).value
          cases += 1
        }
      }
    }
    assert(ranked > 0)
    info(s"$cases top-k cases over two tables with deleted rows")
  }

  test("column mapping by name: lmspark finds the physical names, Delta's rows after renames and a drop") {
    val data = rows(new Random(seed + 4))
    val path = deltaTable("cm-name", data, partitioned = false,
      "columnMapping.mode" -> "name", "minReaderVersion" -> "2", "minWriterVersion" -> "5")
    spark.sql(s"ALTER TABLE delta.`$path` RENAME COLUMN k TO k_renamed")
    // Swap two names: a reader matching logical names to the files' would swap the columns.
    spark.sql(s"ALTER TABLE delta.`$path` RENAME COLUMN s TO tmp")
    spark.sql(s"ALTER TABLE delta.`$path` RENAME COLUMN cat TO s")
    spark.sql(s"ALTER TABLE delta.`$path` RENAME COLUMN tmp TO cat")
    spark.sql(s"ALTER TABLE delta.`$path` DROP COLUMN bool")
    // New rows after the schema changes: files of both layouts.
    // (Renames keep the columns' places: `cat` is now the fifth column, holding the old `s` values.)
    spark.sql(s"INSERT INTO delta.`$path` SELECT id + $rowCount, k_renamed, l, d, cat, s, dec, dt, ts FROM delta.`$path` WHERE id < 300")
    assert(read(path).schema.fieldNames.toSeq == Seq("id", "k_renamed", "l", "d", "cat", "s", "dec", "dt", "ts"))
    val mapped = data.map(r => Row.fromSeq(r.toSeq.take(9)))
    val all = mapped ++ mapped.filter(_.getLong(0) < 300).map(r => Row.fromSeq(r.toSeq.updated(0, r.getLong(0) + rowCount)))
    val plan = checkSparkAnswer(read(path).where("k_renamed > 0"))
    assert(lmScans(plan).nonEmpty && declinedDeltaScans(plan).isEmpty, plan)
    withConf("spark.lmspark.enabled" -> "true") {
      assert(read(path).count() == all.size)
      assert(normalized(read(path).collect()) == normalized(asRowsOf(all, read(path).schema)))
    }
    differential("cm-name", path, all, 40, served = true, columnsOf = read(path).schema)
  }

  test("column mapping by id, with deletion vectors: lmspark matches by field id, Delta's rows") {
    val data = rows(new Random(seed + 5))
    val path = deltaTable("cm-id", data, partitioned = true,
      "columnMapping.mode" -> "id", "minReaderVersion" -> "2", "minWriterVersion" -> "5", "enableDeletionVectors" -> "true")
    spark.sql(s"ALTER TABLE delta.`$path` RENAME COLUMN l TO l_renamed")
    DeltaTable.forPath(spark, path).delete("id % 5 = 1")
    val kept = data.filter(_.getLong(0) % 5 != 1)
    val plan = checkSparkAnswer(read(path).where("l_renamed > 0"))
    assert(lmScans(plan).nonEmpty && declinedDeltaScans(plan).isEmpty, plan)
    differential("cm-id", path, kept, 40, served = true, columnsOf = read(path).schema)
  }

  test("a widened column type is declined with the reason, Delta's rows") {
    val path = newDir("widened")
    withConf("spark.databricks.delta.properties.defaults.enableTypeWidening" -> "true") {
      spark.range(0, 500).selectExpr("id", "CAST(id % 300 AS SHORT) AS sh").write.format("delta").save(path)
    }
    spark.sql(s"ALTER TABLE delta.`$path` CHANGE COLUMN sh TYPE INT")
    spark.sql(s"INSERT INTO delta.`$path` SELECT id + 500, CAST(id * 1000 AS INT) FROM range(0, 100)")
    def q = read(path).where("sh > 200")
    val plan = checkSparkAnswer(q)
    assert(declinedDeltaScans(plan).flatMap(_._2).exists(_.contains("Delta type widening, columns sh")), plan)
    assert(q.count() == (0 until 500).count(_ % 300 > 200) + (0 until 100).count(_ * 1000 > 200))
  }

  test("row tracking's _metadata.row_id is declined with the reason; _metadata.row_index is served") {
    val data = rows(new Random(seed + 8))
    val path = deltaTable("row-tracking", data, partitioned = false, "enableRowTracking" -> "true")
    def ids = read(path).select(functions.col("id"), functions.col("_metadata.row_id"))
    val plan = checkSparkAnswer(ids)
    assert(declinedDeltaScans(plan).flatMap(_._2).exists(_.contains("row_id")), plan)
    def index = read(path).where("k > 0").select(functions.col("id"), functions.col("_metadata.row_index"))
    val served = checkSparkAnswer(index)
    assert(lmScans(served).nonEmpty, served)
  }

  /** The read functions of the file scans in `rdd`'s lineage (Spark's `FileScanRDD`s, whose function
    * is private: found by reflection, for a relation such as Delta's change feed that plans its
    * scans inside its own RDD, out of the query's plan). */
  private def fileReaders(rdd: org.apache.spark.rdd.RDD[_]): Seq[AnyRef] = {
    val here = rdd match {
      case f: org.apache.spark.sql.execution.datasources.FileScanRDD =>
        val field = classOf[org.apache.spark.sql.execution.datasources.FileScanRDD].getDeclaredFields
          .find(_.getName.endsWith("readFunction")).getOrElse(fail("FileScanRDD has no readFunction field"))
        field.setAccessible(true)
        Seq(field.get(f))
      case _ => Nil
    }
    here ++ rdd.dependencies.flatMap(d => fileReaders(d.rdd))
  }

  private def isLmReader(f: AnyRef): Boolean = f.getClass.getName.startsWith("lmspark.")

  test("a change data feed read: lmspark declines its files to Delta's reader; its rows are Delta's and the DML's, with and without deletion vectors") {
    val changeType = StructType(schema.fields ++ Seq(StructField("_change_type", StringType),
      StructField("_commit_version", LongType)))
    def tagged(rs: Seq[Row], kind: String, version: Long): Seq[Row] = rs.map(r => Row.fromSeq(r.toSeq :+ kind :+ version))
    Seq(false, true).foreach { dv =>
      val label = if (dv) "cdf-dv" else "cdf"
      val data = rows(new Random(seed + 9 + (if (dv) 1 else 0)))
      val path = deltaTable(label, data, partitioned = false, "enableChangeDataFeed" -> "true",
        "enableDeletionVectors" -> dv.toString)
      val table = DeltaTable.forPath(spark, path)
      table.update(functions.expr("id % 7 = 0"), Map("l" -> functions.expr("l + 1")).asJava) // version 1
      table.delete("id % 5 = 1") // version 2
      val added = rows(new Random(seed + 11)).take(60).map(r => Row.fromSeq(r.toSeq.updated(0, r.getLong(0) + rowCount)))
      spark.createDataFrame(added.asJava, schema).write.format("delta").mode("append").save(path) // version 3
      // The change feed computed without Delta: every version's rows from the generated ones.
      def bump(r: Row): Row = if (r.isNullAt(2)) r else Row.fromSeq(r.toSeq.updated(2, r.getLong(2) + 1))
      val updated = data.filter(_.getLong(0) % 7 == 0)
      val afterUpdate = data.map(r => if (r.getLong(0) % 7 == 0) bump(r) else r)
      val expected = tagged(data, "insert", 0) ++ tagged(updated, "update_preimage", 1) ++
        tagged(updated.map(bump), "update_postimage", 1) ++
        tagged(afterUpdate.filter(_.getLong(0) % 5 == 1), "delete", 2) ++ tagged(added, "insert", 3)
      def feed = spark.read.format("delta").option("readChangeFeed", "true").option("startingVersion", 0)
        .load(path).drop("_commit_timestamp")
      // The feed is a relation of Delta's (`DeltaCDFRelation`), which plans its own file scans inside
      // its RDD: lmspark declines them ("a Delta change data feed read"), so every file is read by
      // Delta's reader.
      val plan = checkSparkAnswer(feed)
      assert(lmScans(plan).isEmpty && sparkParquetScans(plan).isEmpty, plan)
      val readers = fileReaders(plan.execute())
      assert(readers.nonEmpty && !readers.exists(isLmReader), s"$label: ${readers.map(_.getClass.getName)}")
      withConf("spark.lmspark.enabled" -> "true") {
        assert(normalized(feed.collect()) == normalized(asRowsOf(expected, changeType)), s"$label: the change feed")
      }
      checkSparkAnswer(feed.where("k > 0 AND _change_type <> 'insert'").select("id", "k", "_change_type"))
      // The table itself, after the same DML, is still lmspark's to read.
      val current = afterUpdate.filter(_.getLong(0) % 5 != 1) ++ added
      val tablePlan = checkSparkAnswerAndLmUsed(read(path))
      assert(declinedDeltaScans(tablePlan).isEmpty, tablePlan)
      assert(fileReaders(tablePlan.execute()).exists(isLmReader), tablePlan)
      withConf("spark.lmspark.enabled" -> "true") {
        assert(normalized(read(path).collect()) == normalized(asRows(current)), s"$label: the table after its DML")
      }
    }
  }
}
