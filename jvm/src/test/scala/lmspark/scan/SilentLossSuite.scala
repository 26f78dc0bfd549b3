package lmspark.scan

import java.nio.file.{Files, Path}

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.{Failure, Success, Try}

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions._
import org.scalactic.source.Position
import org.scalatest.funsuite.AnyFunSuite

import lmspark.plan.LmMetrics
import lmspark.testutil.{LmSparkSession, MetadataSurgery}

/**
 * Footers that would lose rows in silence, and footers whose lies touch only columns a query does
 * not read.
 *
 *  - A row group placed outside the file (its range past the data), or a file that declares more
 *    rows than its row groups hold: lmspark fails with an error naming the file and the row group,
 *    whichever split of the file reads; what vanilla Spark does with the same file is recorded
 *    beside it (printed at the end), not asserted.
 *  - A corrupt footer entry of a column the query does not read: lmspark gives vanilla Spark's
 *    answer; a query that reads the column fails naming it.
 *  - Every message names the file's row-group index, also for a file whose footer carries no
 *    row-group ordinals (as pyarrow writes them) read in several splits.
 *
 * Base files: `one` holds 25 rows in one row group; `four` 4000 rows in four row groups of 1000
 * (columns `id` long, `k` int (dictionary-encoded, the 10 even values 0..18), `s` string, `d` double; pages of
 * 100 rows, page indexes), read in splits of a quarter of the file.
 */
class SilentLossSuite extends AnyFunSuite with LmSparkSession {

  private def write(name: String, rows: Int, rowGroupRows: Int): Path = {
    val dir = newDir(name)
    val df = spark.range(0, rows, 1, 1).select(
      col("id"),
      (col("id") % 10 * 2).cast("int").as("k"),
      concat(lit("s"), col("id")).as("s"),
      (col("id") * 0.5).as("d"))
    lmspark.testutil.WriterLayouts.writeRowGroups(df, dir, rowGroupRows, Map("parquet.page.row.count.limit" -> "100"))
    val file = new java.io.File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head.toPath
    val s = MetadataSurgery.open(file)
    require(s.rowGroups == rows / rowGroupRows, s"$name: ${s.rowGroups} row groups")
    file
  }

  private lazy val one: Path = write("one", 25, 25)
  private lazy val four: Path = write("four", 4000, 1000)

  private lazy val editDir: Path = Files.createDirectories(tempRoot.toPath.resolve("edited"))

  /** A directory holding one copy of `base` with `edit` applied to its footer. */
  private def edited(base: Path, name: String)(edit: MetadataSurgery => Unit): String = {
    val dir = Files.createDirectories(editDir.resolve(name))
    MetadataSurgery.rewrite(base, dir.resolve("part-0.parquet"))(edit)
    dir.toString
  }

  private def splitConf(dir: String): Seq[(String, String)] = {
    val size = Files.size(Files.list(java.nio.file.Paths.get(dir)).iterator.asScala.next())
    Seq("spark.sql.files.maxPartitionBytes" -> math.max(1024L, size / 4).toString,
      "spark.sql.files.openCostInBytes" -> "0")
  }

  /** The messages of `t` and its causes, joined. */
  private def messages(t: Throwable): String =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).map(e => s"${e.getClass.getName}: ${e.getMessage}").mkString(" <- ")

  private val vanillaLog = ArrayBuffer.empty[String]

  override protected def afterAll(): Unit = {
    try if (vanillaLog.nonEmpty) println(vanillaLog.mkString("\n== vanilla Spark on the same files ==\n", "\n", "\n"))
    finally super.afterAll()
  }

  /** What vanilla Spark (lmspark off, pushdown off) does with the query: its row count or its error. */
  private def vanilla(name: String, query: => DataFrame): String = {
    val out = withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
      Try(query.collect()) match {
        case Success(rows) => s"${rows.length} rows, no error"
        case Failure(e) => s"error: ${messages(e).take(300)}"
      }
    }
    vanillaLog += s"$name: $out"
    out
  }

  /** lmspark fails the query with an error naming the file and `words`; vanilla's outcome is logged. */
  private def lmFails(name: String, dir: String, words: String*)(query: => DataFrame)(implicit pos: Position): Unit =
    withConf(splitConf(dir): _*) {
      val e = withConf("spark.lmspark.enabled" -> "true")(intercept[Throwable](query.collect()))
      val m = messages(e)
      (new java.io.File(dir, "part-0.parquet").getPath +: words).foreach(w => assert(m.contains(w), s"$name: '$w' not in $m"))
      info(s"$name: lmspark fails naming ${words.mkString(", ")}; vanilla Spark: ${vanilla(name, query)}")
    }

  test("a row group whose chunks claim more bytes than the file has: an error naming the file and the row group") {
    val d1 = edited(one, "one-chunks-past-end") { s =>
      s.footer.getRow_groups.get(0).getColumns.asScala.foreach(c => c.getMeta_data.setTotal_compressed_size(1L << 20))
      s.footer.getRow_groups.get(0).setTotal_compressed_size(4L << 20)
    }
    lmFails("25 rows, chunks past the end", d1, "row group 0", "does not lie inside the file's data", "file length")(
      spark.read.parquet(d1))
    lmFails("25 rows, chunks past the end, count", d1, "row group 0")(spark.read.parquet(d1).groupBy().count())
    for (rg <- 0 until 4) {
      val d = edited(four, s"four-rg$rg-past-end")(_.footer.getRow_groups.get(rg).setTotal_compressed_size(1L << 30))
      lmFails(s"row group $rg of 4 past the end", d, s"row group $rg", "does not lie inside the file's data")(
        spark.read.parquet(d).where("k = 3"))
      val moved = edited(four, s"four-rg$rg-moved") { s =>
        val md = s.footer.getRow_groups.get(rg).getColumns.get(0).getMeta_data
        md.unsetDictionary_page_offset()
        md.setData_page_offset(s.footerStart + 100000L)
      }
      lmFails(s"row group $rg of 4, first chunk moved past the end", moved, s"row group $rg")(spark.read.parquet(moved).select("s"))
    }
  }

  test("a file declaring more (or fewer) rows than its row groups hold, or a row group none: an error naming the file") {
    for ((tag, delta) <- Seq("more" -> 1000L, "fewer" -> -1L)) {
      val d = edited(four, s"four-num-rows-$tag")(s => s.footer.setNum_rows(s.footer.getNum_rows + delta))
      lmFails(s"file num_rows ${if (delta > 0) "+" else ""}$delta", d, s"num_rows is ${4000 + delta}", "4 row groups hold 4000 rows")(
        spark.read.parquet(d))
    }
    // A row group whose row count is zeroed, the file's following: its chunks still hold its values.
    val emptied = edited(four, "four-row-group-emptied") { s =>
      s.footer.getRow_groups.get(2).setNum_rows(0)
      s.footer.setNum_rows(3000)
    }
    lmFails("a row group's num_rows zeroed", emptied, "row group 2", "declares no rows")(spark.read.parquet(emptied))
        // A row group dropped from the table: the file still declares its rows.
    val lost = edited(four, "four-row-group-lost")(s => s.footer.getRow_groups.remove(2))
    lmFails("a row group removed from the table", lost, "num_rows is 4000", "3 row groups hold 3000 rows")(
      spark.read.parquet(lost).groupBy().count())
  }

  test("every row group of a valid file is read by exactly one split, whatever the split size") {
    for (parts <- Seq(1, 3, 4, 7, 16)) {
      val size = Files.size(four)
      withConf("spark.sql.files.maxPartitionBytes" -> math.max(256L, size / parts).toString,
          "spark.sql.files.openCostInBytes" -> "0") {
        val p = checkSparkAnswerAndLmUsed(spark.read.parquet(four.getParent.toString))
        assert(lmScans(p).map(_.metrics(LmMetrics.RowGroupsTotal).value).sum == 4, s"$parts splits")
        assert(spark.read.parquet(four.getParent.toString).count() == 4000)
      }
    }
  }

  test("a corrupt footer entry of a column the query does not read gives vanilla Spark's answer") {
    val edits = Seq[(String, org.apache.parquet.format.ColumnMetaData => Unit, String)](
      // Past the file's end, not huge: vanilla Spark allocates a chunk's claimed size when it reads it.
      ("size-past-end", _.setTotal_compressed_size(Files.size(four)), "does not lie between"),
      ("size-negative", _.setTotal_compressed_size(-7), "negative"),
      ("data-offset-outside", md => {
        val start = if (md.isSetDictionary_page_offset && md.getDictionary_page_offset > 0) md.getDictionary_page_offset
          else md.getData_page_offset
        md.setDictionary_page_offset(start)
        md.setData_page_offset(start + md.getTotal_compressed_size + 5)
      }, "outside the column chunk"),
      ("num-values", md => md.setNum_values(md.getNum_values - 1), "num_values"))
    for ((tag, edit, word) <- edits) {
      // `s` is not the first column: the row group's own range stays as it was.
      val d = edited(four, s"unread-$tag") { s =>
        (0 until 4).foreach(rg => edit(s.meta(rg, "s")))
      }
      withConf(splitConf(d): _*) {
        checkSparkAnswerAndLmUsed(spark.read.parquet(d).select("id", "d"))
        checkSparkAnswerAndLmUsed(spark.read.parquet(d).where("k = 7").select("id", "k"))
        checkSparkAnswerAndLmUsed(spark.read.parquet(d).groupBy().count())
      }
      lmFails(s"unread column corrupt ($tag), then read", d, "column s", word, "page: not applicable")(
        spark.read.parquet(d).select("s"))
      lmFails(s"unread column corrupt ($tag), then filtered", d, "column s", word)(
        spark.read.parquet(d).where("s = 's5'").select("id"))
    }
  }

  test("errors name the file's row-group index in every split, also without row-group ordinals in the footer") {
    def noOrdinals(s: MetadataSurgery): Unit = s.footer.getRow_groups.asScala.foreach(_.unsetOrdinal())
    for (rg <- 1 until 4) {
      // A dictionary page whose header says it is smaller than it is: read by dictionary pruning.
      val dict = edited(four, s"dict-rg$rg") { s =>
        noOrdinals(s)
        val md = s.meta(rg, "k")
        require(md.isSetDictionary_page_offset, "k is dictionary-encoded")
        md.setData_page_offset(md.getDictionary_page_offset + 3) // the dictionary region ends inside its header
      }
      // k = 5 lies inside every row group's [min, max]: only the dictionary can prune.
      lmFails(s"dictionary region of row group $rg cut", dict, s"row group $rg", "column k")(
        spark.read.parquet(dict).where("k = 5"))
      // An offset index whose pages disagree with the pages' headers: read by page pruning.
      val index = edited(four, s"index-rg$rg") { s =>
        noOrdinals(s)
        val locations = s.pageLocations(rg, "id")
        val second = locations(1)
        second.setFirst_row_index(second.getFirst_row_index + 1)
      }
      lmFails(s"offset index of row group $rg off by one row", index, s"row group $rg", "column id")(
        spark.read.parquet(index).where(s"id = ${rg * 1000 + 150}"))
    }
  }
}
