package lmspark.io

import java.io.ByteArrayOutputStream
import java.nio.file.Path
import java.util.zip.GZIPOutputStream

import org.apache.parquet.format.{CompressionCodec, PageType}
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.hadoop.metadata.CompressionCodecName._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.{ColumnReadOptions, ColumnReaderFactory, ParquetDecodeException}
import lmspark.io.CodecFixtures._
import lmspark.testutil._

/** Whole files per codec read through our page source and column readers: files parquet-java
  * wrote (against parquet-java's reading), pyarrow's BROTLI and LZ4 fixtures (against pyarrow's
  * CSV), raw-block LZ4 labelled LZ4, a GZIP page of two members, and corrupt compressed pages. */
class CodecFilesSuite extends AnyFunSuite {

  private val specs = TestTypes.all.filter(s => Set("boolean", "int32", "int64", "double", "string").contains(s.name))

  /** A parquet-java file of a few types x nullability in `config`. */
  private def written(config: FileConfig, tag: String = ""): WrittenFile = {
    val columns = for ((s, i) <- specs.toIndexedSeq.zipWithIndex; (n, j) <- Seq(Nulls.Required, Nulls.SomeNulls).zipWithIndex)
      yield TestColumn(s, n, TestFileWriter.generate(s, n, config.mode, seed = 500L + 10 * i + j))
    val path = TestFiles.dir.resolve(s"codecs-${config.codec}-${if (config.v2) "v2" else "v1"}-${config.mode}$tag.parquet")
    TestFileWriter.write(path, config, columns)
    WrittenFile(path, config, columns)
  }

  /** Every column of `path` equals parquet-java's reading, and every page of it was read. */
  private def assertReadsAsParquetJava(path: Path, oracleOf: Path = null): Unit = {
    val oracle = ParquetOracle.readAll(Option(oracleOf).getOrElse(path))
    val lm = new LmFile(path)
    try {
      for (col <- 0 until lm.footer.getFileMetaData.getSchema.getColumns.size; rg <- 0 until lm.rowGroups) {
        val name = lm.descriptor(col).getPath.mkString(".")
        // parquet-java's values (Int, Long, Double, Boolean, bytes) are what the vectors hold for
        // the Spark types sparkTypeOf picks.
        val expected = oracle(col)(rg)
        for (batch <- Seq(1, 97, 4096)) {
          val (actual, reader) = readChunk(lm, rg, col, batch)
          assertSameValues(s"$path $name rg $rg batch $batch", actual, expected)
          assert(reader.pagesRead == pageCount(lm, rg, col), s"$name rg $rg: pages read")
          reader.close()
        }
      }
    } finally lm.close()
  }

  for (codec <- Seq(UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4, LZ4_RAW); v2 <- Seq(false, true);
       mode <- Seq(EncMode.Plain, EncMode.Fallback)) {
    val config = FileConfig(codec, v2, mode)
    test(s"parquet-java's $config pages read as parquet-java reads them") {
      val f = written(config)
      val lm = new LmFile(f.path)
      try assert((0 until lm.rowGroups).forall(rg => lm.chunk(rg, 0).getCodec == codec))
      finally lm.close()
      assertReadsAsParquetJava(f.path)
    }
  }

  test("LZ4 pages that are raw LZ4 blocks (old parquet-cpp) read as the same pages labelled LZ4_RAW") {
    for (v2 <- Seq(false, true)) {
      val f = written(FileConfig(LZ4_RAW, v2, EncMode.Fallback), "-relabel")
      val relabelled = relabelCodec(f.path, TestFiles.dir.resolve(s"raw-lz4-${v2}.parquet"), CompressionCodec.LZ4)
      val lm = new LmFile(relabelled)
      try assert(lm.chunk(0, 0).getCodec == LZ4) finally lm.close()
      assertReadsAsParquetJava(relabelled, oracleOf = f.path)
    }
  }

  /** Every column of a pyarrow fixture equals the CSV pyarrow wrote from the same table. */
  private def assertReadsAsCsv(path: Path, codec: CompressionCodecName): Unit = {
    val oracle = csv("values.csv")
    val lm = new LmFile(path)
    try {
      var first = 0
      var maxPages = 0
      for (rg <- 0 until lm.rowGroups) {
        val rows = lm.rowCount(rg).toInt
        for (col <- oracle.names.indices) {
          val d = lm.descriptor(col)
          val name = d.getPath.mkString(".")
          assert(name == oracle.names(col))
          assert(lm.chunk(rg, col).getCodec == codec)
          val t = sparkTypeOf(d)
          assert(ColumnReaderFactory.unsupportedReason(d, t, lm.chunk(rg, col)).isEmpty)
          val expected = oracle.column(name).slice(first, first + rows).map(cellValue(_, t))
          for (batch <- Seq(1, 64, 4096)) {
            val (actual, reader) = readChunk(lm, rg, col, batch)
            assertSameValues(s"${path.getFileName} $name rg $rg batch $batch", actual, expected)
            val pages = pageCount(lm, rg, col)
            assert(reader.pagesRead == pages, s"$name rg $rg: pages read")
            maxPages = math.max(maxPages, pages)
            reader.close()
          }
        }
        first += rows
      }
      assert(first == oracle.rows.size)
      assert(maxPages >= 3, "the fixture should have chunks of several pages")
    } finally lm.close()
  }

  test("BROTLI pages written by pyarrow (data page v1 and v2) read as pyarrow wrote them") {
    assertReadsAsCsv(resource("brotli_v1.parquet"), BROTLI)
    assertReadsAsCsv(resource("brotli_v2.parquet"), BROTLI)
  }

  test("pyarrow's LZ4_RAW pages read as written, also when labelled LZ4 as old pyarrow did") {
    val p = resource("lz4raw_arrow.parquet")
    assertReadsAsCsv(p, LZ4_RAW)
    assertReadsAsCsv(relabelCodec(p, TestFiles.dir.resolve("lz4-legacy-arrow.parquet"), CompressionCodec.LZ4), LZ4)
  }

  private def gzip(b: Array[Byte], from: Int, until: Int): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val g = new GZIPOutputStream(out)
    g.write(b, from, until - from)
    g.close()
    out.toByteArray
  }

  test("GZIP: pages whose data is two gzip members back to back read as the original pages") {
    for (v2 <- Seq(false, true)) {
      val f = written(FileConfig(GZIP, v2, EncMode.Fallback), "-members")
      val oracle = ParquetOracle.readAll(f.path)
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices) {
          val chunk = ChunkBytes.read(f.path, lm.chunk(0, col))
          var rebuilt = 0
          val pages = split(chunk).map { case (h, data) =>
            // v2 levels stay uncompressed in front of the values.
            val levels = if (h.getType == PageType.DATA_PAGE_V2)
              h.data_page_header_v2.repetition_levels_byte_length + h.data_page_header_v2.definition_levels_byte_length
            else 0
            val compressedValues = java.util.Arrays.copyOfRange(data, levels, data.length)
            val plain = Decompressors.forCodec(GZIP).get.decompress(compressedValues, 0, compressedValues.length,
              h.uncompressed_page_size - levels)
            if (plain.length < 2) (h, data)
            else {
              val cut = plain.length / 3
              val newData = data.take(levels) ++ gzip(plain, 0, cut) ++ gzip(plain, cut, plain.length)
              val nh = h.deepCopy()
              nh.setCompressed_page_size(newData.length)
              nh.unsetCrc()
              rebuilt += 1
              (nh, newData)
            }
          }
          assert(rebuilt >= 2)
          val bytes = chunkOf(pages)
          val d = lm.descriptor(col)
          val ctx = new ChunkContext(f.path.toString, d.getPath.mkString("."), 0)
          val t = sparkTypeOf(d)
          val reader = ColumnReaderFactory.create(d, t, PageSource.fromBytes(bytes, 0, bytes.length, ctx, GZIP),
            lm.rowCount(0), ColumnReadOptions())
          val actual = readAll(reader, t, lm.rowCount(0).toInt, 100)
          assertSameValues(s"${f.columns(col).name} v2=$v2", actual, oracle(col)(0))
          assert(reader.pagesRead == pages.size)
        }
      } finally lm.close()
    }
  }

  /** Reading column `col` (row group 0) of `f` from the modified chunk `bytes` must fail with a
    * message naming the file, column, row group and page, and containing `what`. */
  private def assertChunkError(f: WrittenFile, col: Int, bytes: Array[Byte], what: String, page: Int,
      maxPage: Long = Long.MaxValue): Unit = {
    val lm = new LmFile(f.path)
    try {
      val d = lm.descriptor(col)
      val ctx = new ChunkContext(f.path.toString, d.getPath.mkString("."), 0)
      val pages = PageSource.fromBytes(bytes, 0, bytes.length, ctx, f.config.codec,
        maxUncompressedPageSize = maxPage, chunkFileOffset = lm.chunk(0, col).getStartingPos)
      val t = sparkTypeOf(d)
      val reader = ColumnReaderFactory.create(d, t, pages, lm.rowCount(0), ColumnReadOptions())
      val e = intercept[ParquetDecodeException](readAll(reader, t, lm.rowCount(0).toInt, 500))
      val m = e.getMessage
      for (s <- Seq(f.path.toString, f.columns(col).name, "row group 0", s"page $page of the chunk", what))
        assert(m.contains(s), s"'$s' missing in: $m")
    } finally lm.close()
  }

  for (codec <- Seq(SNAPPY, GZIP, ZSTD, LZ4, LZ4_RAW)) test(s"$codec: corrupt or mis-sized pages fail naming the page") {
    val f = written(FileConfig(codec, v2 = false, EncMode.Plain), "-corrupt")
    val lm = new LmFile(f.path)
    val col = f.columns.indexWhere(c => c.spec.name == "int64" && c.nulls == Nulls.Required)
    val chunkMeta = lm.chunk(0, col)
    lm.close()
    val chunk = ChunkBytes.read(f.path, chunkMeta)
    val pages = split(chunk)
    val k = pages.size / 2
    def withPage(h: org.apache.parquet.format.PageHeader, data: Array[Byte]) =
      chunkOf(pages.updated(k, (h, data)))
    val (h, data) = pages(k)

    // Garbage instead of the compressed data.
    val garbage = Array.tabulate[Byte](data.length)(i => (i * 31 + 7).toByte)
    assertChunkError(f, col, withPage(h, garbage), s"cannot decompress $codec data", k)
    // Header sizes one off.
    for (delta <- Seq(-1, 1)) {
      val nh = h.deepCopy(); nh.setUncompressed_page_size(h.uncompressed_page_size + delta)
      assertChunkError(f, col, withPage(nh, data), "bytes", k)
    }
    // A header claiming more than the chunk holds uncompressed fails before any allocation.
    val huge = h.deepCopy(); huge.setUncompressed_page_size(Int.MaxValue - 100)
    assertChunkError(f, col, withPage(huge, data), "more than the chunk's", k, maxPage = chunkMeta.getTotalUncompressedSize)
    // Truncated compressed data (the header still says the old size of what follows).
    val shorter = h.deepCopy(); shorter.setCompressed_page_size(data.length - 3)
    assertChunkError(f, col, withPage(shorter, data.take(data.length - 3)), s"cannot decompress $codec data", k)
  }
}
