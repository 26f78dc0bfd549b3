package lmspark.plan

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat

import lmspark.LmConf
import lmspark.shim.{DeltaTables, SparkScanShim}

/**
 * Replaces each `FileSourceScanExec` that reads plain `ParquetFileFormat`, or a Delta table that
 * reads as plain Parquet ([[DeltaTables]]), with [[LmParquetScanExec]], or marks it declined with
 * its reasons ([[Fallback]]; a Delta scan keeps Delta's format).
 *
 * Idempotent: a scan already replaced or declined no longer reads either format.
 * The struct fields nothing above a scan reads ([[NestedFieldUse]]) are found on the whole plan
 * before any scan is replaced.
 * Then a top-k straight over a replaced scan reads its sort columns first ([[TopKRule]]).
 * Does nothing when `spark.lmspark.enabled` is false. Whatever its value, a plan holding a scan it
 * could replace is refused while the session holds an unknown `spark.lmspark.*` key
 * ([[UnknownFlags]]).
 */
case class LmScanRule(session: SparkSession) extends Rule[SparkPlan] {
  override def apply(plan: SparkPlan): SparkPlan = {
    if (plan.exists(readsParquet)) UnknownFlags.check(conf)
    if (!LmConf.ENABLED.get(conf)) return plan
    val unread = if (LmConf.PRUNING_NESTED_FIELDS.get(conf)) NestedFieldUse.unread(plan) else null
    def replace(scan: FileSourceScanExec, reasons: Seq[String], decline: Seq[String] => SparkPlan): SparkPlan =
      reasons ++ ScanSupport.declineReasons(scan, session) match {
        case Nil => LmParquetScanExec(SparkScanShim.fieldsOf(scan),
          Option(unread).flatMap(u => Option(u.get(scan))).getOrElse(Set.empty[Seq[String]]))
        case all => decline(all)
      }
    val replaced = plan.transformUp {
      case scan: FileSourceScanExec if isPlainParquet(scan) =>
        replace(scan, Nil, Fallback.decline(scan, _))
      case scan: FileSourceScanExec if DeltaTables.isDelta(scan.relation.fileFormat) =>
        val format = scan.relation.fileFormat
        replace(scan, DeltaTables.declineReasons(format, scan.requiredSchema),
          reasons => Fallback.decline(scan, reasons, DeltaTables.declined(format, reasons)))
    }
    TopKRule(replaced, conf)
  }

  private def isPlainParquet(scan: FileSourceScanExec): Boolean =
    scan.relation.fileFormat.getClass == classOf[ParquetFileFormat]

  /** A scan this rule replaces or declines (plain Parquet, or a Delta table). */
  private def readsParquet(node: SparkPlan): Boolean = node match {
    case scan: FileSourceScanExec => isPlainParquet(scan) || DeltaTables.isDelta(scan.relation.fileFormat)
    case _ => false
  }
}
