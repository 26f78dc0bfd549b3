package lmspark.plan

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat

import lmspark.LmConf
import lmspark.shim.SparkScanShim

/**
 * Replaces each `FileSourceScanExec` that reads plain `ParquetFileFormat` with
 * [[LmParquetScanExec]], or marks it declined with its reasons ([[Fallback]]).
 *
 * Idempotent: a scan already replaced or declined no longer reads plain `ParquetFileFormat`.
 * The struct fields nothing above a scan reads ([[NestedFieldUse]]) are found on the whole plan
 * before any scan is replaced.
 * Then a top-k straight over a replaced scan reads its sort columns first ([[TopKRule]]).
 * Does nothing when `spark.lmspark.enabled` is false.
 */
case class LmScanRule(session: SparkSession) extends Rule[SparkPlan] {
  override def apply(plan: SparkPlan): SparkPlan = {
    UnknownFlags.warnOnce(conf)
    if (!LmConf.ENABLED.get(conf)) return plan
    val unread = if (LmConf.PRUNING_NESTED_FIELDS.get(conf)) NestedFieldUse.unread(plan) else null
    val replaced = plan.transformUp {
      case scan: FileSourceScanExec if scan.relation.fileFormat.getClass == classOf[ParquetFileFormat] =>
        ScanSupport.declineReasons(scan, session) match {
          case Nil => LmParquetScanExec(SparkScanShim.fieldsOf(scan),
            Option(unread).flatMap(u => Option(u.get(scan))).getOrElse(Set.empty[Seq[String]]))
          case reasons => Fallback.decline(scan, reasons)
        }
    }
    TopKRule(replaced, conf)
  }
}
