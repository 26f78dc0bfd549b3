package lmspark.plan

import org.apache.spark.SparkContext
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * The SQL metrics that `LmParquetScanExec` shows in the Spark UI, created on the driver. The
 * executor-side ones travel to tasks inside [[ScanMetrics]]; the driver-side file listing metrics
 * (number of files, their size, partitions) are Spark's own, taken from the scan we wrap.
 */
object LmMetrics {
  val NumOutputRows = "numOutputRows"
  val FilesRead = "lmFilesRead"
  val FilesFallback = "filesFallback"
  val RowGroupsRead = "rowGroupsRead"
  val BytesRead = "lmBytesRead"
  val ScanTime = "lmScanTime"

  def create(sc: SparkContext): Map[String, SQLMetric] = Map(
    NumOutputRows -> SQLMetrics.createMetric(sc, "number of output rows"),
    FilesRead -> SQLMetrics.createMetric(sc, "files read by lmspark"),
    FilesFallback -> SQLMetrics.createMetric(sc, "files handed to Spark's reader"),
    RowGroupsRead -> SQLMetrics.createMetric(sc, "row groups read"),
    BytesRead -> SQLMetrics.createSizeMetric(sc, "bytes read"),
    ScanTime -> SQLMetrics.createNanoTimingMetric(sc, "lmspark scan time"))

  def scanMetrics(m: Map[String, SQLMetric]): ScanMetrics =
    ScanMetrics(m(FilesRead), m(FilesFallback), m(RowGroupsRead), m(BytesRead), m(ScanTime))
}

/** The executor-side metrics one scan's readers update. Serializable: SQLMetrics are accumulators. */
final case class ScanMetrics(
    filesRead: SQLMetric,
    filesFallback: SQLMetric,
    rowGroupsRead: SQLMetric,
    bytesRead: SQLMetric,
    scanTimeNs: SQLMetric)
