package lmspark.plan

import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper

/**
 * The text of lmspark's section of `EXPLAIN EXTENDED` (shown through `LmExplain` on the lines that
 * have `spark.sql.extendedExplainProviders`): which Parquet scans lmspark serves, and why it
 * declined the others.
 */
object ExplainSection extends AdaptiveSparkPlanHelper {
  def of(plan: SparkPlan): String = {
    val lines = collectWithSubqueries(plan) {
      case s: LmParquetScanExec =>
        s"LmParquetScan: ${s.tableIdentifier.map(_.unquotedString).getOrElse(s.relation.location.rootPaths.mkString(","))}"
      case s: FileSourceScanExec if Fallback.reasonsOf(s).isDefined =>
        s"Spark scan (lmspark fallback): ${Fallback.reasonsOf(s).get.mkString("; ")}"
    }
    if (lines.isEmpty) "no Parquet scans" else lines.distinct.mkString("\n")
  }
}
