package lmspark.testutil

import java.io.File
import java.nio.file.Files

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.scalactic.source.Position
import org.scalatest.{BeforeAndAfterAll, Suite}

import lmspark.LmSparkExtensions
import lmspark.plan.{Fallback, LmParquetScanExec}

/**
 * A local Spark session with lmspark installed, and the two Spark-level checks every suite uses:
 *  - [[checkSparkAnswer]]: lmspark gives the same rows as vanilla Spark with filter pushdown off
 *    (which is the data itself);
 *  - [[checkSparkAnswerAndLmUsed]]: the same, and lmspark's scan really ran.
 * Every plan it sees is also checked for silent declines: a Parquet scan lmspark did not take
 * must carry a reason.
 */
trait LmSparkSession extends BeforeAndAfterAll with AdaptiveSparkPlanHelper { self: Suite =>

  private var _spark: SparkSession = _
  protected def spark: SparkSession = _spark
  protected lazy val tempRoot: File = Files.createTempDirectory("lmspark-test").toFile

  protected def sparkConf: Map[String, String] = Map.empty

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    val b = SparkSession.builder()
      .master("local[2]")
      .appName(getClass.getSimpleName)
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "4")
      .config("spark.sql.session.timeZone", "UTC")
      .config("spark.sql.extendedExplainProviders", "lmspark.plan.LmExplain")
      .withExtensions { e => new LmSparkExtensions().apply(e); () }
    (TestLineApis.sessionDefaults ++ sparkConf).foreach { case (k, v) => b.config(k, v) }
    _spark = b.getOrCreate()
  }

  override protected def afterAll(): Unit = {
    try if (_spark != null) _spark.stop()
    finally {
      org.apache.commons.io.FileUtils.deleteQuietly(tempRoot)
      super.afterAll()
    }
  }

  protected def newDir(name: String): String = new File(tempRoot, s"$name-${System.nanoTime()}").getAbsolutePath

  /** Runs `body` with the given SQL confs set, restoring the previous values afterwards. */
  protected def withConf[T](pairs: (String, String)*)(body: => T): T = {
    val conf = spark.conf
    val old = pairs.map { case (k, _) => k -> conf.getOption(k) }
    pairs.foreach { case (k, v) => conf.set(k, v) }
    try body
    finally old.foreach {
      case (k, Some(v)) => conf.set(k, v)
      case (k, None) => conf.unset(k)
    }
  }

  /** The executed plan of a query that has run (AQE's final plan when adaptive). */
  protected def executedPlan(df: DataFrame): SparkPlan = {
    df.collect()
    df.queryExecution.executedPlan
  }

  protected def lmScans(plan: SparkPlan): Seq[LmParquetScanExec] =
    collectWithSubqueries(plan) { case s: LmParquetScanExec => s }

  protected def sparkParquetScans(plan: SparkPlan): Seq[FileSourceScanExec] =
    collectWithSubqueries(plan) {
      case s: FileSourceScanExec if s.relation.fileFormat.isInstanceOf[ParquetFileFormat] => s
    }

  /** Fails if any Parquet scan in `plan` was declined without a reason. */
  protected def assertNoSilentDecline(plan: SparkPlan)(implicit pos: Position): Unit = {
    if (spark.conf.get("spark.lmspark.enabled", "true").toBoolean) {
      sparkParquetScans(plan).foreach { s =>
        val reasons = Fallback.reasonsOf(s)
        assert(reasons.exists(r => r.nonEmpty && r.forall(_.trim.nonEmpty)),
          s"Parquet scan declined without a reason:\n$s")
      }
    }
  }

  /** Rows of `df` as a sorted, comparable multiset (NaN, -0.0, binary compared by value). */
  protected def normalized(rows: Array[Row]): Seq[String] =
    rows.toSeq.map(r => r.toSeq.map(LmSparkSession.render).mkString("(", ",", ")")).sorted

  /** The rows with lmspark off and filter pushdown off: the data itself. */
  protected def referenceRows(query: => DataFrame): Array[Row] =
    withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
      query.collect()
    }

  /**
   * lmspark's rows equal the reference; returns lmspark's executed plan. `query` is evaluated
   * once per run and must build a new DataFrame each time (a DataFrame keeps its first plan).
   */
  protected def checkSparkAnswer(query: => DataFrame)(implicit pos: Position): SparkPlan = {
    val reference = query
    val expected = withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
      normalized(reference.collect())
    }
    withConf("spark.lmspark.enabled" -> "true") {
      val df = query
      assert(!(df eq reference), "checkSparkAnswer needs a query that builds a new DataFrame (a def, not a val)")
      val actual = normalized(df.collect())
      val plan = df.queryExecution.executedPlan
      assertNoSilentDecline(plan)
      if (actual != expected) {
        val onlyActual = actual.diff(expected).take(5)
        val onlyExpected = expected.diff(actual).take(5)
        fail(s"lmspark's answer differs from Spark's: ${actual.size} rows vs ${expected.size}; " +
          s"only in lmspark: $onlyActual; only in Spark: $onlyExpected\n$plan")
      }
      plan
    }
  }

  /** As [[checkSparkAnswer]], and lmspark's scan ran. */
  protected def checkSparkAnswerAndLmUsed(query: => DataFrame)(implicit pos: Position): SparkPlan = {
    val plan = checkSparkAnswer(query)
    assert(lmScans(plan).nonEmpty, s"lmspark's scan was not used:\n$plan")
    plan
  }
}

object LmSparkSession {
  def render(v: Any): String = v match {
    case null => "null"
    case d: Double if d.isNaN => "NaN"
    case f: Float if f.isNaN => "NaN"
    case d: Double => java.lang.Double.toString(d)
    case f: Float => java.lang.Float.toString(f)
    case b: Array[Byte] => b.map("%02x".format(_)).mkString("0x", "", "")
    case other => s"${other.getClass.getSimpleName}:$other"
  }
}
