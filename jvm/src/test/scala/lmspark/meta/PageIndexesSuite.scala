package lmspark.meta

import java.io.ByteArrayOutputStream
import java.nio.file.Files

import org.apache.parquet.format.Util
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, CompressionCodecName}
import org.apache.parquet.internal.column.columnindex.{OffsetIndex, OffsetIndexBuilder}
import org.apache.parquet.internal.hadoop.metadata.IndexReference
import org.scalatest.funsuite.AnyFunSuite

import lmspark.io.ChunkContext
import lmspark.testutil._
import lmspark.testutil.Sources

/** Reading page indexes ([[PageIndexes.read]]) and checking an offset index against its chunk
  * ([[PageIndexes.locations]]): parquet-java's own indexes are read and accepted, with page rows
  * and offsets equal to the pages parquet-java's reader finds; each structural fault of a
  * hand-built offset index, and each bad or unreadable index reference, is rejected with its
  * reason, never thrown. */
class PageIndexesSuite extends AnyFunSuite {

  private val config = FileConfig(CompressionCodecName.SNAPPY, v2 = false, EncMode.Fallback)

  private def offsets(oi: OffsetIndex): Seq[(Long, Int, Long)] =
    (0 until oi.getPageCount).map(i => (oi.getOffset(i), oi.getCompressedPageSize(i), oi.getFirstRowIndex(i)))

  private def build(pages: Seq[(Long, Int, Long)]): OffsetIndex = {
    val b = OffsetIndexBuilder.getBuilder
    pages.foreach { case (o, s, r) => b.add(o, s, r) }
    b.build()
  }

  test("parquet-java's page indexes are read and accepted, matching the pages its reader finds") {
    for (v2 <- Seq(false, true)) {
      val f = TestFiles.matrixFile(config.copy(v2 = v2))
      val layout = TestFiles.layout(f)
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices; rg <- 0 until lm.rowGroups) {
          val chunk = lm.chunk(rg, col)
          val ctx = new ChunkContext(f.path.toString, f.columns(col).name, rg)
          val raw = PageIndexes.read(lm.in, chunk, ctx).fold(w => fail(w), identity)
          val loc = PageIndexes.locations(raw.offsetIndex.get, chunk, lm.rowCount(rg)).fold(w => fail(w), identity)
          val l = layout(rg)(col)
          assert((0 until loc.pages).map(i => loc.endRow(i) - loc.firstRow(i)) == l.pageRows.map(_.toLong))
          assert(loc.byteOffset(0) == chunk.getFirstDataPageOffset)
          assert(loc.byteEnd(loc.pages - 1) == chunk.getStartingPos + chunk.getTotalSize)
          // The pages are where the chunk's bytes say.
          val raws = ChunkBytes.pages(ChunkBytes.read(f.path, chunk)).filter(_.header.dictionary_page_header == null)
          assert(raws.map(p => chunk.getStartingPos + p.start) == (0 until loc.pages).map(loc.byteOffset))
        }
      } finally lm.close()
    }
  }

  test("each structural fault of an offset index is rejected with its reason") {
    val f = TestFiles.matrixFile(config)
    val lm = new LmFile(f.path)
    try {
      val col = f.columns.indexWhere(_.name == "int32_opt")
      val chunk = lm.chunk(0, col)
      val rows = lm.rowCount(0)
      val ctx = new ChunkContext(f.path.toString, "int32_opt", 0)
      val good = offsets(PageIndexes.read(lm.in, chunk, ctx).toOption.get.offsetIndex.get)
      assert(good.size >= 4)
      assert(PageIndexes.locations(build(good), chunk, rows).isRight)
      def rejected(pages: Seq[(Long, Int, Long)], why: String, rowCount: Long = rows): Unit =
        PageIndexes.locations(build(pages), chunk, rowCount) match {
          case Left(reason) => assert(reason.contains(why), reason)
          case Right(_) => fail(s"accepted $pages, expected '$why'")
        }
      def mapPage(i: Int)(f: ((Long, Int, Long)) => (Long, Int, Long)) = good.updated(i, f(good(i)))
      rejected(mapPage(0) { case (o, s, _) => (o, s, 1L) }, "starts at row 1, not 0")
      rejected(mapPage(2) { case (o, s, _) => (o, s, good(1)._3) }, "page 2 does not start after page 1")
      rejected(mapPage(3) { case (o, s, _) => (o, s, rows) }, s"not below the $rows rows")
      rejected(good, "not below the", rowCount = good.last._3)
      rejected(mapPage(1) { case (o, s, r) => (o - 1, s, r) }, "overlaps or precedes page 0")
      rejected(mapPage(1) { case (o, s, r) => (o + 1, s - 1, r) }, "pages are not contiguous")
      rejected(mapPage(2) { case (o, _, r) => (o, 0, r) }, "size 0")
      rejected(mapPage(0) { case (o, s, r) => (o + 3, s - 3, r) }, "the chunk's first data page")
      rejected(mapPage(good.size - 1) { case (o, s, r) => (o, s - 1, r) }, "the last page ends at byte")
      rejected(mapPage(good.size - 1) { case (o, s, r) => (o, s + 50, r) }, "the last page ends at byte")
      rejected(good.init, "the last page ends at byte")
      assert(PageIndexes.locations(null, chunk, rows) == Left("no offset index"))
      rejected(mapPage(0) { case (_, s, r) => (-5L, s, r) }, "offset -5")
    } finally lm.close()
  }

  test("a chunk whose data page offset points at its dictionary page (dictionary page offset unset) is accepted") {
    val f = TestFiles.matrixFile(config)
    val lm = new LmFile(f.path)
    try {
      for (name <- Seq("int32_req", "string_opt")) {
        val col = f.columns.indexWhere(_.name == name)
        val chunk = lm.chunk(0, col)
        assert(chunk.hasDictionaryPage && chunk.getDictionaryPageOffset == chunk.getStartingPos)
        val raw = PageIndexes.read(lm.in, chunk, new ChunkContext(f.path.toString, name, 0)).toOption.get
        val good = PageIndexes.locations(raw.offsetIndex.get, chunk, lm.rowCount(0)).toOption.get
        def described(dictionaryOffset: Long, encodings: Set[org.apache.parquet.column.Encoding]) =
          ColumnChunkMetaData.get(chunk.getPath, chunk.getPrimitiveType, chunk.getCodec,
            if (encodings == null) chunk.getEncodingStats else null,
            if (encodings == null) chunk.getEncodings else { import scala.jdk.CollectionConverters._; encodings.asJava },
            chunk.getStatistics, chunk.getStartingPos, dictionaryOffset, chunk.getValueCount, chunk.getTotalSize,
            chunk.getTotalUncompressedSize)
        for (dictionaryOffset <- Seq(0L, -1L)) {
          val quirk = described(dictionaryOffset, null)
          val loc = PageIndexes.locations(raw.offsetIndex.get, quirk, lm.rowCount(0)).fold(w => fail(w), identity)
          assert((0 until loc.pages).map(loc.byteOffset) == (0 until good.pages).map(good.byteOffset))
          // The pages read through it are the same rows.
          val all = (0 until loc.pages).toArray
          val a = LmReading.readAll(lmspark.column.ColumnReaderFactory.create(lm.descriptor(col), f.columns(col).spec.sparkType,
            Sources.forPages(lm.in, quirk, lm.descriptor(col), f.path.toString, false, loc, all, 0L),
            lm.rowCount(0), lmspark.column.ColumnReadOptions()), f.columns(col).spec.sparkType, lm.rowCount(0).toInt, 100)
          assert(a == LmReading.readAll(lm.reader(0, col, f.columns(col).spec.sparkType), f.columns(col).spec.sparkType,
            lm.rowCount(0).toInt, 100))
        }
        // A chunk that announces no dictionary must start where its index does.
        val noDictionary = described(0L, Set(org.apache.parquet.column.Encoding.PLAIN, org.apache.parquet.column.Encoding.RLE))
        assert(PageIndexes.locations(raw.offsetIndex.get, noDictionary, lm.rowCount(0)).left.exists(_.contains("first data page")))
      }
    } finally lm.close()
  }

  test("bad or unreadable index references are rejected, never thrown; a bad column index alone keeps the offset index") {
    val f = TestFiles.matrixFile(config)
    val lm = new LmFile(f.path)
    try {
      val col = f.columns.indexWhere(_.name == "string_opt")
      val chunk: ColumnChunkMetaData = lm.chunk(0, col)
      val ctx = new ChunkContext(f.path.toString, "string_opt", 0)
      val ciRef = chunk.getColumnIndexReference
      val oiRef = chunk.getOffsetIndexReference
      val fileLength = Files.size(f.path)
      def withRefs[T](ci: IndexReference, oi: IndexReference)(body: => T): T = {
        chunk.setColumnIndexReference(ci)
        chunk.setOffsetIndexReference(oi)
        try body finally { chunk.setColumnIndexReference(ciRef); chunk.setOffsetIndexReference(oiRef) }
      }
      def offsetRejected(oi: IndexReference, why: String): Unit = withRefs(ciRef, oi) {
        PageIndexes.read(lm.in, chunk, ctx) match {
          case Left(reason) => assert(reason.contains(why), reason)
          case Right(r) => fail(s"accepted $r, expected '$why'")
        }
      }
      offsetRejected(new IndexReference(oiRef.getOffset, 0), "is invalid")
      offsetRejected(new IndexReference(oiRef.getOffset, PageIndexes.MaxIndexBytes + 1), "is invalid")
      offsetRejected(new IndexReference(-1, 10), "is invalid")
      offsetRejected(new IndexReference(fileLength - 4, 100), "reaches past the end of the file")
      offsetRejected(new IndexReference(chunk.getStartingPos + 4, 20), "overlaps the column chunk")
      offsetRejected(new IndexReference(ciRef.getOffset, ciRef.getLength), "cannot parse the offset index")
      // The column index alone is bad: the offset index is still there, with the reason.
      withRefs(new IndexReference(oiRef.getOffset, oiRef.getLength), oiRef) {
        val raw = PageIndexes.read(lm.in, chunk, ctx).fold(w => fail(w), identity)
        assert(raw.offsetIndex.isDefined && raw.columnIndex.isEmpty)
        assert(raw.columnIndexProblem.exists(_.contains("cannot parse the column index")), raw.columnIndexProblem)
      }
      withRefs(null, null) {
        assert(PageIndexes.read(lm.in, chunk, ctx) == Right(RawPageIndex(None, None)))
      }
    } finally lm.close()
  }

  test("garbage where an index should be is rejected") {
    val f = TestFiles.matrixFile(config)
    val lm = new LmFile(f.path)
    try {
      val chunk = lm.chunk(0, 0)
      val ctx = new ChunkContext("synthetic", "c", 0)
      val junk = Array.tabulate[Byte](4096)(i => ((i * 7919) >>> 3).toByte)
      // A valid offset index, re-serialised, followed by junk: good bytes are read, junk is not.
      val oiBytes = new ByteArrayOutputStream()
      Util.writeOffsetIndex(ParquetMetadataConverter.toParquetOffsetIndex(
        PageIndexes.read(lm.in, chunk, ctx).toOption.get.offsetIndex.get), oiBytes)
      val base = chunk.getStartingPos + chunk.getTotalSize + 100
      val file = new Array[Byte]((base + 8192).toInt)
      System.arraycopy(oiBytes.toByteArray, 0, file, base.toInt, oiBytes.size)
      System.arraycopy(junk, 0, file, base.toInt + 4096, junk.length)
      val in = new ByteArraySeekableInputStream(file)
      chunk.setOffsetIndexReference(new IndexReference(base, oiBytes.size))
      chunk.setColumnIndexReference(new IndexReference(base + 4096, 300))
      val raw = PageIndexes.read(in, chunk, ctx).fold(w => fail(w), identity)
      assert(raw.offsetIndex.isDefined && raw.columnIndex.isEmpty && raw.columnIndexProblem.isDefined)
      chunk.setOffsetIndexReference(new IndexReference(base + 4096, 300))
      assert(PageIndexes.read(in, chunk, ctx).isLeft)
    } finally lm.close()
  }
}
