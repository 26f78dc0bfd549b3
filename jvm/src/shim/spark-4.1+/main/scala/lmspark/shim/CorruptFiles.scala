package lmspark.shim

import org.apache.spark.sql.execution.datasources.DataSourceUtils

/** Which read errors `FileScanRDD` with `ignoreCorruptFiles` treats as a corrupt file, from Spark
  * 4.1 on: as `DataSourceUtils.shouldIgnoreCorruptFileException` says (after `FileScanRDD` has ruled
  * out missing files, access and HDFS block errors). */
object CorruptFiles {
  def ignoredAsCorrupt(e: Throwable): Boolean = DataSourceUtils.shouldIgnoreCorruptFileException(e)
}
