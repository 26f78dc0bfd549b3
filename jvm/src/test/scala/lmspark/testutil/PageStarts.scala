package lmspark.testutil

import java.nio.file.Path

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.parquet.hadoop.ParquetFileReader

/** Where a file's pages start, read from parquet-java's offset indexes (for predicates whose
  * literals sit on page boundaries). */
object PageStarts {

  /** First rows of the pages of each row group's first column (row group starts when there is no
    * offset index), as row numbers in the file. */
  def of(file: Path): IndexedSeq[Int] = {
    val r = ParquetFileReader.open(new LocalInputFile(file))
    try {
      var start = 0L
      val out = ArrayBuffer.empty[Int]
      r.getRowGroups.asScala.foreach { b =>
        Try(r.readOffsetIndex(b.getColumns.get(0))).toOption.flatMap(Option(_)) match {
          case Some(oi) => (0 until oi.getPageCount).foreach(p => out += (start + oi.getFirstRowIndex(p)).toInt)
          case None => out += start.toInt
        }
        start += b.getRowCount
      }
      out.toIndexedSeq
    } finally r.close()
  }
}
