package lmspark.io

import java.nio.file.Files

import scala.collection.mutable.ArrayBuffer

import org.apache.parquet.format.PageType
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.{ColumnReadOptions, ColumnReaderFactory, ParquetDecodeException}
import lmspark.meta.PageIndexes
import lmspark.selection.PageLocations
import lmspark.testutil._
import lmspark.testutil.Sources

/** [[PageSource.forPages]] on its own: with every page kept it yields exactly what `forChunk`
  * yields; pruned pages carry only their offset-index row count and refuse anything but a skip;
  * a kept page whose header disagrees with the offset index (rows, size, type) fails with an error
  * naming the file, column, row group and page and the flag that turns page indexes off; page
  * CRCs are checked on kept pages only, and a corrupt pruned page is never seen. */
class PageSourcePrunedSuite extends AnyFunSuite {

  private def locationsOf(lm: LmFile, rg: Int, col: Int): PageLocations = {
    val chunk = lm.chunk(rg, col)
    val raw = PageIndexes.read(lm.in, chunk, new ChunkContext(lm.path.toString, "c", rg)).fold(w => fail(w), identity)
    PageIndexes.locations(raw.offsetIndex.get, chunk, lm.rowCount(rg)).fold(w => fail(w), identity)
  }

  /** Page type, rows and, for read pages, decompressed bytes, as the source yields them. */
  private def drain(ps: PageSource, read: Int => Boolean): Seq[(String, Int, Seq[Byte])] = {
    val out = ArrayBuffer.empty[(String, Int, Seq[Byte])]
    while (ps.nextPage()) {
      if (ps.currentPageIsPruned) { out += (("pruned", ps.currentPageRows, Nil)); ps.skipPage() }
      else ps.currentPageType match {
        case PageType.DICTIONARY_PAGE =>
          val d = ps.readDictionaryPage()
          out += (("dictionary", d.numValues, d.bytes.slice(d.offset, d.offset + d.length).toSeq))
        case t =>
          val rows = ps.currentPageRows
          if (read(ps.currentPageOrdinal)) {
            ps.readDataPage() match {
              case p: DataPageV1 => out += ((t.toString, rows, p.bytes.slice(p.offset, p.offset + p.length).toSeq))
              case p: DataPageV2 =>
                out += ((t.toString, rows, (p.levelBytes.slice(p.levelOffset, p.levelOffset + p.repLevelsLength + p.defLevelsLength) ++
                  p.valueBytes.slice(p.valueOffset, p.valueOffset + p.valueLength)).toSeq))
            }
          } else { out += ((t.toString, rows, Nil)); ps.skipPage() }
      }
    }
    out.toSeq
  }

  test("with every page kept, forPages yields what forChunk yields; pruned pages only have rows") {
    for (codec <- Seq(CompressionCodecName.UNCOMPRESSED, CompressionCodecName.ZSTD); v2 <- Seq(false, true);
        mode <- Seq(EncMode.Dict, EncMode.Fallback, EncMode.Delta)) {
      val f = TestFiles.matrixFile(FileConfig(codec, v2, mode))
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices by 5; rg <- 0 until lm.rowGroups) {
          val chunk = lm.chunk(rg, col)
          val loc = locationsOf(lm, rg, col)
          val all = (0 until loc.pages).toArray
          val whole = drain(lm.pages(rg, col), _ => true)
          val kept = Sources.forPages(lm.in, chunk, lm.descriptor(col), f.path.toString, false, loc, all, 0L)
          assert(drain(kept, _ => true) == whole, s"$f col $col rg $rg")
          assert(kept.bytesRead == chunk.getTotalSize)
          // Every other page pruned: same rows, pruned pages have no bytes, and are not decompressed.
          val some = all.filter(_ % 2 == 0)
          val pruned = Sources.forPages(lm.in, chunk, lm.descriptor(col), f.path.toString, false, loc, some, 0L)
          val got = drain(pruned, _ => true)
          val dict = if (whole.head._1 == "dictionary") 1 else 0
          assert(got.map(_._2) == whole.map(_._2))
          for (i <- got.indices) {
            val p = i - dict
            if (p >= 0 && p % 2 == 1) assert(got(i)._1 == "pruned", s"page $p")
            else assert(got(i) == whole(i), s"page $p")
          }
          assert(pruned.pagesRead == dict + some.length && pruned.dataPagesRead == some.length)
          val dictBytes = loc.byteOffset(0) - chunk.getStartingPos
          assert(pruned.bytesRead == dictBytes + some.map(i => loc.byteEnd(i) - loc.byteOffset(i)).sum)
        }
      } finally lm.close()
    }
  }

  test("a pruned page refuses everything but a skip; readers reading into one fail as an internal error") {
    val f = TestFiles.matrixFile(FileConfig(CompressionCodecName.SNAPPY, v2 = false, EncMode.Dict))
    val lm = new LmFile(f.path)
    try {
      val col = f.columns.indexWhere(_.name == "int32_req")
      val chunk = lm.chunk(0, col)
      val loc = locationsOf(lm, 0, col)
      def source() = Sources.forPages(lm.in, chunk, lm.descriptor(col), f.path.toString, false, loc, Array(0, 2), 0L)
      val ps = source()
      assert(ps.nextPage() && ps.currentPageType == PageType.DICTIONARY_PAGE)
      assert(ps.nextPage() && !ps.currentPageIsPruned && ps.currentPageRows == loc.endRow(0))
      assert(ps.nextPage() && ps.currentPageIsPruned && ps.currentPageRows == loc.endRow(1) - loc.firstRow(1))
      assert(ps.currentPageOrdinal == 2)
      for (call <- Seq[PageSource => Any](_.readDataPage(), _.readDictionaryPage(), _.currentHeader, _.currentPageType)) {
        val e = intercept[IllegalStateException](call(ps))
        assert(e.getMessage.contains("pruned") && e.getMessage.contains(f.path.toString), e.getMessage)
      }
      ps.skipPage()
      assert(ps.nextPage() && !ps.currentPageIsPruned)
      // Readers: whole pruned pages are skipped, a read or a partial skip into one is a bug.
      val rows = lm.rowCount(0)
      val v = new OnHeapColumnVector(4096, org.apache.spark.sql.types.IntegerType)
      try {
        def reader() = ColumnReaderFactory.create(lm.descriptor(col), org.apache.spark.sql.types.IntegerType, source(), rows,
          ColumnReadOptions())
        val r1 = reader()
        r1.read(loc.endRow(0).toInt, v, 0)
        r1.skip(loc.endRow(1) - loc.firstRow(1)) // the pruned page, whole
        r1.read(3, v, 0)
        val r2 = reader()
        r2.skip(loc.endRow(0))
        val e = intercept[IllegalStateException](r2.read(1, v, 0))
        assert(e.getMessage.contains("internal error") && e.getMessage.contains("page pruning"), e.getMessage)
        val r3 = reader()
        r3.skip(loc.endRow(0) - 1)
        val e3 = intercept[IllegalStateException](r3.skip(5))
        assert(e3.getMessage.contains("ends inside page"), e3.getMessage)
      } finally v.close()
    } finally lm.close()
  }

  test("a kept page that disagrees with the offset index fails, naming the page and the flag") {
    val f = TestFiles.matrixFile(FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = true, EncMode.Plain))
    val lm = new LmFile(f.path)
    try {
      val col = f.columns.indexWhere(_.name == "int64_opt")
      val chunk = lm.chunk(0, col)
      val loc = locationsOf(lm, 0, col)
      val n = loc.pages
      val rows = (0 until n).map(loc.firstRow).toArray
      val offsets = (0 until n).map(loc.byteOffset).toArray
      val sizes = (0 until n).map(i => (loc.byteEnd(i) - loc.byteOffset(i)).toInt).toArray
      def fails(l: PageLocations, kept: Array[Int], why: String): Unit = {
        val e = intercept[ParquetDecodeException] {
          val ps = Sources.forPages(lm.in, chunk, lm.descriptor(col), f.path.toString, false, l, kept, 0L)
          while (ps.nextPage()) ps.skipPage()
        }
        val m = e.getMessage
        assert(m.contains(why) && m.contains("spark.lmspark.pageIndex.enabled=false") && m.contains(f.path.toString) &&
          m.contains("int64_opt") && m.contains("row group 0"), m)
      }
      // Rows moved from page 1 to page 2: page 1's header says more rows than the index.
      fails(new PageLocations(loc.rowCount, rows.updated(2, rows(2) - 1), offsets, sizes), Array(1), "rows per its header")
      // Page 1 said one byte longer, page 2 one byte shorter: page 1's size disagrees.
      fails(new PageLocations(loc.rowCount, rows, offsets.updated(2, offsets(2) + 1), sizes.updated(1, sizes(1) + 1)
        .updated(2, sizes(2) - 1)), Array(1), "takes")
      // The index starts after the first page: the first page lies before its first data page.
      fails(new PageLocations(loc.rowCount - (rows(1) - rows(0)), rows.tail.map(_ - rows(1)), offsets.tail, sizes.tail),
        Array(0), "lies before the first data page")
    } finally lm.close()
  }

  test("CRCs are checked on kept pages; a corrupt pruned page is never read") {
    val cols = IndexedSeq(TestColumn(TestTypes.all.find(_.name == "int64").get, Nulls.SomeNulls,
      TestFileWriter.generate(TestTypes.all.find(_.name == "int64").get, Nulls.SomeNulls, EncMode.Plain, 5L)))
    val path = TestFiles.dir.resolve("crc-pruned.parquet")
    TestFileWriter.write(path, FileConfig(CompressionCodecName.SNAPPY, v2 = false, EncMode.Plain), cols, pageChecksums = true)
    val lm = new LmFile(path)
    try {
      val loc = locationsOf(lm, 0, 0)
      assert(loc.pages > 4)
      // Flip the last byte of page 2 in a copy of the file.
      val bytes = Files.readAllBytes(path)
      bytes((loc.byteEnd(2) - 1).toInt) = (bytes((loc.byteEnd(2) - 1).toInt) ^ 0x5a).toByte
      val bad = TestFiles.dir.resolve("crc-pruned-bad.parquet")
      Files.write(bad, bytes)
      val in = new RecordingInputStream(new LocalInputFile(bad).newStream())
      try {
        val keep = (0 until loc.pages).filter(_ != 2).toArray
        val ps = Sources.forPages(in, lm.chunk(0, 0), lm.descriptor(0), bad.toString, true, loc, keep, 0L)
        assert(drain(ps, _ => true).count(_._1 == "pruned") == 1)
        assert(!in.touched(loc.byteOffset(2), loc.byteEnd(2)))
        val all = Sources.forPages(in, lm.chunk(0, 0), lm.descriptor(0), bad.toString, true, loc,
          (0 until loc.pages).toArray, 0L)
        val e = intercept[ParquetDecodeException](drain(all, _ => true))
        assert(e.getMessage.contains("CRC32 mismatch"), e.getMessage)
      } finally in.close()
    } finally lm.close()
  }
}
