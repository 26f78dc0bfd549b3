package lmspark.column

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.{Encoding, EncodingStats}
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, ColumnPath, CompressionCodecName}
import org.apache.parquet.schema.{PrimitiveType, Types}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.scalatest.funsuite.AnyFunSuite

import lmspark.decode.{BinaryDictionary, Dictionary, IntDictionary, LongDictionary}
import lmspark.testutil._
import lmspark.testutil.Sources

/** [[ChunkDictionary]]: which chunks prove every data page dictionary-encoded (parquet-java's
  * `DictionaryFilter` rule, with and without encoding statistics); reading the dictionary page
  * alone (only its bytes), also when the chunk's offsets leave no dictionary region (dictionary
  * page offset 0); a malformed dictionary page fails naming the chunk. Dictionary contents are
  * checked against the rows in [[SparkValuesSuite]]. */
class ChunkDictionarySuite extends AnyFunSuite {

  private val int32: PrimitiveType = Types.optional(PrimitiveTypeName.INT32).named("x")

  private def meta(stats: EncodingStats, encodings: Set[Encoding], firstData: Long = 100L, dictionary: Long = 4L)
      : ColumnChunkMetaData =
    ColumnChunkMetaData.get(ColumnPath.get("x"), int32, CompressionCodecName.UNCOMPRESSED, stats, encodings.asJava,
      null, firstData, dictionary, 10L, 200L, 200L)

  test("every data page dictionary-encoded: from encoding statistics, else parquet-java's rule on the encodings") {
    def stats(dict: Seq[Encoding], data: Seq[Encoding]): EncodingStats = {
      val b = new EncodingStats.Builder
      dict.foreach(b.addDictEncoding)
      data.foreach(b.addDataEncoding)
      b.build()
    }
    import Encoding._
    assert(ChunkDictionary.allPagesDictionaryEncoded(meta(stats(Seq(PLAIN), Seq(RLE_DICTIONARY)), Set(PLAIN, RLE_DICTIONARY, RLE))))
    assert(ChunkDictionary.allPagesDictionaryEncoded(meta(stats(Seq(PLAIN_DICTIONARY), Seq(PLAIN_DICTIONARY)),
      Set(PLAIN_DICTIONARY, BIT_PACKED))))
    assert(!ChunkDictionary.allPagesDictionaryEncoded(meta(stats(Seq(PLAIN), Seq(RLE_DICTIONARY, PLAIN)), Set(PLAIN, RLE_DICTIONARY))))
    assert(!ChunkDictionary.allPagesDictionaryEncoded(meta(stats(Seq(PLAIN), Seq(RLE_DICTIONARY, DELTA_BINARY_PACKED)),
      Set(PLAIN, RLE_DICTIONARY, DELTA_BINARY_PACKED))))
    assert(!ChunkDictionary.allPagesDictionaryEncoded(meta(stats(Nil, Seq(PLAIN)), Set(PLAIN))))
    // No dictionary page: nothing to prune with, whatever the pages say.
    assert(!ChunkDictionary.allPagesDictionaryEncoded(meta(stats(Nil, Seq(RLE_DICTIONARY)), Set(RLE_DICTIONARY))))
    // Without statistics: PLAIN_DICTIONARY and level encodings only.
    assert(ChunkDictionary.allPagesDictionaryEncoded(meta(null, Set(PLAIN_DICTIONARY, RLE, BIT_PACKED))))
    assert(!ChunkDictionary.allPagesDictionaryEncoded(meta(null, Set(PLAIN_DICTIONARY, PLAIN, RLE))))
    // RLE_DICTIONARY (v2) cannot rule out a fallback page without statistics.
    assert(!ChunkDictionary.allPagesDictionaryEncoded(meta(null, Set(RLE_DICTIONARY, RLE))))
    assert(!ChunkDictionary.allPagesDictionaryEncoded(meta(null, Set(PLAIN, RLE))))
  }

  private def entries(d: Dictionary): Seq[Any] = d match {
    case i: IntDictionary => Dictionaries.entries(i)
    case l: LongDictionary => Dictionaries.entries(l)
    case b: BinaryDictionary => (0 until b.size).map(k => TestTypes.bytes(b.data.slice(b.offsets(k), b.end(k))))
    case other => fail(s"unexpected $other")
  }

  test("only the dictionary page is read, also when the dictionary page offset is left at 0") {
    for (v2 <- Seq(false, true); codec <- Seq(CompressionCodecName.UNCOMPRESSED, CompressionCodecName.GZIP)) {
      val f = TestFiles.matrixFile(FileConfig(codec, v2, EncMode.Dict))
      val lm = new LmFile(f.path)
      try {
        for (name <- Seq("int32_req", "int64_req", "string_req", "dec_flba6_req"); rg <- 0 until lm.rowGroups) {
          val col = f.columns.indexWhere(_.name == name)
          val chunk = lm.chunk(rg, col)
          assert(chunk.hasDictionaryPage && chunk.getDictionaryPageOffset > 0, name)
          val dictEnd = chunk.getFirstDataPageOffset
          // The same chunk described as a writer that leaves the dictionary page offset at 0 does.
          val zero = ColumnChunkMetaData.get(chunk.getPath, chunk.getPrimitiveType, chunk.getCodec, chunk.getEncodingStats,
            chunk.getEncodings, chunk.getStatistics, chunk.getStartingPos, 0L, chunk.getValueCount, chunk.getTotalSize,
            chunk.getTotalUncompressedSize)
          val results = for (m <- Seq(chunk, zero)) yield {
            val in = new RecordingInputStream(new LocalInputFile(f.path).newStream())
            try {
              val (d, bytes) = Sources.dictionaryCounted(in, m, lm.descriptor(col), f.path.toString, verifyChecksums = false)
              assert(in.reads.forall { case (o, n) => o >= chunk.getStartingPos && o + n <= dictEnd },
                s"$name: read ${in.reads} outside the dictionary page [${chunk.getStartingPos}, $dictEnd)")
              assert(bytes == dictEnd - chunk.getStartingPos)
              entries(d.getOrElse(fail(s"$name: no dictionary")))
            } finally in.close()
          }
          assert(results(0) == results(1), name)
          assert(results(0).nonEmpty)
        }
        // A chunk without a dictionary page has none.
        val plain = TestFiles.matrixFile(FileConfig(codec, v2, EncMode.Plain))
        val lp = new LmFile(plain.path)
        try {
          val col = plain.columns.indexWhere(_.name == "int32_req")
          assert(Sources.dictionary(lp.in, lp.chunk(0, col), lp.descriptor(col), plain.path.toString, false).isEmpty)
        } finally lp.close()
      } finally lm.close()
    }
  }

  test("a malformed dictionary page fails naming file, column and row group") {
    val f = TestFiles.matrixFile(FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = false, EncMode.Dict))
    val lm = new LmFile(f.path)
    try {
      val col = f.columns.indexWhere(_.name == "int64_req")
      val chunk = lm.chunk(0, col)
      val bytes = ChunkBytes.read(f.path, chunk)
      val dict = ChunkBytes.pages(bytes).head
      val h = dict.header.deepCopy()
      assert(h.dictionary_page_header.num_values < 60)
      h.dictionary_page_header.setNum_values(60) // same varint length, more values than the page holds
      val corrupt = ChunkBytes.replaceHeader(bytes, dict, h)
      assert(corrupt.length == bytes.length)
      val all = Files.readAllBytes(f.path)
      System.arraycopy(corrupt, 0, all, chunk.getStartingPos.toInt, corrupt.length)
      val bad = TestFiles.dir.resolve("dictionary-malformed.parquet")
      Files.write(bad, all)
      val in = new LocalInputFile(bad).newStream()
      try {
        val e = intercept[ParquetDecodeException](Sources.dictionary(in, chunk, lm.descriptor(col), bad.toString, false))
        assert(e.getMessage.contains("dictionary") && e.getMessage.contains(bad.toString) &&
          e.getMessage.contains("int64_req") && e.getMessage.contains("row group 0"), e.getMessage)
      } finally in.close()
    } finally lm.close()
  }
}
