package lmspark.testutil

import org.apache.spark.sql.types.{DataType, NullType}

/** What the tests ask of Spark's writer and vectors from Spark 4.1 (parquet-java 1.16) on. */
object WriterLayouts {
  /** Writer options for row groups of exactly `rows` rows. */
  def rowGroupRows(rows: Int): Seq[(String, String)] = Seq("parquet.block.row.count.limit" -> rows.toString)

  /** NULL-typed columns, which the line's column vectors hold. */
  val nullTypeVectors: Seq[DataType] = Seq(NullType)
}
