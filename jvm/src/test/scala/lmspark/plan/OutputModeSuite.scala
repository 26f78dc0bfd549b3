package lmspark.plan

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.execution.{ColumnarToRowExec, FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.LmSparkSession

/**
 * `spark.lmspark.output`: the scan produces `ColumnarBatch`es (`columnar`) or `UnsafeRow`s written
 * from its vectors (`row`), and `auto` chooses as Spark chooses for its own scan. Both modes give
 * vanilla Spark's rows (and each other's) on a 150-column table of every flat type with nulls,
 * dictionary-encoded and plain columns, partition columns and filters; the plan shows the mode
 * really taken (no `ColumnarToRow` above a row scan), and the mode changes nothing that is read.
 */
class OutputModeSuite extends AnyFunSuite with LmSparkSession {

  /** The metadata cache off: the modes' metrics (bytes read among them) are compared run against
    * run, so neither may find what the other read in the cache. */
  override protected def sparkConf: Map[String, String] = Map(lmspark.LmConf.METADATA_CACHE_MAX_BYTES.key -> "0")

  private val Output = "spark.lmspark.output"

  /** The 15 column types, cycled over the wide table's columns. */
  private val kinds: Seq[String] = Seq("boolean", "tinyint", "smallint", "int", "bigint", "float", "double",
    "decimal(7,2)", "decimal(15,3)", "decimal(28,5)", "string", "binary", "date", "timestamp", "timestamp_ntz")

  private val wideColumns = 150

  /** Column `j`: type `kinds(j % 15)`; columns of even blocks of 15 have few distinct values and
    * are dictionary-encoded, those of odd blocks have many and are written plain (dictionary off
    * for the column); about one value in 7 (varying by column) is null. Seeded by the column. */
  private def wideColumn(j: Int): Column = {
    val kind = kinds(j % kinds.size)
    val h = xxhash64(col("id"), lit(j.toLong))
    val dictionary = (j / kinds.size) % 2 == 0
    val v = if (dictionary) pmod(h, lit(23)) else pmod(h, lit(1000000007L))
    val signed = v - (if (dictionary) 11 else 500000000)
    val value: Column = kind match {
      case "boolean" => pmod(h, lit(2)) === 1
      case "tinyint" => (signed % 128).cast(kind)
      case "smallint" => (signed % 32768).cast(kind)
      case "int" => signed.cast(kind)
      case "bigint" => signed * 1000003L
      case "float" | "double" =>
        when(pmod(h, lit(41)) === 0, lit(Double.NaN)).when(pmod(h, lit(43)) === 0, lit(-0.0))
          .otherwise(signed / 7.0).cast(kind)
      case "decimal(28,5)" => (signed * lit(BigDecimal("1234567890123.00001"))).cast(kind)
      case "decimal(7,2)" => ((signed % 10000000) / 100.0).cast(kind)
      case "decimal(15,3)" => (signed / 1000.0).cast(kind)
      case "string" => concat(lit("s\u00e9"), v.cast("string"), when(pmod(h, lit(5)) === 0, lit("")).otherwise(lit("xyz")))
      case "binary" => concat(lit("b"), v.cast("string")).cast("binary")
      case "date" => date_add(lit("2000-01-01").cast("date"), pmod(signed, lit(30000)).cast("int") - 15000)
      case "timestamp" => timestamp_micros(lit(946684800000000L) + signed * 1000003L)
      case "timestamp_ntz" => (timestamp_micros(lit(946684800000000L) + signed * 999983L)).cast("timestamp_ntz")
      case other => throw new IllegalArgumentException(other)
    }
    when(pmod(xxhash64(col("id"), lit(-j - 1L)), lit(7 + j % 5)) === 0, lit(null)).otherwise(value).as(s"c$j")
  }

  /** 150 data columns and two partition columns: `p` (int) and `q` (string, null for some rows). */
  private lazy val widePath: String = {
    val p = newDir("wide")
    val df = spark.range(0, 12000, 1, 2).select(
      Seq(col("id")) ++ (1 until wideColumns).map(wideColumn) ++
        Seq(pmod(col("id"), lit(3)).cast("int").as("p"),
          when(col("id") % 5 === 0, lit(null)).otherwise(concat(lit("q"), (col("id") % 2).cast("string"))).as("q")): _*)
    val plain = (1 until wideColumns).filter(j => (j / kinds.size) % 2 == 1)
    plain.foldLeft(df.write.option("parquet.block.size", 128 * 1024).option("parquet.page.row.count.limit", 700)) {
      (w, j) => w.option(s"parquet.enable.dictionary#c$j", "false")
    }.partitionBy("p", "q").parquet(p)
    p
  }

  private def wide: DataFrame = spark.read.parquet(widePath)

  /** One column of each type (c1 to c15; c15, a boolean, and c25 / c26, a string and a binary,
    * are plain, the others dictionary-encoded) and the partition columns: 19 fields, few enough
    * for whole-stage codegen. */
  private def narrow: DataFrame =
    wide.select(((1 to kinds.size) ++ Seq(25, 26)).map(j => col(s"c$j")) ++ Seq(col("p"), col("q")): _*)

  private def filters: Seq[(String, DataFrame => DataFrame)] = Seq(
    "none" -> identity,
    "dictionary bigint" -> (_.where(col("c4") > 3)),
    "plain string" -> (_.where(col("c25").startsWith("s\u00e91"))),
    "partition" -> (_.where(col("p") === 1 && col("q").isNull)),
    "mixed" -> (_.where(col("c13") >= lit("2000-06-01").cast("date") || col("c5").isNull)))

  private def modeOf(plan: SparkPlan): Boolean = {
    val scans = lmScans(plan)
    assert(scans.nonEmpty, s"no LmParquetScan:\n$plan")
    val modes = scans.map(_.supportsColumnar).distinct
    assert(modes.size == 1, plan.toString)
    modes.head
  }

  /** The plan really is in `columnar` mode or not: a row scan has no ColumnarToRow above it, a
    * columnar one has it as its parent, and EXPLAIN says which. */
  private def assertMode(plan: SparkPlan, columnar: Boolean): Unit = {
    assert(modeOf(plan) == columnar, plan.toString)
    val c2r = collectWithSubqueries(plan) { case c: ColumnarToRowExec => c }
    if (columnar) {
      assert(c2r.exists(_.child.isInstanceOf[LmParquetScanExec]) ||
        c2r.exists(c => collect(c.child) { case s: LmParquetScanExec => s }.nonEmpty), plan.toString)
    } else {
      assert(c2r.isEmpty, s"row mode, yet ColumnarToRow in the plan:\n$plan")
    }
    val text = plan.toString
    val want = if (columnar) "columnar" else "row"
    assert(text.contains(s"LmOutput: $want") && text.contains(s"Batched: $columnar"), text)
  }

  private def collectSorted(df: DataFrame): Seq[String] = normalized(df.collect())

  private def readMetrics(plan: SparkPlan): Seq[(String, Long)] = {
    val keys = Seq(LmMetrics.PagesRead, LmMetrics.PagesTotal, LmMetrics.RowGroupsRead, LmMetrics.BytesRead,
      LmMetrics.FilesRead, LmMetrics.FilesFallback, LmMetrics.NumOutputRows)
    keys.map(k => k -> lmScans(plan).map(_.metrics(k).value).sum)
  }

  test("the wide table has dictionary-encoded and plain chunks of every type, nulls and several row groups") {
    val files = org.apache.commons.io.FileUtils.listFiles(new File(widePath), Array("parquet"), true).asScala.toSeq
    assert(files.size > 1)
    val conf = new Configuration()
    val chunks = files.flatMap { f =>
      val r = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(f.getAbsolutePath), conf))
      try r.getFooter.getBlocks.asScala.toSeq.map(b => b -> r.getFooter.getBlocks.size) finally r.close()
    }
    assert(chunks.exists(_._2 > 1), "some file has several row groups")
    val byColumn = chunks.flatMap(_._1.getColumns.asScala).groupBy(_.getPath.toDotString)
    for (j <- 1 until wideColumns) {
      val cs = byColumn(s"c$j")
      val kind = kinds(j % kinds.size)
      val dict = cs.exists(_.hasDictionaryPage)
      // parquet-java's v1 writer never dictionary-encodes booleans or FIXED_LEN_BYTE_ARRAY (decimal(28,5)).
      val expected = (j / kinds.size) % 2 == 0 && kind != "boolean" && kind != "decimal(28,5)"
      assert(dict == expected, s"c$j ($kind) dictionary pages: $dict")
      assert(cs.exists(_.getStatistics.getNumNulls > 0), s"c$j has nulls")
    }
  }

  test("row and columnar output give vanilla Spark's rows on 150 mixed columns, with filters") {
    assert(wide.schema.size == wideColumns + 2)
    for ((name, f) <- filters) {
      val byMode = Seq("columnar", "row").map { mode =>
        withConf(Output -> mode) {
          val plan = checkSparkAnswerAndLmUsed(f(wide))
          assertMode(plan, columnar = mode == "columnar")
          (collectSorted(f(wide)), readMetrics(plan))
        }
      }
      assert(byMode(0)._1 == byMode(1)._1, s"filter $name: row and columnar rows differ")
      assert(byMode(0)._2 == byMode(1)._2, s"filter $name: the mode changed what was read")
      assert(byMode(1)._2.toMap.apply(LmMetrics.PagesRead) > 0, s"filter $name read no pages")
    }
  }

  test("row and columnar output agree on a narrow projection, across batch boundaries and in aggregates") {
    for (batchSize <- Seq("4096", "333"); mode <- Seq("columnar", "row")) {
      withConf(Output -> mode, "spark.lmspark.batchSize" -> batchSize) {
        for ((name, f) <- filters) {
          val plan = checkSparkAnswerAndLmUsed(f(narrow))
          assertMode(plan, columnar = mode == "columnar")
        }
        // Operators that keep or serialise rows: aggregation with a shuffle, sort, distinct.
        checkSparkAnswerAndLmUsed(narrow.groupBy("p", "q").agg(count(lit(1)), sum("c4"), max("c11"), min("c10"),
          sum("c7"), sum("c8"), sum("c9"), countDistinct("c12")))
        checkSparkAnswerAndLmUsed(narrow.orderBy(col("c11").desc_nulls_last, col("c4")))
        checkSparkAnswerAndLmUsed(narrow.select("c10", "c11", "c12", "q").distinct())
      }
    }
  }

  /** Whether vanilla Spark (lmspark off) reads `df`'s Parquet scan as batches. */
  private def vanillaColumnar(df: => DataFrame): Boolean =
    withConf("spark.lmspark.enabled" -> "false") {
      val scans = collectWithSubqueries(executedPlan(df)) { case s: FileSourceScanExec => s }
      assert(scans.nonEmpty)
      scans.head.supportsColumnar
    }

  test("auto follows vanilla Spark: batches for a narrow schema, rows for 150 columns or without codegen") {
    val cases = Seq[(String, () => DataFrame, Seq[(String, String)])](
      ("narrow", () => narrow, Nil),
      ("wide", () => wide, Nil),
      ("narrow, maxFields 10", () => narrow, Seq("spark.sql.codegen.maxFields" -> "10")),
      ("narrow, no whole-stage codegen", () => narrow.where(col("c4") > 0), Seq("spark.sql.codegen.wholeStage" -> "false")))
    for ((name, df, confs) <- cases) withConf(confs: _*) {
      val expected = vanillaColumnar(df())
      withConf(Output -> "auto") {
        val plan = checkSparkAnswerAndLmUsed(df())
        assertMode(plan, expected)
        name match {
          case "narrow" => assert(expected, "vanilla reads a narrow schema as batches")
          case _ => assert(!expected, s"$name: vanilla reads rows")
        }
      }
    }
    // The default is auto.
    assert(spark.conf.get(Output, "auto") == "auto")
    assert(!modeOf(executedPlan(wide)))
    assert(modeOf(executedPlan(narrow)))
  }

  test("forced modes hold without codegen too, and numOutputRows counts the rows in both") {
    for (wholeStage <- Seq("true", "false"); mode <- Seq("columnar", "row")) {
      withConf(Output -> mode, "spark.sql.codegen.wholeStage" -> wholeStage) {
        def q = narrow.where(col("c12").isNotNull)
        val plan = checkSparkAnswerAndLmUsed(q)
        assertMode(plan, columnar = mode == "columnar")
        val expectedRows = referenceRows(narrow).length
        val scanRows = readMetrics(executedPlan(narrow)).toMap.apply(LmMetrics.NumOutputRows)
        assert(scanRows == expectedRows, s"mode $mode, wholeStage $wholeStage")
      }
    }
  }

  test("a file handed to Spark's reader is written as rows too") {
    val p = newDir("fallback")
    writeHalfFloats(p)
    spark.range(0, 500).select(col("id"), (col("id") * 3).cast("int").as("x"),
      when(col("id") % 4 === 0, lit(null)).otherwise(col("id").cast("string").cast("binary")).as("h"))
      .write.mode("append").parquet(p)
    withConf(Output -> "row") {
      val plan = checkSparkAnswerAndLmUsed(spark.read.schema("id long, x int, h binary").parquet(p).where(col("x") % 2 === 0))
      assertMode(plan, columnar = false)
      val m = lmScans(plan).head.metrics
      assert(m(LmMetrics.FilesFallback).value >= 1 && m(LmMetrics.FilesRead).value >= 1)
    }
  }

  /** A parquet-java file lmspark hands to Spark's reader: `h` is annotated FLOAT16. */
  private def writeHalfFloats(dir: String): Unit =
    lmspark.testutil.HalfFloatFiles.write(dir, "f16", 0, 2000, float16 = true)
}
