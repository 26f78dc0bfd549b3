package lmspark.testutil

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types.{DataType, NullType}

/** What the tests ask of Spark's writer and vectors from Spark 4.1 (parquet-java 1.16) on. */
object WriterLayouts {
  /** Writes `df` (one partition) to one Parquet file in `dir` with `options`, in row groups of
    * exactly `rowGroupRows` rows: parquet-java's row-count limit does it. */
  def writeRowGroups(df: DataFrame, dir: String, rowGroupRows: Int, options: Map[String, String]): Unit =
    df.write.options(options + ("parquet.block.row.count.limit" -> rowGroupRows.toString)).parquet(dir)

  /** NULL-typed columns, which the line's column vectors hold. */
  val nullTypeVectors: Seq[DataType] = Seq(NullType)
}
