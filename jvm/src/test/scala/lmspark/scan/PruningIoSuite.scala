package lmspark.scan

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.plan.LmMetrics
import lmspark.testutil.{LmSparkSession, RecordingFileSystem}

/** What lmspark reads from disk when it prunes (flat and nested columns): every byte range read by a query is recorded by
  * [[RecordingFileSystem]] and checked against the file's layout. The file holds `id` = 0, 1, 2, ...
  * in order, so the rows a range filter on `id` passes are known exactly; the oracle takes the
  * layout from parquet-java's own footer, column index and offset index. With
  * `spark.lmspark.io.maxCoalesceGap=0`, lmspark may read only the footer, page indexes, dictionary
  * pages, the pages of `id` whose page-index bounds meet the filter, and in the other projected
  * columns the pages holding a row that passes; and it must read every page holding such a row. */
class PruningIoSuite extends AnyFunSuite with LmSparkSession {

  override protected def sparkConf: Map[String, String] = RecordingFileSystem.conf

  private lazy val file: File = {
    val dir = newDir("layout")
    spark.range(0, 200000, 1, 1)
      .select(col("id"), (col("id") * 7 % 1000).as("v"),
        concat(lit("s"), (col("id") % 5000).cast("string")).as("s"), (col("id") / 3.0).as("d"),
        // Nested columns: a struct whose field `a` is `id` (filters on it prune like on `id`), a list
        // of 0-3 strings (some null), and a list of structs.
        struct(col("id").as("a"), (col("id") % 97).cast("string").as("b")).as("st"),
        expr("transform(sequence(0, CAST(id % 4 AS INT) - 1), i -> IF(i = 1, NULL, CAST(id + i AS STRING)))").as("tags"),
        expr("transform(sequence(0, CAST(id % 3 AS INT)), i -> named_struct('x', CAST(i AS INT), 'y', CAST(id AS STRING)))")
          .as("items"))
      .write
      .option("parquet.block.size", 512 * 1024)
      .option("parquet.page.row.count.limit", 2000)
      .option("parquet.page.size", 1 << 20)
      .parquet(dir)
    new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
  }

  private def recordingPath: String = "recording://" + file.getAbsolutePath

  /** A page or region of the file: `[start, end)`. */
  private final case class Range(start: Long, end: Long) {
    def contains(r: RecordingFileSystem.Read): Boolean = start <= r.offset && r.end <= end
    def overlaps(r: RecordingFileSystem.Read): Boolean = r.offset < end && start < r.end
  }

  /** (byte ranges lmspark may read, data pages it must read) for rows with `lo <= id <= hi`, in the
    * projected columns `columns` (every leaf of a nested one); `filtered` is the leaf the filter
    * reads (`id`, or `st.a`, which equals it). */
  private def expectedLayout(lo: Long, hi: Long, columns: Seq[String], filtered: String = "id"): (Seq[Range], Seq[Range]) = {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), new Configuration()))
    try {
      val footer = reader.getFooter
      val allowed = Seq.newBuilder[Range]
      val needed = Seq.newBuilder[Range]
      val fileLen = file.length()
      allowed += Range(0, 4)
      allowed += Range(fileLen - lmspark.LmConf.IO_FOOTER_TAIL_BYTES.default, fileLen) // footer: one tail read
      footer.getBlocks.asScala.foreach { block =>
        val chunks = block.getColumns.asScala
        chunks.foreach { c =>
          Option(c.getColumnIndexReference).foreach(r => allowed += Range(r.getOffset, r.getOffset + r.getLength))
          Option(c.getOffsetIndexReference).foreach(r => allowed += Range(r.getOffset, r.getOffset + r.getLength))
        }
        val idChunk = chunks.find(_.getPath.toDotString == filtered).get
        val st = idChunk.getStatistics
        val min = st.genericGetMin.asInstanceOf[java.lang.Long].longValue
        val max = st.genericGetMax.asInstanceOf[java.lang.Long].longValue
        val rows = block.getRowCount
        // The file holds id = 0, 1, 2, ... in order, so the rows that pass are known exactly.
        val (passFrom, passUntil) = (math.max(lo, min) - min, math.min(hi, max) + 1 - min)
        if (max >= lo && min <= hi) {
          // The filtered column may be read on every page its page index does not exclude.
          val ci = reader.readColumnIndex(idChunk)
          val oi = reader.readOffsetIndex(idChunk)
          val mins = ci.getMinValues.asScala.map(b => b.order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(0))
          val maxs = ci.getMaxValues.asScala.map(b => b.order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(0))
          (0 until oi.getPageCount).filter(i => maxs(i) >= lo && mins(i) <= hi)
            .foreach(i => allowed += Range(oi.getOffset(i), oi.getOffset(i) + oi.getCompressedPageSize(i)))
          if (idChunk.hasDictionaryPage) allowed += Range(idChunk.getStartingPos, idChunk.getFirstDataPageOffset)
          chunks.filter(c => columns.exists(p => c.getPath.toDotString == p || c.getPath.toDotString.startsWith(p + ".")))
            .foreach { c =>
            if (c.hasDictionaryPage) allowed += Range(c.getStartingPos, c.getFirstDataPageOffset)
            val coi = reader.readOffsetIndex(c)
            (0 until coi.getPageCount).foreach { i =>
              val (ps, pe) = (coi.getFirstRowIndex(i), coi.getLastRowIndex(i, rows) + 1)
              if (passFrom < pe && ps < passUntil)
                needed += Range(coi.getOffset(i), coi.getOffset(i) + coi.getCompressedPageSize(i))
            }
            }
        }
      }
      val n = needed.result()
      (merged(allowed.result() ++ n), n)
    } finally reader.close()
  }

  /** `ranges` sorted, with touching or overlapping ones merged (a read may span adjacent pages). */
  private def merged(ranges: Seq[Range]): Seq[Range] =
    ranges.sortBy(_.start).foldLeft(List.empty[Range]) {
      case (last :: rest, r) if r.start <= last.end => Range(last.start, math.max(last.end, r.end)) :: rest
      case (acc, r) => r :: acc
    }.reverse

  /** Which page of which chunk a read falls in, for failure messages. */
  private def describe(r: RecordingFileSystem.Read): String = {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), new Configuration()))
    try {
      val hits = for {
        (block, rg) <- reader.getFooter.getBlocks.asScala.zipWithIndex
        c <- block.getColumns.asScala
        oi = reader.readOffsetIndex(c)
        i <- 0 until oi.getPageCount
        if r.offset < oi.getOffset(i) + oi.getCompressedPageSize(i) && oi.getOffset(i) < r.end
      } yield s"row group $rg column ${c.getPath.toDotString} page $i rows [${oi.getFirstRowIndex(i)}, " +
        s"${oi.getLastRowIndex(i, block.getRowCount) + 1}) of ${block.getRowCount}"
      s"[${r.offset}, ${r.end}): ${if (hits.isEmpty) "no data page" else hits.mkString("; ")}"
    } finally reader.close()
  }

  private def metric(df: DataFrame, name: String): Long =
    lmScans(df.queryExecution.executedPlan).map(_.metrics(name).value).sum

  private def checkReads(where: String, lo: Long, hi: Long, columns: Seq[String], filtered: String = "id"): Unit = {
    withConf("spark.lmspark.io.maxCoalesceGap" -> "0") {
      val df = spark.read.parquet(recordingPath).where(where).select(columns.map(col): _*)
      RecordingFileSystem.clear()
      df.collect()
      val reads = RecordingFileSystem.reads(file.getAbsolutePath)
      val (allowed, needed) = expectedLayout(lo, hi, columns, filtered)
      val stray = reads.filterNot(r => allowed.exists(_.contains(r)))
      assert(stray.isEmpty, s"$where: reads outside the needed pages: ${stray.take(10).map(describe)}")
      val missed = needed.filterNot(p => reads.exists(p.overlaps))
      assert(missed.isEmpty, s"$where: needed pages never read: ${missed.take(10)}")
      assert(needed.nonEmpty || metric(df, LmMetrics.RowGroupsRead) == 0)
      assert(metric(df, LmMetrics.PagesPruned) > 0, s"$where: nothing was pruned")
      assert(metric(df, LmMetrics.FilesFallback) == 0, s"$where: a file was handed to Spark's reader")
      checkSparkAnswerAndLmUsed(spark.read.parquet(file.getAbsolutePath).where(where).select(columns.map(col): _*))
    }
  }

  test("the file has the layout these tests need: several row groups, many pages, page indexes") {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), new Configuration()))
    try {
      val blocks = reader.getFooter.getBlocks.asScala
      assert(blocks.size >= 3, s"${blocks.size} row groups")
      assert(blocks.init.forall(b => reader.readOffsetIndex(b.getColumns.get(0)).getPageCount >= 5),
        blocks.map(b => reader.readOffsetIndex(b.getColumns.get(0)).getPageCount))
    } finally reader.close()
  }

  test("a range inside one row group reads only its pages, in every projected column") {
    checkReads("id >= 100000 AND id < 103000", 100000, 102999, Seq("id", "v", "s", "d"))
  }

  test("a point lookup reads one page per column") {
    checkReads("id = 123457", 123457, 123457, Seq("id", "v", "s", "d"))
  }

  test("a range across a row-group boundary, projecting columns the filter does not read") {
    val blocks = {
      val r = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), new Configuration()))
      try r.getFooter.getBlocks.asScala.map(_.getRowCount).toList finally r.close()
    }
    val boundary = blocks.head
    checkReads(s"id BETWEEN ${boundary - 1500} AND ${boundary + 1500}", boundary - 1500, boundary + 1500, Seq("id", "s"))
  }

  test("output-only nested columns read only the pages holding a surviving record (offset index first_row_index)") {
    checkReads("id >= 100000 AND id < 103000", 100000, 102999, Seq("id", "tags", "items", "st"))
    checkReads("id = 123457", 123457, 123457, Seq("id", "items"))
  }

  test("a filter on a struct field prunes pages by its column index, and reads the other columns' surviving pages") {
    checkReads("st.a >= 100000 AND st.a < 103000", 100000, 102999, Seq("id", "tags", "st"), filtered = "st.a")
    checkReads("st.a = 123457", 123457, 123457, Seq("st", "items"), filtered = "st.a")
  }

  test("a filter on a struct field prunes row groups by statistics") {
    val df = spark.read.parquet(recordingPath).where("st.a > 300000").select("id", "st")
    assert(df.collect().isEmpty)
    assert(metric(df, LmMetrics.RowGroupsRead) == 0)
    assert(metric(df, LmMetrics.PrunedByStatistics) == metric(df, LmMetrics.RowGroupsTotal))
  }

  test("a filter that no row passes reads no data page") {
    val df = spark.read.parquet(recordingPath).where("id > 300000")
    RecordingFileSystem.clear()
    assert(df.collect().isEmpty)
    val reads = RecordingFileSystem.reads(file.getAbsolutePath)
    val (allowed, _) = expectedLayout(300001, Long.MaxValue, Nil)
    assert(reads.forall(r => allowed.exists(_.contains(r))), reads)
    assert(metric(df, LmMetrics.RowGroupsRead) == 0)
    assert(metric(df, LmMetrics.PrunedByStatistics) == metric(df, LmMetrics.RowGroupsTotal))
  }

  test("a dictionary page read for dictionary pruning is read and decoded once: the readers start past it") {
    // v = id * 7 % 1000: every value in every row group, so the dictionary of v cannot exclude a
    // row group for v = 500, and its reader needs the same dictionary.
    withConf("spark.lmspark.pageIndex.enabled" -> "false") {
      val df = spark.read.parquet(recordingPath).where("v = 500").select("id", "v")
      RecordingFileSystem.clear()
      df.collect()
      // Not the footer's tail read (which, from the end of the file, may cover the last chunks).
      val reads = RecordingFileSystem.reads(file.getAbsolutePath).filter(_.end != file.length())
      val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(file.getAbsolutePath), new Configuration()))
      val regions = try reader.getFooter.getBlocks.asScala.map { b =>
        val c = b.getColumns.asScala.find(_.getPath.toDotString == "v").get
        assert(c.hasDictionaryPage && c.getFirstDataPageOffset > c.getStartingPos, "v is dictionary-encoded")
        Range(c.getStartingPos, c.getFirstDataPageOffset)
      } finally reader.close()
      assert(metric(df, LmMetrics.PrunedByDictionary) == 0 && metric(df, LmMetrics.RowGroupsRead) == regions.size)
      regions.foreach { region =>
        // Every byte of the dictionary region is read exactly once.
        val bytesRead = reads.map(r => math.max(0L, math.min(r.end, region.end) - math.max(r.offset, region.start))).sum
        assert(bytesRead == region.end - region.start, s"dictionary region $region: reads ${reads.filter(region.overlaps)}")
      }
      checkSparkAnswerAndLmUsed(spark.read.parquet(file.getAbsolutePath).where("v = 500").select("id", "v"))
    }
  }

  test("without the page index, a row group is read whole but others are still pruned by statistics") {
    withConf("spark.lmspark.pageIndex.enabled" -> "false") {
      val df = spark.read.parquet(recordingPath).where("id >= 100000 AND id < 103000")
      df.collect()
      assert(metric(df, LmMetrics.PagesPruned) == 0)
      assert(metric(df, LmMetrics.RowGroupsRead) == 1)
      assert(metric(df, LmMetrics.PrunedByStatistics) == metric(df, LmMetrics.RowGroupsTotal) - 1)
      checkSparkAnswerAndLmUsed(spark.read.parquet(file.getAbsolutePath).where("id >= 100000 AND id < 103000"))
    }
  }
}
