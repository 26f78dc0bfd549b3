package lmspark.column

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, IOException}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path => HPath}
import org.apache.parquet.format.{FileMetaData, PageHeader, Statistics, Util}
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.{StructField, StructType}
import org.scalatest.funsuite.AnyFunSuite

import lmspark.decode.{DecodeException, Dictionary, RleBitPackedDecoder}
import lmspark.io.{ChunkContext, PageSource}
import lmspark.meta.FooterReader
import lmspark.plan.ScanMetrics
import lmspark.scan.{FileBatchReader, FileReadPlan, ScanSettings}
import lmspark.testutil._

/** One test per family of structural fields the reader takes from a file (issue 8): each corrupts
  * exactly that field of a valid file (re-serialising the thrift `PageHeader` / `FileMetaData`) and
  * reads it with lmspark, at the column level (a [[PageSource]] over the chunk's bytes) and, for most,
  * at the file level ([[FileBatchReader]] over a rewritten file). The outcome must be an
  * `IOException` naming the file, the row group, the column and, for page-level fields, the page
  * (`page N of the chunk`); never an `OutOfMemoryError`, a hang or rows. Where parquet-java reads
  * the corrupted file without error because the field does not matter (statistics, CRC with
  * verification off), lmspark must return its rows. */
class StructuralChecksSuite extends AnyFunSuite {

  private val int32 = TestTypes.all.find(_.name == "int32").get
  private val int64 = TestTypes.all.find(_.name == "int64").get
  private val string = TestTypes.all.find(_.name == "string").get

  /** A written test file and its Spark schema. */
  private final class Fixture(val file: WrittenFile) {
    def path: Path = file.path
    def name(col: Int): String = file.columns(col).name
    def schema: StructType = StructType(file.columns.map(c =>
      StructField(c.name, c.spec.sparkType, c.nulls != Nulls.Required)))
  }

  private def write(name: String, config: FileConfig, cols: Seq[(TypeSpec, Nulls)]): Fixture = {
    val columns = cols.zipWithIndex.map { case ((s, n), i) =>
      TestColumn(s, n, TestFileWriter.generate(s, n, config.mode, 1000L + i))
    }.toIndexedSeq
    val path = TestFiles.dir.resolve(s"structural-$name.parquet")
    TestFileWriter.write(path, config, columns)
    new Fixture(WrittenFile(path, config, columns))
  }

  /** v1 pages, dictionary-encoded int32 and string, both with nulls: page 0 is the dictionary. */
  private lazy val v1Dict = write("v1-dict", FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = false, EncMode.Dict),
    Seq(int32 -> Nulls.SomeNulls, string -> Nulls.SomeNulls))
  /** v2 pages, SNAPPY, dictionary-encoded int32 and string with nulls. */
  private lazy val v2Snappy = write("v2-snappy", FileConfig(CompressionCodecName.SNAPPY, v2 = true, EncMode.Dict),
    Seq(int32 -> Nulls.SomeNulls, string -> Nulls.SomeNulls))
  /** v1 pages, DELTA_BINARY_PACKED int64 (required: the page starts with the values). */
  private lazy val v1Delta = write("v1-delta", FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = false, EncMode.Delta),
    Seq(int64 -> Nulls.Required, string -> Nulls.SomeNulls))

  // ---- reading ----

  private def chunk(f: Fixture, rg: Int, col: Int): Array[Byte] = {
    val lm = new LmFile(f.path)
    try ChunkBytes.read(f.path, lm.chunk(rg, col)) finally lm.close()
  }

  /** Reads every row of chunk (rg, col) from `bytes` (in batches of 100, reading or skipping as
    * `skip` says) and returns the failure, or fails the test when the read succeeds. */
  private def readChunk(f: Fixture, rg: Int, col: Int, bytes: Array[Byte], skip: Int => Boolean = _ => false): Throwable = {
    val lm = new LmFile(f.path)
    try {
      val d = lm.descriptor(col)
      val c = lm.chunk(rg, col)
      val ctx = new ChunkContext(f.path.toString, d.getPath.mkString("."), rg)
      val pages = PageSource.fromBytes(bytes, 0, bytes.length, ctx, c.getCodec,
        maxUncompressedPageSize = math.max(c.getTotalUncompressedSize, 1L), chunkFileOffset = c.getStartingPos)
      val spec = f.file.columns(col).spec
      val reader = ColumnReaderFactory.create(d, spec.sparkType, pages, lm.rowCount(rg), ColumnReadOptions())
      val v = new OnHeapColumnVector(100, spec.sparkType)
      try {
        val e = intercept[Throwable] {
          var left = lm.rowCount(rg).toInt
          var batch = 0
          while (left > 0) {
            val n = math.min(100, left)
            v.reset()
            if (skip(batch)) reader.skip(n) else reader.read(n, v)
            left -= n
            batch += 1
          }
        }
        e
      } finally v.close()
    } finally lm.close()
  }

  private def metrics: ScanMetrics = {
    def m = new SQLMetric("sum")
    ScanMetrics(m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m)
  }

  /** Reads the whole file at `path` (schema of `f`) through FooterReader + FileBatchReader and
    * returns the failure, or fails the test when the read succeeds. */
  private def readFile(f: Fixture, path: Path): Throwable = {
    val conf = new Configuration()
    val file = path.toFile
    val settings = ScanSettings(f.schema, new StructType(), batchSize = 100, offHeapVectors = false,
      caseSensitive = false, datetimeRebaseModeInRead = "CORRECTED")
    intercept[Throwable] {
      val open = FooterReader.open(conf, new HPath(file.getAbsolutePath), file.length, file.lastModified, 0, file.length)
      val plan = FileReadPlan.build(open.footer, f.schema, settings).fold(why => fail(why), identity)
      val reader = new FileBatchReader(open, plan, org.apache.spark.sql.catalyst.InternalRow.empty, settings, metrics)
      try while (reader.hasNext) reader.next() finally reader.close()
    }
  }

  /** `e` is an IOException naming `path`, the row group, the column and (when given) the page. */
  private def assertNames(e: Throwable, path: Path, rg: Int, column: String, page: Option[Int]): Unit = {
    val msg = String.valueOf(e.getMessage)
    assert(e.isInstanceOf[IOException], s"expected an IOException, got $e")
    assert(msg.contains(path.toString), s"no file in: $msg")
    assert(msg.contains(s"row group $rg"), s"no row group in: $msg")
    assert(msg.contains(s"column $column"), s"no column in: $msg")
    page.foreach(p => assert(msg.contains(s"page $p of the chunk"), s"no page $p in: $msg"))
  }

  // ---- rewriting ----

  private def footerLength(all: Array[Byte]): Int =
    ByteBuffer.wrap(all, all.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt

  /** A copy of `src` with `edit` applied to its thrift footer (data bytes unchanged), plus
    * `appended` written between the data and the footer (returns where it starts). */
  private def rewriteFooter(src: Path, dest: String, appended: Array[Byte] = Array.emptyByteArray)(
      edit: (FileMetaData, Long) => Unit): Path = {
    val all = Files.readAllBytes(src)
    val len = footerLength(all)
    val footerStart = all.length - 8 - len
    val footer = Util.readFileMetaData(new ByteArrayInputStream(all, footerStart, len))
    edit(footer, footerStart.toLong)
    val out = new ByteArrayOutputStream()
    out.write(all, 0, footerStart)
    out.write(appended)
    val at = out.size()
    Util.writeFileMetaData(footer, out)
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(out.size() - at).array())
    out.write("PAR1".getBytes("US-ASCII"))
    val path = TestFiles.dir.resolve(s"structural-$dest.parquet")
    Files.write(path, out.toByteArray)
    path
  }

  /** A copy of the fixture's file whose chunk (rg, col) is `bytes`. The whole row group is moved
    * after the data, its chunks in their order (the others byte-identical, `bytes` in place of chunk
    * `col`), so that the row group's declared range (its first chunk's offset and its
    * total_compressed_size, which Spark's splits assign it by) stays inside the file: the chunks'
    * offsets and sizes point at the copies, and their page indexes are dropped. */
  private def replaceChunk(f: Fixture, rg: Int, col: Int, bytes: Array[Byte], dest: String): Path = {
    val all = Files.readAllBytes(f.path)
    val original = Util.readFileMetaData(new ByteArrayInputStream(all, all.length - 8 - footerLength(all), footerLength(all)))
    def startOf(md: org.apache.parquet.format.ColumnMetaData): Long =
      if (md.isSetDictionary_page_offset && md.getDictionary_page_offset > 0 &&
        md.getDictionary_page_offset < md.getData_page_offset) md.getDictionary_page_offset
      else md.getData_page_offset
    val chunks = original.getRow_groups.get(rg).getColumns.asScala.toIndexedSeq.zipWithIndex.map { case (cc, c) =>
      if (c == col) bytes
      else {
        val md = cc.getMeta_data
        java.util.Arrays.copyOfRange(all, startOf(md).toInt, (startOf(md) + md.getTotal_compressed_size).toInt)
      }
    }
    rewriteFooter(f.path, dest, chunks.reduce(_ ++ _)) { (footer, newStart) =>
      val group = footer.getRow_groups.get(rg)
      var at = newStart
      group.getColumns.asScala.zip(chunks).foreach { case (cc, chunk) =>
        val md = cc.getMeta_data
        val hasDict = md.isSetDictionary_page_offset && md.getDictionary_page_offset > 0 &&
          md.getDictionary_page_offset < md.getData_page_offset
        val oldStart = startOf(md)
        md.setData_page_offset(at + (md.getData_page_offset - oldStart))
        if (hasDict) md.setDictionary_page_offset(at)
        md.setTotal_uncompressed_size(md.getTotal_uncompressed_size + chunk.length - md.getTotal_compressed_size)
        md.setTotal_compressed_size(chunk.length)
        cc.setFile_offset(at)
        cc.unsetColumn_index_offset(); cc.unsetColumn_index_length()
        cc.unsetOffset_index_offset(); cc.unsetOffset_index_length()
        at += chunk.length
      }
      group.setFile_offset(newStart)
      group.setTotal_compressed_size(at - newStart)
    }
  }

  /** `bytes` with page `i` (in the order of [[ChunkBytes.pages]]) given header `edit(copy)`. */
  private def editHeader(bytes: Array[Byte], i: Int)(edit: PageHeader => Unit): Array[Byte] = {
    val page = ChunkBytes.pages(bytes)(i)
    val h = page.header.deepCopy()
    edit(h)
    ChunkBytes.replaceHeader(bytes, page, h)
  }

  /** Index (in ChunkBytes.pages, i.e. the page ordinal) of the first data page. */
  private def firstDataPage(bytes: Array[Byte]): Int =
    ChunkBytes.pages(bytes).indexWhere(p => p.header.data_page_header != null || p.header.data_page_header_v2 != null)

  /** Checks a corrupted chunk at the column level (reading, and skipping every other batch) and at
    * the file level; `page` is the ordinal of the page the error must name. */
  private def checkBoth(f: Fixture, rg: Int, col: Int, bytes: Array[Byte], tag: String, page: Option[Int],
      expect: String => Boolean = _ => true): Unit = {
    for (skip <- Seq[Int => Boolean](_ => false, _ % 2 == 1)) {
      val e = readChunk(f, rg, col, bytes, skip)
      assertNames(e, f.path, rg, f.name(col), page)
      assert(expect(e.getMessage), s"$tag: unexpected message ${e.getMessage}")
    }
    val path = replaceChunk(f, rg, col, bytes, tag)
    val e = readFile(f, path)
    assertNames(e, path, rg, f.name(col), page)
    assert(expect(e.getMessage), s"$tag (file level): unexpected message ${e.getMessage}")
  }

  // ---- thrift lengths, page header sizes ----

  test("thrift page header: garbage in a data page header names that page") {
    for (f <- Seq(v1Dict, v2Snappy); col <- 0 until 2) {
      val bytes = chunk(f, 1, col)
      val p = ChunkBytes.pages(bytes)(2)
      java.util.Arrays.fill(bytes, p.start, p.start + 6, 0xff.toByte)
      checkBoth(f, 1, col, bytes, s"garbage-header-$col", Some(2), _.contains("page header"))
    }
  }

  test("thrift page header: a statistics binary with a huge length is an error, not an allocation") {
    val f = v1Dict
    val bytes = chunk(f, 0, 1)
    val i = firstDataPage(bytes)
    val big = Array.fill[Byte](64)(7)
    val edited = editHeader(bytes, i)(_.data_page_header.setStatistics(new Statistics().setMax_value(big)))
    // Find the 64-byte value's varint length (0x40) just before it and make it claim 2^31 - 1
    // bytes, or 96 MiB (under thrift's own 100 MiB message limit): either is refused by the
    // length check against the bytes left in the chunk, before thrift allocates for it.
    val p = ChunkBytes.pages(bytes)(i).start
    val at = (p until edited.length - 64).find(k => edited(k) == 0x40 && edited.slice(k + 1, k + 65).forall(_ == 7)).get
    for (length <- Seq(Array(0xff, 0xff, 0xff, 0xff, 0x07), Array(0x80, 0x80, 0x80, 0x30))) {
      val huge = edited.take(at) ++ length.map(_.toByte) ++ edited.drop(at + 1)
      checkBoth(f, 0, 1, huge, s"huge-thrift-binary-${length.length}", Some(i),
        m => m.contains("page header") && !m.contains("104857600") && // not thrift's default limit
          (m.contains("MaxMessageSize reached") || m.contains("Message size exceeds limit")))
    }
  }

  test("page header sizes: compressed_page_size negative or past the chunk") {
    for (f <- Seq(v1Dict, v2Snappy); col <- 0 until 2; size <- Seq(-1, Int.MaxValue, 1 << 20)) {
      val bytes = chunk(f, 0, col)
      val i = firstDataPage(bytes) + 1
      val edited = editHeader(bytes, i)(_.setCompressed_page_size(size))
      checkBoth(f, 0, col, edited, s"compressed-$col-$size", Some(i),
        m => m.contains("page header") || m.contains("remain in the chunk"))
    }
  }

  test("page header sizes: uncompressed_page_size negative, huge or wrong") {
    val f = v2Snappy
    for (col <- 0 until 2; delta <- Seq(Int.MinValue, 1 << 30, 1, -1)) {
      val bytes = chunk(f, 0, col)
      val i = firstDataPage(bytes)
      val edited = editHeader(bytes, i) { h =>
        val n = h.uncompressed_page_size.toLong + delta
        h.setUncompressed_page_size(if (delta == Int.MinValue) -5 else math.min(n, Int.MaxValue).toInt)
      }
      checkBoth(f, 0, col, edited, s"uncompressed-$col-$delta", Some(i))
    }
    // The dictionary page too (page 0).
    val bytes = chunk(f, 0, 1)
    checkBoth(f, 0, 1, editHeader(bytes, 0)(h => h.setUncompressed_page_size(h.uncompressed_page_size + 3)),
      "uncompressed-dict", Some(0))
  }

  test("v2 level byte lengths that do not fit the page") {
    val f = v2Snappy
    for (col <- 0 until 2; (rl, dl) <- Seq((-1, 0), (0, -1), (0, 1 << 20), (1 << 20, 0))) {
      val bytes = chunk(f, 0, col)
      val i = firstDataPage(bytes)
      val edited = editHeader(bytes, i) { h =>
        h.data_page_header_v2.setRepetition_levels_byte_length(rl)
        if (dl != 0) h.data_page_header_v2.setDefinition_levels_byte_length(dl)
      }
      checkBoth(f, 0, col, edited, s"v2-levels-$col-$rl-$dl", Some(i), _.contains("level lengths"))
    }
  }

  // ---- dictionary counts ----

  test("dictionary num_values against the bytes the page holds, and ids against the dictionary size") {
    for (f <- Seq(v1Dict, v2Snappy); col <- 0 until 2; n <- Seq(-1, 1 << 24, Int.MaxValue)) {
      val bytes = chunk(f, 0, col)
      val edited = editHeader(bytes, 0)(_.dictionary_page_header.setNum_values(n))
      checkBoth(f, 0, col, edited, s"dict-count-$col-$n", Some(0),
        m => m.contains("dictionary") && (m.contains("negative") || m.contains("too short") || m.contains("truncated")))
    }
    for (f <- Seq(v1Dict, v2Snappy); col <- 0 until 2) {
      val bytes = chunk(f, 0, col)
      val edited = editHeader(bytes, 0)(_.dictionary_page_header.setNum_values(1))
      val i = firstDataPage(bytes)
      checkBoth(f, 0, col, edited, s"dict-ids-$col", Some(i), _.contains("out of range [0, 1)"))
    }
  }

  test("a BYTE_ARRAY dictionary's count is bounded by its page before anything is allocated") {
    val page = Array[Byte](1, 0, 0, 0, 'a'.toByte)
    val e = intercept[DecodeException](Dictionary.decodePlain(
      org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BINARY, 0, Int.MaxValue, page, 0, page.length))
    assert(e.getMessage.contains("too short"), e.getMessage)
  }

  // ---- bit widths ----

  test("bit widths: dictionary id width > 32") {
    for (f <- Seq(v1Dict, v2Snappy)) {
      val col = 0
      val bytes = chunk(f, 0, col)
      val i = firstDataPage(bytes)
      val p = ChunkBytes.pages(bytes)(i)
      // The id bit width byte follows the levels: v1 (uncompressed) 4-byte length + levels; v2 has
      // them outside the values, but its values are compressed: only v1 is edited in place.
      if (!f.file.config.v2) {
        val levelLen = ByteBuffer.wrap(bytes, p.dataStart, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
        val at = p.dataStart + 4 + levelLen
        assert(bytes(at) > 0 && bytes(at) <= 32)
        bytes(at) = 40
        checkBoth(f, 0, col, bytes, "id-width", Some(i), _.contains("bit width 40 > 32"))
      }
    }
  }

  test("bit widths: DELTA_BINARY_PACKED miniblock width > 64") {
    val f = v1Delta
    val bytes = chunk(f, 0, 0)
    val i = firstDataPage(bytes)
    val p = ChunkBytes.pages(bytes)(i)
    // Header: block size, miniblocks, total count, first value (ULEB128 each), then the first
    // block's min delta and one width byte per miniblock.
    var at = p.dataStart
    def varint(): Unit = { while ((bytes(at) & 0x80) != 0) at += 1; at += 1 }
    varint(); varint(); varint(); varint(); varint()
    bytes(at) = 70
    checkBoth(f, 0, 0, bytes, "delta-width", Some(i), _.contains("bit width 70 > 64"))
  }

  test("levels against the schema: a definition level above the max") {
    val f = v1Dict
    for (col <- 0 until 2) {
      val bytes = chunk(f, 0, col)
      val i = firstDataPage(bytes)
      val p = ChunkBytes.pages(bytes)(i)
      val rows = p.header.data_page_header.num_values
      // An RLE run of `rows` levels of value 2 (max definition level 1, bit width 1).
      val at = p.dataStart + 4
      bytes(at) = (((rows << 1) & 0x7f) | 0x80).toByte
      bytes(at + 1) = ((rows << 1) >>> 7).toByte
      bytes(at + 2) = 2
      checkBoth(f, 0, col, bytes, s"level-above-max-$col", Some(i),
        m => m.contains("does not fit the bit width 1") || m.contains("outside [0, 1]"))
    }
  }

  // ---- level counts against value counts ----

  test("v1: a page whose num_values exceeds its levels or values") {
    for (col <- 0 until 2) {
      val f = v1Dict
      val bytes = chunk(f, 0, col)
      val i = firstDataPage(bytes)
      val edited = editHeader(bytes, i)(h => h.data_page_header.setNum_values(h.data_page_header.num_values + 40))
      checkBoth(f, 0, col, edited, s"v1-count-$col", Some(i))
    }
  }

  test("v2: num_rows, num_values and num_nulls must agree with each other and with the levels") {
    val f = v2Snappy
    for (col <- 0 until 2) {
      val bytes = chunk(f, 0, col)
      val i = firstDataPage(bytes)
      val nulls = ChunkBytes.pages(bytes)(i).header.data_page_header_v2.num_nulls
      val values = ChunkBytes.pages(bytes)(i).header.data_page_header_v2.num_values
      assert(nulls > 0 && nulls < values, s"the fixture's first page should hold some nulls: $nulls of $values")
      val cases = Seq[(String, PageHeader => Unit, String)](
        ("rows", h => h.data_page_header_v2.setNum_rows(values - 1), "num_rows"),
        ("nulls-over", h => h.data_page_header_v2.setNum_nulls(values + 1), "num_nulls"),
        ("nulls-off", h => h.data_page_header_v2.setNum_nulls(nulls - 1), "num_nulls"),
        ("negative", h => h.data_page_header_v2.setNum_nulls(-1), "negative counts"))
      for ((tag, edit, word) <- cases) {
        // Reading the page through (no skips) is what checks num_nulls against the levels.
        val e = readChunk(f, 0, col, editHeader(bytes, i)(edit))
        assertNames(e, f.path, 0, f.name(col), Some(i))
        assert(e.getMessage.contains(word), s"$tag: ${e.getMessage}")
        val path = replaceChunk(f, 0, col, editHeader(bytes, i)(edit), s"v2-$tag-$col")
        val fe = readFile(f, path)
        assertNames(fe, path, 0, f.name(col), Some(i))
      }
    }
  }

  // ---- num_values against the rows in the row group ----

  test("pages holding more rows than the row group: a last page too long, or a page after the last row") {
    for (f <- Seq(v1Dict, v2Snappy); col <- 0 until 2) {
      val bytes = chunk(f, 1, col)
      val pages = ChunkBytes.pages(bytes)
      val last = pages.size - 1
      val longer = editHeader(bytes, last) { h =>
        if (h.data_page_header != null) h.data_page_header.setNum_values(h.data_page_header.num_values + 1)
        else { h.data_page_header_v2.setNum_values(h.data_page_header_v2.num_values + 1)
          h.data_page_header_v2.setNum_rows(h.data_page_header_v2.num_rows + 1) }
      }
      checkBoth(f, 1, col, longer, s"last-longer-$col-${f.file.config.v2}", Some(last),
        _.contains("rows remain"))
      // The last data page once more after itself: its rows lie past the row group's last row.
      val p = pages(last)
      val extra = bytes ++ java.util.Arrays.copyOfRange(bytes, p.start, bytes.length)
      val e = readChunk(f, 1, col, extra)
      assertNames(e, f.path, 1, f.name(col), Some(last + 1))
      assert(e.getMessage.contains("after the row group's last row"), e.getMessage)
      val path = replaceChunk(f, 1, col, extra, s"extra-page-$col-${f.file.config.v2}")
      assertNames(readFile(f, path), path, 1, f.name(col), Some(last + 1))
    }
  }

  test("pages holding fewer rows than the row group") {
    for (f <- Seq(v1Dict, v2Snappy); col <- 0 until 2) {
      val bytes = chunk(f, 1, col)
      val pages = ChunkBytes.pages(bytes)
      val cut = java.util.Arrays.copyOf(bytes, pages.last.start) // without the last page
      val e = readChunk(f, 1, col, cut)
      assertNames(e, f.path, 1, f.name(col), None)
      assert(e.getMessage.contains("no more data pages") && e.getMessage.contains(s"after page ${pages.size - 2}"),
        e.getMessage)
      val path = replaceChunk(f, 1, col, cut, s"fewer-$col-${f.file.config.v2}")
      assertNames(readFile(f, path), path, 1, f.name(col), None)
    }
  }

  test("footer: a chunk's num_values or the row group's num_rows disagreeing for a flat column") {
    for ((tag, edit) <- Seq[(String, FileMetaData => Unit)](
        "chunk-values" -> (m => m.getRow_groups.get(1).getColumns.get(1).getMeta_data.setNum_values(1233)),
        "chunk-values-negative" -> (m => m.getRow_groups.get(1).getColumns.get(1).getMeta_data.setNum_values(-1)),
        // (the file's num_rows follows, so that only the row group and its chunks disagree)
        "row-group-rows" -> (m => { m.getRow_groups.get(1).setNum_rows(1235); m.setNum_rows(m.getNum_rows + 1) }))) {
      val path = rewriteFooter(v1Dict.path, s"footer-$tag")((m, _) => edit(m))
      val e = readFile(v1Dict, path)
      assertNames(e, path, 1, v1Dict.name(if (tag == "row-group-rows") 0 else 1), None)
      assert(e.getMessage.contains("num_values") && e.getMessage.contains("page: not applicable"), e.getMessage)
    }
  }

  test("footer: a row group without rows may leave its chunks' offsets at 0 (as pyarrow writes them)") {
    val f = v1Dict
    val path = rewriteFooter(f.path, "footer-empty-row-group") { (m, _) =>
      val rg = m.getRow_groups.get(1)
      m.setNum_rows(m.getNum_rows - rg.getNum_rows)
      rg.setNum_rows(0)
      rg.getColumns.forEach { c =>
        val md = c.getMeta_data
        md.setNum_values(0); md.setData_page_offset(0); md.setDictionary_page_offset(0)
        md.setTotal_compressed_size(0); md.setTotal_uncompressed_size(0)
        md.unsetStatistics()
        c.unsetOffset_index_offset(); c.unsetOffset_index_length()
        c.unsetColumn_index_offset(); c.unsetColumn_index_length()
      }
    }
    val file = path.toFile
    val conf = new Configuration()
    val open = FooterReader.open(conf, new HPath(file.getAbsolutePath), file.length, file.lastModified, 0, file.length)
    val blocks = open.footer.getBlocks
    val expected = (0 until blocks.size).map(blocks.get(_).getRowCount).sum
    assert(blocks.size >= 2 && blocks.get(1).getRowCount == 0 && expected > 0)
    val settings = ScanSettings(f.schema, new StructType(), batchSize = 100, offHeapVectors = false,
      caseSensitive = false, datetimeRebaseModeInRead = "CORRECTED")
    val plan = FileReadPlan.build(open.footer, f.schema, settings).fold(why => fail(why), identity)
    val reader = new FileBatchReader(open, plan, org.apache.spark.sql.catalyst.InternalRow.empty, settings, metrics)
    var rows = 0L
    try while (reader.hasNext) rows += reader.next().numRows
    finally reader.close()
    assert(rows == expected)
  }

  // ---- offsets inside the chunk and the file ----

  test("footer: chunk offsets and sizes outside the file, or the first data page outside the chunk") {
    val f = v1Dict
    val size = Files.size(f.path)
    val edits = Seq[(String, org.apache.parquet.format.ColumnMetaData => Unit, String)](
      ("size-huge", _.setTotal_compressed_size(Int.MaxValue - 100), "does not lie between"),
      ("size-negative", _.setTotal_compressed_size(-7), "negative"),
      ("size-past-end", md => md.setTotal_compressed_size(size - md.getData_page_offset), "does not lie between"),
      ("data-offset-past-end", md => { md.unsetDictionary_page_offset(); md.setData_page_offset(size + 10) },
        "does not lie between"),
      ("data-offset-negative", md => { md.unsetDictionary_page_offset(); md.setData_page_offset(-3) }, "does not lie between"),
      ("data-offset-outside", md => {
        val start = if (md.isSetDictionary_page_offset && md.getDictionary_page_offset > 0) md.getDictionary_page_offset
          else md.getData_page_offset
        md.setDictionary_page_offset(start)
        md.setData_page_offset(start + md.getTotal_compressed_size + 5)
      }, "outside the column chunk"),
      ("uncompressed-negative", _.setTotal_uncompressed_size(-1), "total_uncompressed_size"))
    for ((tag, edit, word) <- edits) {
      val path = rewriteFooter(f.path, s"offsets-$tag")((m, _) => edit(m.getRow_groups.get(1).getColumns.get(1).getMeta_data))
      val e = readFile(f, path)
      assertNames(e, path, 1, f.name(1), None)
      assert(e.getMessage.contains(word) && e.getMessage.contains("page: not applicable"), s"$tag: ${e.getMessage}")
    }
  }

  test("footer: the footer length huge, negative or past the file's start; a bad magic") {
    val all = Files.readAllBytes(v1Dict.path)
    def withTail(tag: String)(edit: Array[Byte] => Unit): Path = {
      val b = all.clone()
      edit(b)
      val p = TestFiles.dir.resolve(s"structural-tail-$tag.parquet")
      Files.write(p, b)
      p
    }
    def setLength(b: Array[Byte], n: Int): Unit =
      ByteBuffer.wrap(b, b.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).putInt(n)
    val paths = Seq(
      withTail("huge")(setLength(_, Int.MaxValue)),
      withTail("negative")(setLength(_, -1)),
      withTail("past-start")(b => setLength(b, b.length - 8)),
      withTail("short")(b => setLength(b, footerLength(b) / 2)),
      withTail("magic")(b => b(b.length - 1) = 'X'.toByte))
    for (p <- paths) {
      val e = readFile(v1Dict, p)
      assert(e.isInstanceOf[IOException] && e.getMessage.contains(p.toString), s"$p: $e")
    }
  }

  // ---- allocation bounds ----

  test("a zero-width bit-packed run of a huge count allocates nothing from its count") {
    // Header: bit-packed (low bit 1), 2^27 groups of 8 values, bit width 0: 2^30 zeros.
    val header = (1L << 28) | 1L
    val out = new ByteArrayOutputStream()
    var h = header
    while (h >= 0x80) { out.write(((h & 0x7f) | 0x80).toInt); h >>>= 7 }
    out.write(h.toInt)
    val bytes = out.toByteArray
    val d = new RleBitPackedDecoder
    d.init(bytes, 0, bytes.length, 0)
    val dst = new Array[Int](1000)
    java.util.Arrays.fill(dst, 9)
    d.readInts(1000, dst, 0)
    assert(dst.forall(_ == 0))
    d.skip(1 << 29)
    d.readInts(10, dst, 0)
    assert(dst.take(10).forall(_ == 0))
  }

  test("an RLE run value wider than its bit width is malformed") {
    val d = new RleBitPackedDecoder
    val bytes = Array[Byte](8, 3) // RLE run of 4, value 3, bit width 1
    d.init(bytes, 0, bytes.length, 1)
    val e = intercept[DecodeException](d.readInts(4, new Array[Int](4), 0))
    assert(e.getMessage.contains("does not fit the bit width 1"), e.getMessage)
  }

  // ---- fields parquet-java does not need: rows must equal its rows ----

  test("a wrong page-header statistic or CRC (verification off) changes nothing: parquet-java's rows") {
    val f = v1Dict
    val oracle = ParquetOracle.readAll(f.path)
    for (col <- 0 until 2) {
      val bytes = chunk(f, 0, col)
      val i = firstDataPage(bytes)
      val edited = editHeader(bytes, i) { h =>
        h.data_page_header.setStatistics(new Statistics().setMin_value(Array[Byte](9, 9, 9, 9)).setNull_count(12345))
        h.setCrc(0x1234567)
      }
      val path = replaceChunk(f, 0, col, edited, s"benign-$col")
      val expected = ParquetOracle.readAll(path)
      assert(expected == oracle, "parquet-java reads the edited file as the original")
      val lm = new LmFile(path)
      try {
        val spec = f.file.columns(col).spec
        for (rg <- 0 until lm.rowGroups) {
          val rows = lm.rowCount(rg).toInt
          val actual = LmReading.readAll(lm.reader(rg, col, spec.sparkType), spec.sparkType, rows, 100)
          val want = expected(col)(rg).map(v => if (v == null) null else spec.toSpark(v))
          ColumnReaderMatrixSuite.assertSame(s"benign col $col rg $rg", actual, want)
        }
      } finally lm.close()
    }
  }
}

/** Codec-format expansion bounds, checked before a decompressor allocates its output. */
class DecompressionBoundsSuite extends AnyFunSuite {
  test("an uncompressed size beyond what the codec's format can expand to is refused before allocating") {
    val src = new Array[Byte](100)
    for (codec <- Seq(CompressionCodecName.SNAPPY, CompressionCodecName.LZ4, CompressionCodecName.LZ4_RAW,
        CompressionCodecName.GZIP)) {
      val d = lmspark.io.Decompressors.forCodec(codec).get
      val e = intercept[lmspark.io.CorruptCompressedDataException](d.decompress(src, 0, src.length, Int.MaxValue - 16))
      assert(e.getMessage.contains("cannot decompress"), e.getMessage)
    }
  }
}
