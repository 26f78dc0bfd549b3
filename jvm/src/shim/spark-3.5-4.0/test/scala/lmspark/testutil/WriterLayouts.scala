package lmspark.testutil

import org.apache.spark.sql.types.DataType

/** What the tests ask of Spark's writer and vectors on the 3.5 and 4.0 lines (parquet-java 1.13 and
  * 1.15: no row-count limit for row groups; Spark's column vectors cannot hold NULL-typed columns). */
object WriterLayouts {
  /** Writer options for row groups of exactly `rows` rows: the block size is one byte and the size
    * check runs every `rows` rows, so each check closes the row group. Pages then follow the size
    * checks, not `parquet.page.row.count.limit`. */
  def rowGroupRows(rows: Int): Seq[(String, String)] = Seq("parquet.block.size" -> "1",
    "parquet.page.size.row.check.min" -> rows.toString, "parquet.page.size.row.check.max" -> rows.toString)

  /** None: the line's column vectors cannot hold a NULL-typed column. */
  val nullTypeVectors: Seq[DataType] = Nil
}
