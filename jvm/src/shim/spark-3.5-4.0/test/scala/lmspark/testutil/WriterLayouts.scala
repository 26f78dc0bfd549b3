package lmspark.testutil

import java.io.File

import scala.collection.JavaConverters._

import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.rewrite.{ParquetRewriter, RewriteOptions}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types.DataType

/** What the tests ask of Spark's writer and vectors on the 3.5 and 4.0 lines (parquet-java 1.13 and
  * 1.15: no row-count limit for row groups, and a first page-size check at the check minimum whatever
  * the page row-count limit; Spark's column vectors cannot hold NULL-typed columns). */
object WriterLayouts {
  /** Writes `df` (one partition) to one Parquet file in `dir` with `options`, in row groups of
    * exactly `rowGroupRows` rows. Spark writes one file per row group (`maxRecordsPerFile`, a block
    * size no slice reaches, page-size checks every `parquet.page.row.count.limit` rows so pages keep
    * that limit); parquet-java's rewriter then joins them in order, copying pages, statistics, page
    * indexes and bloom filters as written. */
  def writeRowGroups(df: DataFrame, dir: String, rowGroupRows: Int, options: Map[String, String]): Unit = {
    val checks = options.get("parquet.page.row.count.limit").toSeq
      .flatMap(p => Seq("parquet.page.size.row.check.min" -> p, "parquet.page.size.row.check.max" -> p))
    val parts = new File(dir, "_slices")
    df.write.options(options ++ checks + ("parquet.block.size" -> (1L << 30).toString)
      + ("maxRecordsPerFile" -> rowGroupRows.toString)).parquet(parts.toString)
    // One task writes the slices in order: part-00000-<uuid>-c000, -c001, ...
    val slices = parts.listFiles().filter(_.getName.endsWith(".parquet")).sortBy(_.getName)
    val conf = df.sparkSession.sessionState.newHadoopConf()
    val out = new Path(new File(dir, slices.head.getName.replaceAll("-c\\d{3}\\.", ".")).toURI)
    val rewriter = new ParquetRewriter(
      new RewriteOptions.Builder(conf, slices.map(f => new Path(f.toURI)).toList.asJava, out).build())
    try rewriter.processBlocks() finally rewriter.close()
    slices.foreach(f => new File(f.getParentFile, s".${f.getName}.crc").delete())
    parts.listFiles().foreach(_.delete())
    parts.delete()
  }

  /** None: the line's column vectors cannot hold a NULL-typed column. */
  val nullTypeVectors: Seq[DataType] = Nil
}
