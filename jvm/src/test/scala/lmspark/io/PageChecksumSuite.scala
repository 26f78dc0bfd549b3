package lmspark.io

import java.nio.file.Path

import org.apache.parquet.format.{Encoding, PageHeader, PageType}
import org.apache.parquet.hadoop.metadata.CompressionCodecName._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.{ColumnReadOptions, ColumnReaderFactory, ParquetDecodeException}
import lmspark.io.CodecFixtures._
import lmspark.testutil._

/** Page CRC32 checks (`spark.lmspark.verifyChecksums`): files parquet-java wrote with page
  * checksums read as parquet-java reads them; a flipped byte in a page, or a wrong CRC, fails with
  * the flag on (naming file, column, row group and page) and is not a CRC error with it off;
  * skipped pages are not checked; files without CRCs read with the flag on. */
class PageChecksumSuite extends AnyFunSuite {

  private val specs = TestTypes.all.filter(s => Set("int32", "string").contains(s.name))

  private val configs = Seq(FileConfig(UNCOMPRESSED, v2 = false, EncMode.Fallback),
    FileConfig(SNAPPY, v2 = true, EncMode.Fallback), FileConfig(GZIP, v2 = false, EncMode.Dict),
    FileConfig(ZSTD, v2 = true, EncMode.Plain))

  private val files = scala.collection.mutable.Map.empty[FileConfig, WrittenFile]

  /** A parquet-java file with page checksums in `config`. */
  private def written(config: FileConfig): WrittenFile = files.getOrElseUpdate(config, {
    val columns = for ((s, i) <- specs.toIndexedSeq.zipWithIndex; (n, j) <- Seq(Nulls.Required, Nulls.SomeNulls).zipWithIndex)
      yield TestColumn(s, n, TestFileWriter.generate(s, n, config.mode, seed = 900L + 10 * i + j))
    val path = TestFiles.dir.resolve(s"crc-${config.codec}-${if (config.v2) "v2" else "v1"}-${config.mode}.parquet")
    TestFileWriter.write(path, config, columns, pageChecksums = true)
    WrittenFile(path, config, columns)
  })

  /** Reads column `col` of row group 0 from chunk `bytes` (default: the file's own) with the flag
    * set as given; the values, or the failure. */
  private def read(f: WrittenFile, col: Int, bytes: Option[Array[Byte]], verify: Boolean,
      skipRows: Int = 0): Either[Throwable, (IndexedSeq[Any], Int)] = {
    val lm = new LmFile(f.path)
    try {
      val d = lm.descriptor(col)
      val chunk = lm.chunk(0, col)
      val b = bytes.getOrElse(ChunkBytes.read(f.path, chunk))
      val ctx = new ChunkContext(f.path.toString, d.getPath.mkString("."), 0)
      val pages = PageSource.fromBytes(b, 0, b.length, ctx, f.config.codec, verifyChecksums = verify,
        maxUncompressedPageSize = chunk.getTotalUncompressedSize, chunkFileOffset = chunk.getStartingPos)
      val t = sparkTypeOf(d)
      val reader = ColumnReaderFactory.create(d, t, pages, lm.rowCount(0), ColumnReadOptions())
      try {
        if (skipRows > 0) reader.skip(skipRows)
        Right((readAll(reader, t, lm.rowCount(0).toInt - skipRows, 64), reader.pagesRead))
      } catch { case e: ParquetDecodeException => Left(e) }
    } finally lm.close()
  }

  private def chunkBytes(f: WrittenFile, col: Int): Array[Byte] = {
    val lm = new LmFile(f.path)
    try ChunkBytes.read(f.path, lm.chunk(0, col)) finally lm.close()
  }

  /** Row at which each page of a flat chunk starts (dictionary page: the first data page's). */
  private def firstRows(pages: IndexedSeq[(PageHeader, Array[Byte])]): IndexedSeq[Int] =
    pages.scanLeft(0) { case (row, (h, _)) =>
      row + (h.getType match {
        case PageType.DATA_PAGE => h.data_page_header.num_values
        case PageType.DATA_PAGE_V2 => h.data_page_header_v2.num_rows
        case _ => 0
      })
    }.init

  private def isCrcError(e: Throwable): Boolean = e.getMessage.contains("page CRC32 mismatch")

  private def assertCrcError(f: WrittenFile, col: Int, e: Throwable, page: Int): Unit = {
    val m = e.getMessage
    for (s <- Seq("page CRC32 mismatch", f.path.toString, f.columns(col).name, "row group 0", s"page $page of the chunk",
      "file offset"))
      assert(m.contains(s), s"'$s' missing in: $m")
  }

  for (config <- configs) {
    test(s"$config with page CRCs: every page carries one, and reads as parquet-java with the flag on") {
      val f = written(config)
      val oracle = ParquetOracle.readAll(f.path)
      val counts = ParquetOracle.pageCounts(f.path)
      for (col <- f.columns.indices) {
        val pages = split(chunkBytes(f, col))
        assert(pages.forall(_._1.isSetCrc), s"${f.columns(col).name}: parquet-java wrote pages without a CRC")
        val Right((values, pagesRead)) = read(f, col, None, verify = true): @unchecked
        assertSameValues(f.columns(col).name, values, oracle(col)(0))
        assert(pagesRead == counts(0)(col))
      }
    }

    test(s"$config: a flipped byte in a page fails with the flag on, naming the page; not a CRC error with it off") {
      val f = written(config)
      val oracle = ParquetOracle.readAll(f.path)
      for (col <- f.columns.indices) {
        val chunk = chunkBytes(f, col)
        val pages = ChunkBytes.pages(chunk)
        val targets = (pages.indices.filter(i => pages(i).header.getType == PageType.DICTIONARY_PAGE) :+
          pages.indices.last :+ pages.size / 2).distinct
        for (k <- targets) {
          val p = pages(k)
          val bad = chunk.clone()
          val at = p.dataStart + p.header.compressed_page_size / 2
          bad(at) = (bad(at) ^ 0x04).toByte
          read(f, col, Some(bad), verify = true) match {
            case Left(e) => assertCrcError(f, col, e, k)
            case Right(_) => fail(s"${f.columns(col).name}: flipped byte in page $k went unnoticed")
          }
          // With the flag off the page is decoded as it is: garbage, another error, or (a flip in a
          // value) different values; never a CRC error.
          read(f, col, Some(bad), verify = false) match {
            case Left(e) => assert(!isCrcError(e), e.getMessage)
            case Right(_) =>
          }
        }
        // A wrong CRC on intact data: an error with the flag on; with it off, the right values.
        val k = pages.size / 2
        val h = pages(k).header.deepCopy()
        h.setCrc(h.crc ^ 1)
        val badCrc = ChunkBytes.replaceHeader(chunk, pages(k), h)
        read(f, col, Some(badCrc), verify = true) match {
          case Left(e) => assertCrcError(f, col, e, k)
          case Right(_) => fail("a wrong CRC went unnoticed")
        }
        val Right((values, _)) = read(f, col, Some(badCrc), verify = false): @unchecked
        assertSameValues(f.columns(col).name, values, oracle(col)(0))
      }
    }
  }

  test("pages skipped without being read are not checked") {
    val f = written(configs.head)
    val oracle = ParquetOracle.readAll(f.path)
    for (col <- f.columns.indices) {
      val chunk = chunkBytes(f, col)
      val raw = ChunkBytes.pages(chunk)
      val pages = split(chunk)
      val starts = firstRows(pages)
      val k = (2 until pages.size - 1).find(i => pages(i)._1.getType != PageType.DICTIONARY_PAGE).get
      val bad = chunk.clone()
      val at = raw(k).dataStart + raw(k).header.compressed_page_size / 2
      bad(at) = (bad(at) ^ 0x04).toByte
      // Skipping up to the end of page k never reads it; reading from there on succeeds.
      val skip = starts(k + 1)
      val Right((values, pagesRead)) = read(f, col, Some(bad), verify = true, skipRows = skip): @unchecked
      assertSameValues(f.columns(col).name, values, oracle(col)(0).drop(skip))
      assert(pagesRead < pages.size)
      // Reading page k does check it.
      assert(read(f, col, Some(bad), verify = true).left.exists(isCrcError))
    }
  }

  test("a dictionary page that no loaded page needs is neither checked nor decompressed; the first " +
      "dictionary-encoded page loaded decodes it, and its errors name the dictionary page") {
    var cases = 0
    for (config <- configs.filter(_.mode == EncMode.Fallback)) {
      val f = written(config)
      val oracle = ParquetOracle.readAll(f.path)
      for (col <- f.columns.indices) {
        val chunk = chunkBytes(f, col)
        val raw = ChunkBytes.pages(chunk)
        val starts = firstRows(split(chunk))
        def dictionaryEncoded(h: PageHeader): Boolean = {
          val e = h.getType match {
            case PageType.DATA_PAGE => h.data_page_header.encoding
            case PageType.DATA_PAGE_V2 => h.data_page_header_v2.encoding
            case t => fail(s"unexpected $t page")
          }
          e == Encoding.PLAIN_DICTIONARY || e == Encoding.RLE_DICTIONARY
        }
        assert(raw.head.header.getType == PageType.DICTIONARY_PAGE, s"${f.columns(col).name}: no dictionary page")
        // The first page after the writer's fallback: it and every later page are plain.
        val k = raw.indices.drop(1).find(i => !dictionaryEncoded(raw(i).header)).get
        assert(k >= 2 && raw.indices.drop(k).forall(i => !dictionaryEncoded(raw(i).header)),
          s"${f.columns(col).name}: dictionary pages, then plain ones")
        val bad = chunk.clone()
        val at = raw.head.dataStart + raw.head.header.compressed_page_size / 2
        bad(at) = (bad(at) ^ 0x04).toByte
        // Rows of the plain pages only: the damaged dictionary page is never read.
        val Right((values, pagesRead)) = read(f, col, Some(bad), verify = true, skipRows = starts(k)): @unchecked
        assertSameValues(f.columns(col).name, values, oracle(col)(0).drop(starts(k)))
        assert(pagesRead == raw.size - k, s"${f.columns(col).name}: pages read past the fallback")
        // The intact file from the same row: the same rows and pages, so no dictionary was decoded.
        val Right((same, samePages)) = read(f, col, None, verify = true, skipRows = starts(k)): @unchecked
        assertSameValues(f.columns(col).name, same, oracle(col)(0).drop(starts(k)))
        assert(samePages == pagesRead)
        // One row of the last dictionary-encoded page: the dictionary is decoded then, and the CRC error
        // names it (page 0), not the data page being loaded.
        read(f, col, Some(bad), verify = true, skipRows = starts(k) - 1) match {
          case Left(e) => assertCrcError(f, col, e, 0)
          case Right(_) => fail(s"${f.columns(col).name}: the damaged dictionary page went unnoticed")
        }
        cases += 1
      }
    }
    assert(cases >= 4)
  }

  test("a file without page CRCs reads as before with the flag on") {
    // Plain mode: parquet-java's file writer adds CRCs to dictionary pages whatever the page store does.
    val f = TestFiles.matrixFile(FileConfig(SNAPPY, v2 = false, EncMode.Plain))
    val oracle = ParquetOracle.readAll(f.path)
    val simple = f.columns.indices.filter(c => Set("int32", "int64", "double", "string", "boolean")(f.columns(c).spec.name))
    assert(simple.size >= 10)
    for (col <- simple) {
      assert(split(chunkBytes(f, col)).forall(!_._1.isSetCrc))
      val Right((values, _)) = read(f, col, None, verify = true): @unchecked
      assertSameValues(f.columns(col).name, values, oracle(col)(0))
    }
  }

  /** All columns of a corpus file through forChunk with the flag as given. */
  private def readCorpus(p: Path, verify: Boolean): Either[Throwable, IndexedSeq[IndexedSeq[Any]]] = {
    val lm = new LmFile(p)
    try {
      Right((0 until lm.footer.getFileMetaData.getSchema.getColumns.size).map { c =>
        try readChunk(lm, 0, c, verifyChecksums = verify)._1
        catch { case e: ParquetDecodeException => return Left(e) }
      })
    } finally lm.close()
  }

  test("corpus: files with correct CRCs read with the flag on; a bad dictionary page CRC fails only with it") {
    for (name <- Seq("plain-dict-uncompressed-checksum.parquet", "rle-dict-snappy-checksum.parquet")) {
      val p = corpus(name)
      val oracle = ParquetOracle.readAll(p)
      val Right(values) = readCorpus(p, verify = true): @unchecked
      for (c <- values.indices) assertSameValues(s"$name column $c", values(c), oracle(c)(0))
    }
    val p = corpus("rle-dict-uncompressed-corrupt-checksum.parquet")
    val oracle = ParquetOracle.readAll(p)
    val e = readCorpus(p, verify = true).left.toOption.get
    for (s <- Seq("page CRC32 mismatch", p.toString, "long_field", "row group 0", "page 0 of the chunk", "DICTIONARY_PAGE"))
      assert(e.getMessage.contains(s), s"'$s' missing in: ${e.getMessage}")
    val Right(values) = readCorpus(p, verify = false): @unchecked
    for (c <- values.indices) assertSameValues(s"column $c", values(c), oracle(c)(0))
  }
}
