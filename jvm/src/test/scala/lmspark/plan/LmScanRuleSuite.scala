package lmspark.plan

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.{HalfFloatFiles, LmSparkSession}

/** The rule replaces Parquet scans, declines with reasons, and the scan node behaves as a scan. */
class LmScanRuleSuite extends AnyFunSuite with LmSparkSession {

  private lazy val flatPath: String = {
    val p = newDir("flat")
    spark.range(0, 5000, 1, 3).select(
      col("id"),
      (col("id") % 7).cast("int").as("i"),
      (col("id") % 3 === 0).as("b"),
      (col("id") * 1.5).as("d"),
      when(col("id") % 5 === 0, lit(null)).otherwise(concat(lit("s"), (col("id") % 11).cast("string"))).as("s"),
      date_add(lit("2020-01-01").cast("date"), (col("id") % 400).cast("int")).as("dt"),
      (col("id") % 4).as("part"))
      .write.partitionBy("part").parquet(p)
    p
  }

  private def flat: DataFrame = spark.read.parquet(flatPath)

  private def explainString(df: DataFrame, mode: String = "simple"): String =
    df.queryExecution.explainString(org.apache.spark.sql.execution.ExplainMode.fromString(mode))

  test("the rule replaces a Parquet scan, and EXPLAIN names LmParquetScan with its pushed filters") {
    def q = flat.where(col("i") === 3).select("id", "s", "part")
    val plan = checkSparkAnswerAndLmUsed(q)
    assert(sparkParquetScans(plan).isEmpty)
    val text = explainString(q)
    assert(text.contains("LmParquetScan"), text)
    assert(text.contains("PushedFilters: [IsNotNull(i), EqualTo(i,3)]"), text)
  }

  test("disabled at run time, the same session plans Spark's own scan") {
    withConf("spark.lmspark.enabled" -> "false") {
      val plan = executedPlan(flat.where(col("i") > 2))
      assert(lmScans(plan).isEmpty)
      val scans = sparkParquetScans(plan)
      assert(scans.nonEmpty && scans.forall(_.relation.fileFormat.getClass == classOf[ParquetFileFormat]))
      assert(scans.forall(s => Fallback.reasonsOf(s).isEmpty))
    }
    assert(lmScans(executedPlan(flat.where(col("i") > 2))).nonEmpty)
  }

  test("the rule runs with and without AQE, also below exchanges and in subqueries") {
    for (aqe <- Seq("true", "false")) withConf("spark.sql.adaptive.enabled" -> aqe) {
      def q = flat.groupBy("part").agg(sum("i"), count(lit(1)))
      val plan = checkSparkAnswerAndLmUsed(q)
      assert(sparkParquetScans(plan).isEmpty, s"aqe=$aqe\n$plan")
      checkSparkAnswerAndLmUsed(flat.where(col("id") === flat.agg(max("id")).head().getLong(0)))
      flat.createOrReplaceTempView("flat")
      checkSparkAnswerAndLmUsed(spark.sql("select * from flat where id > (select avg(id) from flat)"))
      if (aqe == "true") {
        val text = explainString(q)
        assert(text.contains("LmParquetScan"), s"AQE's initial plan shows our scan:\n$text")
      }
    }
  }

  /** The one Parquet scan of `df`'s plan, which lmspark declined, and the reasons. */
  private def declined(df: DataFrame, run: Boolean = true): (FileSourceScanExec, Seq[String]) = {
    val plan = if (run) executedPlan(df) else df.queryExecution.executedPlan
    assertNoSilentDecline(plan)
    val scans = sparkParquetScans(plan)
    assert(scans.size == 1, plan.toString)
    val reasons = Fallback.reasonsOf(scans.head)
    assert(reasons.isDefined, plan.toString)
    (scans.head, reasons.get)
  }

  test("an unsupported column type is declined with a reason that EXPLAIN shows") {
    // An ML vector: a user-defined type, which lmspark leaves to Spark's reader (named `arr` here).
    val p = newDir("udt")
    spark.createDataFrame((0 until 10).map(i => (i.toLong, org.apache.spark.ml.linalg.Vectors.dense(i.toDouble, 1.0))))
      .toDF("id", "arr").write.parquet(p)
    def q = spark.read.parquet(p)
    val (_, reasons) = declined(q)
    assert(reasons.exists(_.contains("arr")), reasons)
    checkSparkAnswer(q)
    val text = explainString(q)
    assert(text.contains("lmspark fallback: column arr"), text)
    // The EXPLAIN EXTENDED section needs spark.sql.extendedExplainProviders (not in Spark 3.5); its
    // text, ExplainSection, is the same on every line.
    assert(lmspark.plan.ExplainSection.of(q.queryExecution.executedPlan).contains("column arr"))
    if (lmspark.testutil.TestLineApis.hasExplainProviders) {
      val extended = explainString(q, "extended")
      assert(extended.contains("== Extended Information (lmspark) =="), extended)
      assert(extended.contains("column arr"), extended)
    }
  }

  test("_metadata columns are served, with Spark's answers (MetadataColumnsSuite has the rest)") {
    checkSparkAnswerAndLmUsed(flat.select(col("id"), col("_metadata.file_path"), col("_metadata.row_index")))
  }

  test("ignoreCorruptFiles is served by lmspark's scan, as session conf and as read option") {
    withConf("spark.sql.files.ignoreCorruptFiles" -> "true") {
      checkSparkAnswerAndLmUsed(flat)
    }
    checkSparkAnswerAndLmUsed(spark.read.option("ignoreCorruptFiles", "true").parquet(flatPath))
  }

  test("encryption and a disabled vectorized reader are declined with reasons") {
    // Not run: the factory class does not exist; the decline is a planning decision.
    val encrypted = spark.read.schema(flat.schema).option("parquet.crypto.factory.class", "x.Y").parquet(flatPath)
    val (_, r1) = declined(encrypted, run = false)
    assert(r1.exists(_.contains("encryption")), r1)
    withConf("spark.sql.parquet.enableVectorizedReader" -> "false") {
      val (_, r2) = declined(flat)
      assert(r2.exists(_.contains("enableVectorizedReader")), r2)
      checkSparkAnswer(flat)
    }
  }

  test("metrics: output rows, files, row groups and bytes read") {
    val q = flat.where(col("i") === 1)
    val plan = executedPlan(q)
    val scan = lmScans(plan).head
    val m = scan.metrics
    // Late materialization evaluates `i = 1` in the scan: it outputs exactly the passing rows.
    assert(m(LmMetrics.NumOutputRows).value == referenceRows(flat.where(col("i") === 1)).length)
    withConf(lmspark.LmConf.LATE_MATERIALIZATION.key -> "false") {
      // Without it, every row of the row groups not pruned goes up to Spark's Filter.
      val whole = lmScans(executedPlan(flat.where(col("i") === 1))).head.metrics
      assert(whole(LmMetrics.NumOutputRows).value == referenceRows(flat).length)
    }
    val files = spark.read.parquet(flatPath).inputFiles.length
    assert(m("numFiles").value == files)
    assert(m(LmMetrics.FilesRead).value == files)
    assert(m(LmMetrics.FilesFallback).value == 0)
    assert(m(LmMetrics.RowGroupsRead).value >= files)
    assert(m(LmMetrics.BytesRead).value > 0)
  }

  /** The oracle of decompressed bytes: the uncompressed sizes of the pages (dictionary pages
    * included; of a v2 page only its values, as its levels are stored uncompressed) of the first
    * `leaves` leaves of every file under `path`, as parquet-java reads them. */
  private def pageBytes(path: String, leaves: Int = Int.MaxValue): Long = {
    import org.apache.parquet.column.page.{DataPage, DataPageV2}
    spark.read.parquet(path).inputFiles.toSeq.map { f =>
      lmspark.testutil.ParquetOracle.perChunk(java.nio.file.Paths.get(new java.net.URI(f))) { pr =>
        val dict = Option(pr.readDictionaryPage()).fold(0L)(_.getUncompressedSize.toLong)
        dict + Iterator.continually(pr.readPage()).takeWhile(_ != null).map {
          case v2: DataPageV2 => v2.getUncompressedSize.toLong - v2.getRepetitionLevels.size - v2.getDefinitionLevels.size
          case page: DataPage => page.getUncompressedSize.toLong
        }.sum
      }.map(_.take(leaves).sum).sum
    }.sum
  }

  test("a whole read decompresses every page once: lmBytesDecompressed is the pages' uncompressed sizes per parquet-java") {
    val expected = pageBytes(flatPath)
    val m = lmScans(executedPlan(flat.select("id", "i", "b", "d", "s", "dt"))).head.metrics
    assert(expected > 0 && m(LmMetrics.BytesDecompressed).value == expected)
  }

  test("a struct field read by the filter pass and again by its struct's output decompresses each page once") {
    // s.a is filtered first, then read again for the output struct s (Spark's Filter above needs it).
    // About half the rows pass, so every page holds some: each page of id, s.a and s.b is read.
    for (v2 <- Seq(false, true)) {
      val p = newDir(s"struct-once-$v2")
      spark.range(0, 20000, 1, 1).select(col("id"),
        struct(((col("id") * 7919) % 1000).cast("int").as("a"), concat(lit("v"), col("id")).as("b"),
          (col("id") * 3).as("c")).as("s"))
        .write.option("parquet.page.row.count.limit", "1000")
        .option("parquet.writer.version", if (v2) "v2" else "v1").parquet(p)
      val expected = pageBytes(p, leaves = 3) // id, s.a and s.b
      def q = spark.read.parquet(p).where(col("s.a") >= 500).select(col("id"), col("s.b"))
      checkSparkAnswerAndLmUsed(q)
      val m = lmScans(executedPlan(q)).head.metrics
      assert(m(LmMetrics.RowGroupsLate).value > 0, s"v2=$v2: the filter pass did not run")
      assert(expected > 0 && m(LmMetrics.BytesDecompressed).value == expected, s"v2=$v2")
    }
  }

  test("a v2 file with DELTA encodings is read by lmspark itself") {
    val p = newDir("delta")
    spark.range(0, 3000).select(col("id"), (col("id") * 3).cast("int").as("x"), concat(lit("k"), col("id")).as("s"))
      .write.option("parquet.writer.version", "v2").option("parquet.enable.dictionary", "false")
      .parquet(p)
    val plan = checkSparkAnswerAndLmUsed(spark.read.parquet(p).where(col("x") % 2 === 0))
    val m = lmScans(plan).head.metrics
    assert(m(LmMetrics.FilesFallback).value == 0)
    assert(m(LmMetrics.FilesRead).value >= 1)
  }

  /** A parquet-java file with rows [from, until): id, x = id * 3, and h, a 2-byte value annotated
    * FLOAT16 (a logical type lmspark leaves to Spark) or not annotated. Read as binary. */
  private val halfFloatSchema = HalfFloatFiles.schema

  private def writeHalfFloats(dir: String, name: String, from: Long, until: Long, float16: Boolean): Unit =
    HalfFloatFiles.write(dir, name, from, until, float16)

  test("a file lmspark does not read (a FLOAT16 column) goes to Spark's reader inside our scan") {
    val p = newDir("float16")
    writeHalfFloats(p, "f16", 0, 3000, float16 = true)
    val plan = checkSparkAnswerAndLmUsed(spark.read.schema(halfFloatSchema).parquet(p).where(col("x") % 2 === 0))
    val m = lmScans(plan).head.metrics
    assert(m(LmMetrics.FilesFallback).value >= 1)
  }

  test("partition columns are appended and a column missing from a file reads as nulls") {
    val p = newDir("evolve")
    spark.range(0, 100).select(col("id")).write.parquet(s"$p/k=1")
    spark.range(100, 200).select(col("id"), (col("id") % 9).as("extra")).write.parquet(s"$p/k=2")
    def q = spark.read.option("mergeSchema", "true").parquet(p)
    assert(q.schema.fieldNames.toSet == Set("id", "extra", "k"))
    checkSparkAnswerAndLmUsed(q)
    checkSparkAnswerAndLmUsed(q.where(col("extra").isNull).select("k", "id"))
    checkSparkAnswerAndLmUsed(q.groupBy("k").count())
  }

  test("without whole-stage codegen or with many columns, a file handed to Spark's reader still gives batches") {
    val p = newDir("float16-nocodegen")
    writeHalfFloats(p, "f16", 0, 3000, float16 = true)
    writeHalfFloats(p, "plain", 0, 100, float16 = false)
    for ((k, v) <- Seq("spark.sql.codegen.wholeStage" -> "false", "spark.sql.codegen.maxFields" -> "1")) {
      withConf(k -> v) {
        val plan = checkSparkAnswerAndLmUsed(spark.read.schema(halfFloatSchema).parquet(p))
        assert(lmScans(plan).head.metrics(LmMetrics.FilesFallback).value >= 1, s"$k=$v")
        assert(lmScans(plan).head.metrics(LmMetrics.FilesRead).value >= 1, s"$k=$v")
      }
    }
  }
}
