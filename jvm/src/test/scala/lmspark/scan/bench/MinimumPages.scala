package lmspark.scan.bench

import java.nio.file.Paths

import scala.jdk.CollectionConverters._

import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.spark.sql.types.DateType

import lmspark.testutil.LocalInputFile
import lmspark.testutil.{LmFile, LmReading}

/** The fewest data pages a query `lo <= <date column> < hi` over `SELECT *` can read from one file:
  * in every column, the pages holding at least one row whose date is in range. Computed from the
  * data itself (the date column read in full) and parquet-java's offset indexes, independently of
  * lmspark's pruning; the benchmark's `month_star` check compares lmspark's `pagesRead` with it.
  *
  * {{{ Test/runMain lmspark.scan.bench.MinimumPages <file.parquet> <date column> <yyyy-mm-dd lo> <yyyy-mm-dd hi> }}} */
object MinimumPages {
  def main(args: Array[String]): Unit = {
    val Array(path, column, loText, hiText) = args
    val lo = java.time.LocalDate.parse(loText).toEpochDay.toInt
    val hi = java.time.LocalDate.parse(hiText).toEpochDay.toInt
    val file = new LmFile(Paths.get(path))
    val pr = ParquetFileReader.open(new LocalInputFile(Paths.get(path)))
    try {
      val col = file.columnIndex(column)
      var minimum = 0L
      var total = 0L
      var matching = 0L
      for (rg <- 0 until file.rowGroups) {
        val rows = file.rowCount(rg).toInt
        val values = LmReading.readAll(file.reader(rg, col, DateType), DateType, rows, 65536)
        val hit = values.map {
          case d: java.time.LocalDate => val e = d.toEpochDay; e >= lo && e < hi
          case i: Int => i >= lo && i < hi
          case other => throw new IllegalStateException(s"unexpected value $other")
        }.toArray
        val prefix = hit.scanLeft(0)((a, h) => a + (if (h) 1 else 0))
        matching += prefix.last
        pr.getFooter.getBlocks.get(rg).getColumns.asScala.foreach { c =>
          val oi = pr.readOffsetIndex(c)
          total += oi.getPageCount
          for (i <- 0 until oi.getPageCount) {
            val s = oi.getFirstRowIndex(i).toInt
            val e = (oi.getLastRowIndex(i, rows) + 1).toInt
            if (prefix(e) - prefix(s) > 0) minimum += 1
          }
        }
      }
      println(s"rows in range: $matching; data pages: $total; minimum data pages to read: $minimum")
    } finally { pr.close(); file.close() }
  }
}
