package lmspark.scan

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.plan.LmMetrics
import lmspark.testutil.{LmSparkSession, MetadataSurgery}

/**
 * `ignoreCorruptFiles` served by lmspark's own scan: with the flag on (as a session conf or a read
 * option) the plan keeps `LmParquetScan`, corrupt files among good ones are skipped with vanilla
 * Spark's answer (vanilla with pushdown off and the same flag), and the `filesSkippedCorrupt`
 * metric counts them. Without the flag, the same folder fails, naming the corrupt file.
 *
 * The corrupt files are ones both readers see as corrupt before they return any row of them: bytes
 * that are not Parquet, a file cut in its data or in its footer, a bad footer length, a garbage
 * first page header, garbage in the first data page's compressed bytes, and a file whose only row
 * group lies outside it (vanilla Spark reads no row of it without an error; lmspark reports it).
 */
class IgnoreCorruptFilesSuite extends AnyFunSuite with LmSparkSession {

  private lazy val good: Seq[Path] = (0 until 3).map { i =>
    val dir = newDir(s"good-$i")
    val df = spark.range(i * 1000L, (i + 1) * 1000L, 1, 1).select(col("id"), (col("id") % 7).as("k"),
      concat(lit("v"), col("id")).as("s"))
    lmspark.testutil.WriterLayouts.writeRowGroups(df, dir, 1000, Map("compression" -> "snappy"))
    new java.io.File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head.toPath
  }

  /** Every kind of corrupt file, by name: its bytes, made from a good file's bytes. */
  private def corruptions(src: Path): Seq[(String, Array[Byte])] = {
    val all = Files.readAllBytes(src)
    val footerLength = java.nio.ByteBuffer.wrap(all, all.length - 8, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt
    val footerStart = all.length - 8 - footerLength
    val (start, firstPage) = MetadataSurgery.open(src).firstPage(0, "id")
    def patched(at: Long, bytes: Array[Byte]): Array[Byte] = {
      val b = all.clone()
      System.arraycopy(bytes, 0, b, at.toInt, bytes.length)
      b
    }
    val outside = {
      val t = Files.createTempFile("outside", ".parquet")
      MetadataSurgery.rewrite(src, t)(_.footer.getRow_groups.get(0).setTotal_compressed_size(1L << 30))
      try Files.readAllBytes(t) finally Files.delete(t)
    }
    Seq(
      "not-parquet" -> Array.fill[Byte](5000)(7),
      "cut-in-data" -> java.util.Arrays.copyOf(all, footerStart / 2),
      "cut-in-footer" -> java.util.Arrays.copyOf(all, footerStart + footerLength / 2),
      "footer-length-huge" -> patched(all.length - 8, Array[Byte](0, 0, 0, 0x7f)),
      "garbage-first-page-header" -> patched(start, Array.fill[Byte](firstPage.dataStart - firstPage.start)(-1)),
      "garbage-first-page-data" -> patched(firstPage.dataStart + start + 2, Array.fill[Byte](64)(0x55)),
      "row-group-outside-the-file" -> outside)
  }

  private def folder(name: String, corrupt: Seq[(String, Array[Byte])]): String = {
    val dir = Files.createDirectories(tempRoot.toPath.resolve(name))
    good.zipWithIndex.foreach { case (g, i) => Files.copy(g, dir.resolve(s"good-$i.parquet")) }
    corrupt.foreach { case (n, bytes) => Files.write(dir.resolve(s"bad-$n.parquet"), bytes) }
    dir.toString
  }

  private lazy val mixed: String = folder("mixed", corruptions(good.head))

  private def skipped(df: DataFrame): Long = {
    df.collect()
    lmScans(df.queryExecution.executedPlan).map(_.metrics(LmMetrics.FilesSkippedCorrupt).value).sum
  }

  test("with ignoreCorruptFiles on, lmspark's scan serves the query, skips the corrupt files and counts them") {
    val schema = spark.read.parquet(good.head.toString).schema
    val all = corruptions(good.head).size
    // The two files with a corrupt first page of `id` fail only for queries that read `id`.
    val footerLevel = all - 2
    val queries = Seq[(String, () => DataFrame, Int)](
      ("select *", () => spark.read.schema(schema).parquet(mixed), all),
      ("filter", () => spark.read.schema(schema).parquet(mixed).where("k = 3 and id > 500"), all),
      ("count", () => spark.read.schema(schema).parquet(mixed).groupBy().count(), footerLevel),
      ("read option", () => spark.read.schema(schema).option("ignoreCorruptFiles", "true").parquet(mixed).select("s"),
        footerLevel))
    for ((name, q, n) <- queries) {
      val conf = if (name == "read option") Seq.empty else Seq("spark.sql.files.ignoreCorruptFiles" -> "true")
      withConf(conf: _*) {
        val plan = checkSparkAnswerAndLmUsed(q())
        assert(sparkParquetScans(plan).isEmpty, s"$name: a scan fell back\n$plan")
        withConf("spark.lmspark.enabled" -> "true")(assert(skipped(q()) == n, name))
        // Every corrupt file fails as soon as its columns are read: the rows are the good files'.
        if (name == "select *") {
          val goodRows = withConf("spark.lmspark.enabled" -> "false")(
            normalized(spark.read.schema(schema).parquet(good.map(_.toString): _*).collect()))
          assert(normalized(q().collect()) == goodRows)
        }
      }
    }
  }

  test("without ignoreCorruptFiles, each corrupt file fails the query with an error naming it") {
    val schema = spark.read.parquet(good.head.toString).schema
    for ((name, bytes) <- corruptions(good.head)) {
      val dir = folder(s"alone-$name", Seq(name -> bytes))
      val e = withConf("spark.sql.files.ignoreCorruptFiles" -> "false") {
        intercept[Throwable](spark.read.schema(schema).parquet(dir).collect())
      }
      val m = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" <- ")
      assert(m.contains(s"bad-$name.parquet"), s"$name: $m")
      withConf("spark.sql.files.ignoreCorruptFiles" -> "true") {
        checkSparkAnswerAndLmUsed(spark.read.schema(schema).parquet(dir))
      }
    }
  }
}
