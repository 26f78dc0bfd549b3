package lmspark

import org.apache.spark.sql.SparkSessionExtensions
import org.apache.spark.sql.execution.ColumnarRule

import lmspark.plan.LmScanRule

/**
 * What [[LmSparkExtensions]] injects once [[SparkLineGate]] has found the running Spark to be the
 * line this jar was built for.
 *
 * It injects [[lmspark.plan.LmScanRule]] twice, because Spark runs physical rules on two paths:
 *  1. as a query-stage preparation rule, which AQE runs on its initial plan and on every
 *     re-optimisation, so that `EXPLAIN` of an adaptive plan already shows `LmParquetScan`;
 *  2. as a columnar rule (`preColumnarTransitions`), which runs in `QueryExecution.preparations`
 *     for plans that AQE does not take, and again by AQE after each stage is created.
 * The rule is idempotent, so running it on both paths is harmless.
 */
object LmInjection {
  def inject(ext: SparkSessionExtensions): Unit = {
    LmConf.registerAll() // before the session's confs are set, so that Spark checks them
    ext.injectQueryStagePrepRule(session => LmScanRule(session))
    ext.injectColumnar(session => new ColumnarRule {
      override def preColumnarTransitions = LmScanRule(session)
    })
  }
}
