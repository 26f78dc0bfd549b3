package lmspark

/**
 * The physical-plan side of lmspark.
 *
 * Files:
 *  - `LmScanRule.scala`: replaces Spark's Parquet scan, or declines it with reasons.
 *  - `ScanSupport.scala`: the plan-level reasons to decline.
 *  - `Fallback.scala`: how a decline is recorded on the plan and shown in EXPLAIN.
 *  - `LmParquetScanExec.scala`: the scan node.
 *  - `LmMetrics.scala`: its SQL metrics.
 *  - `LmExplain.scala`: the lmspark section of EXPLAIN EXTENDED.
 */
package object plan
