package lmspark.io

import scala.collection.mutable

import org.apache.hadoop.conf.Configuration
import org.apache.parquet.bytes.BytesInput
import org.apache.parquet.format.PageType
import org.apache.parquet.hadoop.CodecFactory
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.ParquetDecodeException
import lmspark.testutil._

/** Page iteration over real chunks: page kinds per page version, row totals, skips without
  * decompression, page ordinals, the bytes-read and bytes-decompressed accounting, and every
  * decompressed page against parquet-java's decompression of the same bytes. */
class PageSourceSuite extends AnyFunSuite {

  private val configs = for (codec <- TestFiles.codecs :+ CompressionCodecName.LZ4; v2 <- Seq(false, true))
    yield FileConfig(codec, v2, EncMode.Dict)

  for (config <- configs) {
    test(s"pages of $config") {
      val f = TestFiles.matrixFile(config)
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices; rg <- 0 until lm.rowGroups) {
          val chunk = lm.chunk(rg, col)
          val pages = lm.pages(rg, col)
          assert(pages.bytesRead == chunk.getTotalSize)
          val kinds = mutable.ArrayBuffer.empty[PageType]
          var rows = 0L
          var skipped = 0
          while (pages.nextPage()) {
            val t = pages.currentPageType
            kinds += t
            t match {
              case PageType.DICTIONARY_PAGE =>
                val d = pages.readDictionaryPage()
                assert(d.numValues >= 0)
              case _ =>
                rows += pages.currentPageRows
                if (kinds.size % 2 == 0) { pages.skipPage(); skipped += 1 }
                else {
                  val p = pages.readDataPage()
                  assert(p.numRows == p.numValues)
                }
            }
          }
          assert(rows == lm.rowCount(rg), f.columns(col).name)
          assert(pages.pagesRead == kinds.size - skipped)
          val dataKind = if (config.v2) PageType.DATA_PAGE_V2 else PageType.DATA_PAGE
          assert(kinds.filter(_ != PageType.DICTIONARY_PAGE).forall(_ == dataKind))
          assert(kinds.count(_ == PageType.DICTIONARY_PAGE) == (if (chunk.hasDictionaryPage) 1 else 0))
          assert(!pages.nextPage())
        }
      } finally lm.close()
    }
  }

  private val parquetCodecs = new CodecFactory(new Configuration(), 1 << 16)

  for (config <- configs) {
    test(s"$config: every page's bytes equal parquet-java's decompression; ordinals and byte counts") {
      val f = TestFiles.matrixFile(config)
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices by 5; rg <- 0 until lm.rowGroups) {
          val raw = ChunkBytes.read(f.path, lm.chunk(rg, col))
          val stored = ChunkBytes.pages(raw)
          val pages = CodecFixtures.pages(lm, rg, col, verifyChecksums = true)
          var ordinal = 0
          var decompressed = 0L
          while (pages.nextPage()) {
            assert(pages.currentPageOrdinal == ordinal)
            val p = stored(ordinal)
            val h = p.header
            val data = java.util.Arrays.copyOfRange(raw, p.dataStart, p.dataStart + h.compressed_page_size)
            def theirs(from: Int, size: Int): Array[Byte] =
              if (config.codec == CompressionCodecName.UNCOMPRESSED) data.drop(from)
              else parquetCodecs.getDecompressor(config.codec)
                .decompress(BytesInput.from(data, from, data.length - from), size).toByteArray
            def slice(b: Array[Byte], off: Int, len: Int) = java.util.Arrays.copyOfRange(b, off, off + len)
            pages.currentPageType match {
              case PageType.DICTIONARY_PAGE =>
                val d = pages.readDictionaryPage()
                assert(slice(d.bytes, d.offset, d.length).sameElements(theirs(0, h.uncompressed_page_size)))
                decompressed += d.length
              case PageType.DATA_PAGE =>
                val d = pages.readDataPage().asInstanceOf[DataPageV1]
                assert(slice(d.bytes, d.offset, d.length).sameElements(theirs(0, h.uncompressed_page_size)))
                decompressed += d.length
              case _ =>
                val d = pages.readDataPage().asInstanceOf[DataPageV2]
                val levels = d.repLevelsLength + d.defLevelsLength
                assert(slice(d.levelBytes, d.levelOffset, levels).sameElements(data.take(levels)))
                val values = if (h.data_page_header_v2.is_compressed) theirs(levels, h.uncompressed_page_size - levels)
                  else data.drop(levels)
                assert(slice(d.valueBytes, d.valueOffset, d.valueLength).sameElements(values))
                decompressed += d.valueLength
            }
            ordinal += 1
          }
          assert(ordinal == stored.size && pages.pagesRead == ordinal)
          assert(pages.bytesDecompressed == decompressed)
        }
      } finally lm.close()
    }
  }

  test("a codec outside the supported set fails naming the chunk") {
    val ctx = new ChunkContext("/some/file.parquet", "a.b", 3)
    for (codec <- CompressionCodecName.values().filterNot(Decompressors.supported)) {
      val e = intercept[ParquetDecodeException](PageSource.fromBytes(new Array[Byte](10), 0, 10, ctx, codec))
      assert(e.getMessage.contains(s"compression codec $codec is not supported") && e.getMessage.contains(ctx.describe))
    }
  }
}
