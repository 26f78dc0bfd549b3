package lmspark.plan

import org.apache.spark.sql.ExtendedExplainGenerator
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper

/**
 * The "lmspark" section of `EXPLAIN EXTENDED` (registered by `enable_lm` in
 * `spark.sql.extendedExplainProviders`): which Parquet scans lmspark serves, and why it declined
 * the others.
 */
class LmExplain extends ExtendedExplainGenerator with AdaptiveSparkPlanHelper {
  override def title: String = "lmspark"

  override def generateExtendedInfo(plan: SparkPlan): String = {
    val lines = collectWithSubqueries(plan) {
      case s: LmParquetScanExec =>
        s"LmParquetScan: ${s.tableIdentifier.map(_.unquotedString).getOrElse(s.relation.location.rootPaths.mkString(","))}"
      case s: FileSourceScanExec if Fallback.reasonsOf(s).isDefined =>
        s"Spark scan (lmspark fallback): ${Fallback.reasonsOf(s).get.mkString("; ")}"
    }
    if (lines.isEmpty) "no Parquet scans" else lines.distinct.mkString("\n")
  }
}
