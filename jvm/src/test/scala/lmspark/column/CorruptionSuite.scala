package lmspark.column

import java.nio.file.Files

import scala.util.Random

import org.apache.parquet.format.Encoding
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.scalatest.funsuite.AnyFunSuite

import lmspark.io.{ChunkContext, PageSource}
import lmspark.testutil._
import lmspark.testutil.Sources

/** Corrupt input must end in a clear [[ParquetDecodeException]] naming file, column and row group:
  * never a hang, never an unexplained ArrayIndexOutOfBounds. */
class CorruptionSuite extends AnyFunSuite {

  private val specs = TestTypes.all.filter(s => Set("int32", "string").contains(s.name))

  private lazy val file: WrittenFile = {
    val cols = for ((s, i) <- specs.toIndexedSeq.zipWithIndex; mode <- Seq(EncMode.Dict, EncMode.Plain))
      yield TestColumn(s, Nulls.Required, TestFileWriter.generate(s, Nulls.Required, mode, 77L + i), s"_$mode")
    // Columns: int32 low cardinality (0), int32 high cardinality (1), string low (2), string high (3).
    // The high-cardinality ones fail parquet-java's first-page dictionary check: PLAIN data pages.
    val path = TestFiles.dir.resolve("corrupt.parquet")
    val config = FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = false, EncMode.Dict)
    TestFileWriter.write(path, config, cols)
    WrittenFile(path, config, cols)
  }


  /** Reads every row of column `col` (row group 0) from `bytes` and returns the failure. */
  private def readBytes(col: Int, bytes: Array[Byte], length: Int = -1): Throwable = {
    val lm = new LmFile(file.path)
    try {
      val d = lm.descriptor(col)
      val ctx = new ChunkContext(file.path.toString, d.getPath.mkString("."), 0)
      val pages = PageSource.fromBytes(bytes, 0, if (length < 0) bytes.length else length, ctx,
        CompressionCodecName.UNCOMPRESSED)
      val spec = file.columns(col).spec
      val reader = ColumnReaderFactory.create(d, spec.sparkType, pages, lm.rowCount(0), ColumnReadOptions())
      val v = new OnHeapColumnVector(100, spec.sparkType)
      try {
        intercept[ParquetDecodeException] {
          var left = lm.rowCount(0).toInt
          while (left > 0) { val n = math.min(100, left); v.reset(); reader.read(n, v); left -= n }
        }
      } finally v.close()
    } finally lm.close()
  }

  private def assertNamesChunk(e: Throwable, col: Int): Unit = {
    val name = file.columns(col).name
    assert(e.getMessage.contains(file.path.toString), e.getMessage)
    assert(e.getMessage.contains(name), e.getMessage)
    assert(e.getMessage.contains("row group 0"), e.getMessage)
  }

  /** The error names the page being decoded (`page N of the chunk`). */
  private def assertNamesPage(e: Throwable, page: Int): Unit =
    assert(e.getMessage.contains(s"page $page of the chunk"), e.getMessage)

  private def chunk(col: Int): Array[Byte] = {
    val lm = new LmFile(file.path)
    try ChunkBytes.read(file.path, lm.chunk(0, col)) finally lm.close()
  }

  test("the test file has dictionary and plain columns") {
    val lm = new LmFile(file.path)
    try {
      assert(lm.chunk(0, 0).hasDictionaryPage && lm.chunk(0, 2).hasDictionaryPage)
      assert(!lm.chunk(0, 1).getEncodingStats.hasDictionaryEncodedPages, "column 1 should have fallen back")
    } finally lm.close()
  }

  test("truncated file: the chunk cannot be read fully") {
    val lm = new LmFile(file.path)
    try {
      val c = lm.chunk(0, 2)
      val cut = TestFiles.dir.resolve("truncated.parquet")
      val all = Files.readAllBytes(file.path)
      Files.write(cut, java.util.Arrays.copyOf(all, (c.getStartingPos + c.getTotalSize / 2).toInt))
      val in = new LocalInputFile(cut).newStream()
      try {
        val e = intercept[ParquetDecodeException](Sources.forChunk(in, c, lm.descriptor(2), file.path.toString))
        assertNamesChunk(e, 2)
      } finally in.close()
    } finally lm.close()
  }

  test("truncated chunk: a page runs past the end") {
    for (col <- 0 until 4) {
      val bytes = chunk(col)
      val e = readBytes(col, bytes, bytes.length * 2 / 3)
      assertNamesChunk(e, col)
      assert(e.getMessage.contains("truncated"), e.getMessage)
    }
  }

  test("garbage page header") {
    val bytes = chunk(0)
    java.util.Arrays.fill(bytes, 0, 12, 0xff.toByte)
    val e = readBytes(0, bytes)
    assertNamesChunk(e, 0)
    assert(e.getMessage.contains("page header"), e.getMessage)
  }

  test("dictionary id out of range") {
    for (col <- Seq(0, 2)) {
      val bytes = chunk(col)
      val dict = ChunkBytes.pages(bytes).head
      assert(dict.header.dictionary_page_header != null)
      val h = dict.header.deepCopy()
      h.dictionary_page_header.setNum_values(1)
      val e = readBytes(col, ChunkBytes.replaceHeader(bytes, dict, h))
      assertNamesChunk(e, col)
      assert(e.getMessage.contains("dictionary id") && e.getMessage.contains("out of range [0, 1)"), e.getMessage)
      assertNamesPage(e, 1)
    }
  }

  test("page claims more values than it holds") {
    for (col <- Seq(1, 3)) {
      val bytes = chunk(col)
      val page = ChunkBytes.pages(bytes).find(_.header.data_page_header != null).get
      val h = page.header.deepCopy()
      h.data_page_header.setNum_values(h.data_page_header.num_values + 50)
      val e = readBytes(col, ChunkBytes.replaceHeader(bytes, page, h))
      assertNamesChunk(e, col)
      assert(Seq("ended early", "runs past", "truncated").exists(e.getMessage.contains), e.getMessage)
      assertNamesPage(e, ChunkBytes.pages(bytes).indexOf(page))
    }
  }

  test("negative BYTE_ARRAY length") {
    val bytes = chunk(3)
    val page = ChunkBytes.pages(bytes).find(_.header.data_page_header != null).get
    java.util.Arrays.fill(bytes, page.dataStart, page.dataStart + 4, 0xff.toByte)
    val e = readBytes(3, bytes)
    assertNamesChunk(e, 3)
    assert(e.getMessage.contains("negative length"), e.getMessage)
    assertNamesPage(e, ChunkBytes.pages(bytes).indexOf(page))
  }

  test("page encoding the chunk metadata did not announce") {
    val bytes = chunk(1)
    val page = ChunkBytes.pages(bytes).find(_.header.data_page_header != null).get
    val h = page.header.deepCopy()
    h.data_page_header.setEncoding(Encoding.DELTA_LENGTH_BYTE_ARRAY) // not an INT32 encoding
    val e = readBytes(1, ChunkBytes.replaceHeader(bytes, page, h))
    assertNamesChunk(e, 1)
    assert(e.getMessage.contains("DELTA_LENGTH_BYTE_ARRAY"), e.getMessage)
    assertNamesPage(e, ChunkBytes.pages(bytes).indexOf(page))
  }

  test("random byte flips and truncations end cleanly") {
    val r = new Random(42)
    for (trial <- 0 until 300) {
      val col = r.nextInt(4)
      val bytes = chunk(col)
      val len = if (r.nextInt(4) == 0) r.nextInt(bytes.length) else bytes.length
      for (_ <- 0 until 1 + r.nextInt(3)) {
        // Bias flips towards the first bytes of the chunk, where headers and levels live.
        val at = if (r.nextBoolean()) r.nextInt(math.min(64, bytes.length)) else r.nextInt(bytes.length)
        bytes(at) = r.nextInt(256).toByte
      }
      val lm = new LmFile(file.path)
      try {
        val d = lm.descriptor(col)
        val ctx = new ChunkContext(file.path.toString, d.getPath.mkString("."), 0)
        val spec = file.columns(col).spec
        val pages = PageSource.fromBytes(bytes, 0, len, ctx, CompressionCodecName.UNCOMPRESSED)
        val reader = ColumnReaderFactory.create(d, spec.sparkType, pages, lm.rowCount(0), ColumnReadOptions())
        val v = new OnHeapColumnVector(128, spec.sparkType)
        try {
          var left = lm.rowCount(0).toInt
          while (left > 0) {
            val n = math.min(128, left)
            v.reset()
            if (r.nextBoolean()) reader.read(n, v) else reader.skip(n)
            left -= n
          }
        } catch {
          case e: ParquetDecodeException => assertNamesChunk(e, col)
          case e: Throwable => fail(s"trial $trial: unexpected $e", e)
        } finally v.close()
      } finally lm.close()
    }
  }
}
