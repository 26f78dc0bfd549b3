package lmspark.plan

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper

/**
 * The text of lmspark's section of `EXPLAIN EXTENDED` (shown through `LmExplain` on the lines that
 * have `spark.sql.extendedExplainProviders`): which Parquet scans lmspark serves, and why it
 * declined the others. One entry per scan (the same scan twice, once), as `str(lmspark.explain(df))`
 * prints it, so that a Spark Connect client (`lmspark.explain`) reads it back whole:
 * {{{
 * LmParquetScan: <table or paths>
 * Spark scan (lmspark fallback): <table or paths>
 *   reason: <reason>
 * }}}
 */
object ExplainSection extends AdaptiveSparkPlanHelper {
  def of(plan: SparkPlan): String = {
    val entries = collectWithSubqueries(plan) {
      case s: LmParquetScanExec =>
        s"LmParquetScan: ${tableOf(s.tableIdentifier, s.relation.location.rootPaths)}"
      case s: FileSourceScanExec if Fallback.reasonsOf(s).isDefined =>
        (s"Spark scan (lmspark fallback): ${tableOf(s.tableIdentifier, s.relation.location.rootPaths)}" +:
          Fallback.reasonsOf(s).get.map(r => s"  reason: ${r.replace('\n', ' ')}")).mkString("\n")
    }
    if (entries.isEmpty) "no Parquet scans" else entries.distinct.mkString("\n")
  }

  /** A scan's table name, or its root paths. */
  def tableOf(table: Option[TableIdentifier], paths: Seq[Path]): String =
    table.map(_.unquotedString).getOrElse(paths.mkString(","))
}
