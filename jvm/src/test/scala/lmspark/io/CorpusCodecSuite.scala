package lmspark.io

import java.nio.file.Path
import java.security.MessageDigest
import java.util.zip.Inflater

import org.apache.parquet.format.PageType
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.hadoop.metadata.CompressionCodecName._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.{FlatColumnReader, VectorWriter}
import lmspark.io.CodecFixtures._
import lmspark.testutil._

/** The parquet-testing corpus files for LZ4 (Hadoop-framed and raw), LZ4_RAW, BROTLI, GZIP with
  * concatenated members and empty compressed pages, read through our page source and column
  * readers against parquet-java's reading or, where parquet-java cannot read the file, pyarrow's
  * (the CSVs gen_codec_fixtures.py wrote). Cancelled when the corpus is absent. */
class CorpusCodecSuite extends AnyFunSuite {

  /** Every column chunk of `path` equals `expected(column)(rowGroup)`, with every page read. */
  private def assertColumns(path: Path, codec: CompressionCodecName, expected: IndexedSeq[IndexedSeq[IndexedSeq[Any]]]): Unit = {
    val lm = new LmFile(path)
    try {
      for (col <- expected.indices; rg <- 0 until lm.rowGroups) {
        assert(lm.chunk(rg, col).getCodec == codec)
        for (batch <- Seq(1, 3, 4096)) {
          val (actual, reader) = readChunk(lm, rg, col, batch)
          assertSameValues(s"${path.getFileName} column $col rg $rg batch $batch", actual, expected(col)(rg))
          assert(reader.pagesRead == pageCount(lm, rg, col))
          reader.close()
        }
      }
    } finally lm.close()
  }

  for ((name, codec) <- Seq("hadoop_lz4_compressed" -> LZ4, "hadoop_lz4_compressed_larger" -> LZ4,
      "lz4_raw_compressed" -> LZ4_RAW, "lz4_raw_compressed_larger" -> LZ4_RAW,
      "datapage_v2_empty_datapage.snappy" -> SNAPPY, "page_v2_empty_compressed" -> ZSTD)) {
    test(s"$name.parquet reads as parquet-java reads it") {
      val p = corpus(s"$name.parquet")
      assertColumns(p, codec, ParquetOracle.readAll(p))
    }
  }

  test("hadoop_lz4_compressed_larger.parquet has Hadoop framing with several chunks in a page") {
    val p = corpus("hadoop_lz4_compressed_larger.parquet")
    val lm = new LmFile(p)
    try {
      val pages = split(ChunkBytes.read(p, lm.chunk(0, 0))).filter(_._1.getType != PageType.DICTIONARY_PAGE)
      def be(b: Array[Byte], i: Int) = java.nio.ByteBuffer.wrap(b, i, 4).getInt
      // A page's first block declares its whole uncompressed size; its first chunk is shorter than the
      // page data: the block continues with more chunks (or more blocks).
      val multi = pages.exists { case (h, d) => be(d, 0) > 0 && be(d, 4) + 8 < d.length }
      assert(multi, s"page sizes: ${pages.map(_._1.uncompressed_page_size)}")
    } finally lm.close()
  }

  test("non_hadoop_lz4_compressed.parquet (raw LZ4 blocks labelled LZ4) reads as pyarrow reads it") {
    val p = corpus("non_hadoop_lz4_compressed.parquet")
    val oracle = csv("corpus_non_hadoop_lz4_compressed.csv")
    val lm = new LmFile(p)
    val expected = try {
      assert(lm.rowGroups == 1)
      oracle.names.indices.map { c =>
        assert(lm.descriptor(c).getPath.mkString(".") == oracle.names(c))
        IndexedSeq(oracle.column(oracle.names(c)).map(cellValue(_, sparkTypeOf(lm.descriptor(c)))))
      }
    } finally lm.close()
    assertColumns(p, LZ4, expected)
    // The same rows as the LZ4_RAW corpus file, as parquet-java reads that one.
    val raw = ParquetOracle.readAll(corpus("lz4_raw_compressed.parquet"))
    for (c <- expected.indices) assertSameValues(s"column $c vs lz4_raw_compressed", expected(c)(0), raw(c)(0))
  }

  test("concatenated_gzip_members.parquet (one page of two gzip members) reads as parquet-java reads it") {
    val p = corpus("concatenated_gzip_members.parquet")
    val oracle = ParquetOracle.readAll(p)
    val lm = new LmFile(p)
    try {
      val chunk = lm.chunk(0, 0)
      assert(chunk.getCodec == GZIP)
      // The page really holds more than one member: bytes remain after the first member's trailer.
      val (h, data) = split(ChunkBytes.read(p, chunk)).find(_._1.getType != PageType.DICTIONARY_PAGE).get
      val levels = if (h.getType == PageType.DATA_PAGE_V2)
        h.data_page_header_v2.repetition_levels_byte_length + h.data_page_header_v2.definition_levels_byte_length
      else 0
      val inf = new Inflater(true)
      inf.setInput(data, levels + 10, data.length - levels - 10)
      val sink = new Array[Byte](h.uncompressed_page_size)
      while (!inf.finished()) inf.inflate(sink)
      assert(inf.getRemaining > 8, "expected a second gzip member after the first")
      inf.end()
      // UINT_64 is not a Spark LongType pairing, so the reader is built directly with the INT64 writer.
      val d = lm.descriptor(0)
      val reader = new FlatColumnReader(d, pages(lm, 0, 0), lm.rowCount(0), VectorWriter.Longs, preserveDictionary = false)
      val actual = readAll(reader, org.apache.spark.sql.types.LongType, lm.rowCount(0).toInt, 100)
      assertSameValues("long_col", actual, oracle(0)(0))
      assert(reader.pagesRead == pageCount(lm, 0, 0))
    } finally lm.close()
  }

  test("large_string_map.brotli.parquet: every page decompresses to what pyarrow reads") {
    assume(Runtime.getRuntime.maxMemory > (3L << 30), "needs a 3 GiB heap for two 1 GiB pages")
    val p = corpus("large_string_map.brotli.parquet")
    val oracle = csv("corpus_large_string_map_brotli.csv")
    val lm = new LmFile(p)
    try {
      assert(lm.rowGroups == 1)
      val keyCol = lm.columnIndex("arr.key_value.key")
      val valueCol = lm.columnIndex("arr.key_value.value")
      // Keys: a dictionary page holding the first key, then data pages (dictionary ids, then the
      // second key PLAIN once the dictionary is full). Each key is one BYTE_ARRAY value of 1 GiB:
      // we hash each value found in a PLAIN-encoded page (dictionary or data).
      val keys = IndexedSeq.newBuilder[(Long, String)]
      val source = pages(lm, 0, keyCol)
      while (source.nextPage()) {
        source.currentPageType match {
          case PageType.DICTIONARY_PAGE =>
            val d = source.readDictionaryPage()
            assert(d.numValues == 1)
            keys += plainBinary(d.bytes, d.offset, d.length)
          case _ =>
            val page = source.readDataPage().asInstanceOf[DataPageV1]
            if (page.valueEncoding == org.apache.parquet.format.Encoding.PLAIN) {
              // v1 page: repetition then definition levels, each with a 4-byte length; then values.
              val rl = le32(page.bytes, page.offset)
              val dlAt = page.offset + 4 + rl
              val dl = le32(page.bytes, dlAt)
              val valuesAt = dlAt + 4 + dl
              keys += plainBinary(page.bytes, valuesAt, page.offset + page.length - valuesAt)
            }
        }
      }
      val expectedKeys = oracle.rows.map(r => (r(0).toLong, r(1))).distinct
      assert(keys.result().distinct == expectedKeys)
      // Values: the dictionary holds the distinct values pyarrow reads.
      val vs = pages(lm, 0, valueCol)
      var dictionary = Set.empty[Int]
      var dataPages = 0
      while (vs.nextPage()) {
        if (vs.currentPageType == PageType.DICTIONARY_PAGE) {
          val d = vs.readDictionaryPage()
          dictionary = (0 until d.numValues).map(i => le32(d.bytes, d.offset + 4 * i)).toSet
        } else { vs.readDataPage(); dataPages += 1 }
      }
      assert(dataPages >= 1)
      assert(dictionary == oracle.column("value").map(_.toInt).toSet)
    } finally lm.close()
  }

  private def le32(b: Array[Byte], at: Int): Int =
    (b(at) & 0xff) | ((b(at + 1) & 0xff) << 8) | ((b(at + 2) & 0xff) << 16) | ((b(at + 3) & 0xff) << 24)

  /** (length, SHA-256 hex) of the one PLAIN BYTE_ARRAY value in `b[at, at + len)`. */
  private def plainBinary(b: Array[Byte], at: Int, len: Int): (Long, String) = {
    val n = le32(b, at)
    assert(n >= 0 && n == len - 4, s"one value of $n bytes in $len bytes")
    val md = MessageDigest.getInstance("SHA-256")
    md.update(b, at + 4, n)
    (n.toLong, md.digest().map(x => f"${x & 0xff}%02x").mkString)
  }
}
