package lmspark.shim

import java.io.IOException

/** Which read errors `FileScanRDD` with `ignoreCorruptFiles` treats as a corrupt file, on Spark 3.5
  * and 4.0: any runtime or I/O error (after it has ruled out missing files, access and HDFS block
  * errors). */
object CorruptFiles {
  def ignoredAsCorrupt(e: Throwable): Boolean = e match {
    case _: RuntimeException | _: IOException => true
    case _ => false
  }
}
