package lmspark.plan

import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper

/**
 * What lmspark did in an executed plan, for `lmspark.explain(df)` and `lmspark.metrics(df)` in
 * Python: every Parquet scan, served by lmspark or declined with its reasons, the reasons its tasks
 * handed files to Spark's reader (after an action), and lmspark's metrics summed over its scans.
 * Answers are JSON text, so that Python needs no knowledge of Spark's plan classes.
 */
object LmReport extends AdaptiveSparkPlanHelper {

  /** `{"scans": [{"served": true|false, "table": ..., "reasons": [...], "fileReasons": {reason: files}}]}` */
  def explainJson(plan: SparkPlan): String = {
    val scans = collectWithSubqueries(plan) {
      case s: LmParquetScanExec =>
        obj(Seq("served" -> "true", "table" -> str(tableOf(s)), "reasons" -> "[]",
          "fileReasons" -> obj(s.fileFallbackReasons.value.toSeq.sortBy(_._1).map { case (r, n) => r -> n.toString })))
      case s: FileSourceScanExec if Fallback.reasonsOf(s).isDefined =>
        obj(Seq("served" -> "false", "table" -> str(ExplainSection.tableOf(s.tableIdentifier, s.relation.location.rootPaths)),
          "reasons" -> Fallback.reasonsOf(s).get.map(str).mkString("[", ", ", "]"), "fileReasons" -> "{}"))
    }
    obj(Seq("scans" -> scans.mkString("[", ", ", "]")))
  }

  /** `{metric name: value}` summed over every lmspark scan of the plan, plus `"scans"`. */
  def metricsJson(plan: SparkPlan): String = {
    val scans = collectWithSubqueries(plan) { case s: LmParquetScanExec => s }
    val sums = scans.flatMap(_.metrics.toSeq).groupBy(_._1).map { case (k, ms) => k -> ms.map(_._2.value).sum }
    obj(("scans" -> scans.size.toString) +: sums.toSeq.sortBy(_._1).map { case (k, v) => k -> v.toString })
  }

  private def tableOf(s: LmParquetScanExec): String = ExplainSection.tableOf(s.tableIdentifier, s.relation.location.rootPaths)

  private def obj(fields: Seq[(String, String)]): String =
    fields.map { case (k, v) => s"${str(k)}: $v" }.mkString("{", ", ", "}")

  private def str(s: String): String = {
    val b = new StringBuilder("\"")
    s.foreach {
      case '"' => b ++= "\\\""
      case '\\' => b ++= "\\\\"
      case c if c < ' ' => b ++= f"\\u${c.toInt}%04x"
      case c => b += c
    }
    (b += '"').toString
  }
}
