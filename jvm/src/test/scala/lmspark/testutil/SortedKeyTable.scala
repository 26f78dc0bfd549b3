package lmspark.testutil

import java.io.File

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions._

/** The one-file table the object-store and metadata-cache suites query: `rows` rows sorted by
  * `id` in `rowGroups` row groups (four unless given), pages of `pageRows` rows, page indexes; `k` (10 values) is
  * dictionary-encoded, `s` a string of 100,000 values, `d` a double, `v` a scattered long.
  * `options` are added to the writer's (a bloom filter, say). */
object SortedKeyTable {
  def write(spark: SparkSession, dir: String, rows: Long, pageRows: Int, options: Map[String, String] = Map.empty,
      rowGroups: Int = 4): File = {
    val df = spark.range(0, rows, 1, 1).select(
      col("id"),
      (col("id") * 7919 % 10).cast("int").as("k"),
      concat(lit("s"), (col("id") * 31 % 100000).cast("string")).as("s"),
      ((col("id") * 104729 % 100000) / 100.0).as("d"),
      (col("id") * 2654435761L % 1000003L).as("v"))
    WriterLayouts.writeRowGroups(df, dir, (rows / rowGroups).toInt, options + ("parquet.page.row.count.limit" -> pageRows.toString))
    new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
  }
}
