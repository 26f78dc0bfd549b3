package lmspark.io

import java.io.ByteArrayOutputStream
import java.util.zip.{CRC32, GZIPOutputStream}

import scala.util.Random

import com.github.luben.zstd.Zstd
import net.jpountz.lz4.LZ4Factory
import org.apache.hadoop.conf.Configuration
import org.apache.parquet.bytes.BytesInput
import org.apache.parquet.hadoop.CodecFactory
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.hadoop.metadata.CompressionCodecName._
import org.scalatest.funsuite.AnyFunSuite
import org.xerial.snappy.Snappy

import lmspark.testutil.LmFile

/** Every codec's decompressor against independent compressors (parquet-java's page compressors and
  * the codec libraries used directly), differentially against parquet-java's own decompressors,
  * and on corrupt input (truncated, wrong sizes, flipped bytes): a wrong answer is never returned. */
class DecompressorsSuite extends AnyFunSuite {

  private val seed = 20240611L

  /** Seeded inputs of assorted sizes and compressibility. */
  private lazy val inputs: Seq[(String, Array[Byte])] = {
    val r = new Random(seed)
    def random(n: Int) = { val a = new Array[Byte](n); r.nextBytes(a); a }
    def text(n: Int) = {
      val words = Array("parquet", "page", "lz4", "brotli", " ", "gzip", "0", "\n", "zstd")
      val sb = new StringBuilder
      while (sb.length < n) sb.append(words(r.nextInt(words.length)))
      sb.toString.substring(0, n).getBytes("UTF-8")
    }
    def runs(n: Int) = Array.tabulate[Byte](n)(i => ((i / 300) % 7).toByte)
    def mixed(n: Int) = Array.tabulate[Byte](n)(i => if (i % 1000 < 600) (i % 3).toByte else r.nextInt().toByte)
    Seq("empty" -> Array.emptyByteArray, "one byte" -> Array[Byte](42), "random 100" -> random(100),
      "text 5000" -> text(5000), "runs 70000" -> runs(70000), "mixed 300000" -> mixed(300000),
      "random 270000" -> random(270000), "text 600000" -> text(600000))
  }

  private val parquetCodecs = new CodecFactory(new Configuration(), 1 << 16)

  /** parquet-java's page compressor for `codec` (LZ4 = Hadoop's block framing). */
  private def parquetJava(codec: CompressionCodecName, b: Array[Byte]): Array[Byte] =
    parquetCodecs.getCompressor(codec).compress(BytesInput.from(b)).toByteArray

  /** Compressed forms of `b` per codec, each from an independent writer. */
  private def compressedForms(codec: CompressionCodecName, b: Array[Byte]): Seq[(String, Array[Byte])] = {
    val lz4 = LZ4Factory.safeInstance()
    codec match {
      case SNAPPY => Seq("parquet-java" -> parquetJava(codec, b), "snappy-java" -> Snappy.compress(b))
      case ZSTD => Seq("parquet-java" -> parquetJava(codec, b), "zstd-jni level 1" -> Zstd.compress(b, 1),
        "zstd-jni level 19" -> Zstd.compress(b, 19))
      case GZIP => Seq("parquet-java" -> parquetJava(codec, b), "GZIPOutputStream" -> gzip(b))
      case LZ4_RAW => Seq("parquet-java" -> parquetJava(codec, b), "lz4-java" -> lz4.fastCompressor().compress(b),
        "lz4-java hc" -> lz4.highCompressor().compress(b))
      case LZ4 => Seq("parquet-java (Hadoop framing)" -> parquetJava(codec, b),
        "lz4-java raw block" -> lz4.fastCompressor().compress(b))
      case other => fail(s"no compressor for $other")
    }
  }

  private def gzip(b: Array[Byte]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val g = new GZIPOutputStream(out)
    g.write(b)
    g.close()
    out.toByteArray
  }

  private def decompress(codec: CompressionCodecName, c: Array[Byte], size: Int): Array[Byte] =
    Decompressors.forCodec(codec).get.decompress(c, 0, c.length, size)

  private val writable = Seq(SNAPPY, GZIP, ZSTD, LZ4, LZ4_RAW)

  test("the supported set is the dispatch's domain") {
    for (c <- CompressionCodecName.values()) {
      if (Decompressors.supported.contains(c))
        assert(Decompressors.forCodec(c).forall(_.codec == c) && (c == UNCOMPRESSED) == Decompressors.forCodec(c).isEmpty)
      else assertThrows[IllegalArgumentException](Decompressors.forCodec(c))
    }
    assert(Decompressors.supported == Set(UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4, LZ4_RAW, BROTLI))
  }

  for (codec <- writable) test(s"$codec: independent writers round-trip, and parquet-java agrees") {
    for ((name, b) <- inputs; (writer, c) <- compressedForms(codec, b)) {
      // Data placed at an offset inside a larger array, as pages sit inside chunk bytes.
      val padded = Array.fill[Byte](7)(-1) ++ c ++ Array.fill[Byte](5)(-1)
      val out = Decompressors.forCodec(codec).get.decompress(padded, 7, c.length, b.length)
      assert(out.sameElements(b), s"$codec from $writer, input $name")
      if (!(codec == LZ4 && writer.contains("raw"))) { // parquet-java reads only Hadoop-framed LZ4
        val theirs = parquetCodecs.getDecompressor(codec).decompress(BytesInput.from(c), b.length).toByteArray
        assert(theirs.sameElements(out), s"parquet-java disagrees on $codec from $writer, input $name")
      }
    }
  }

  /** (non-empty blocks, chunks) of Hadoop-framed LZ4 data without empty chunks, or None when it
    * is not so framed. Hadoop ends a large write with an empty block (4 zero bytes, no chunk). */
  private def hadoopShape(c: Array[Byte]): Option[(Int, Int)] = {
    def be(p: Int) = ((c(p) & 0xff) << 24) | ((c(p + 1) & 0xff) << 16) | ((c(p + 2) & 0xff) << 8) | (c(p + 3) & 0xff)
    var p = 0; var blocks = 0; var chunks = 0
    while (p + 4 <= c.length) {
      val raw = be(p); p += 4
      if (raw > 0) blocks += 1
      var got = 0L
      while (got < raw) {
        if (p + 4 > c.length) return None
        val n = be(p); p += 4 + n; chunks += 1
        got += LZ4Factory.safeInstance().safeDecompressor().decompress(c, p - n, n, new Array[Byte](raw), 0)
      }
    }
    if (p == c.length) Some((blocks, chunks)) else None
  }

  /** Hadoop's own LZ4 codec with a small buffer, fed by `writes`. */
  private def hadoopLz4(writes: Seq[Array[Byte]]): Array[Byte] = {
    val conf = new Configuration()
    conf.setInt("io.compression.codec.lz4.buffersize", 4096)
    val codec = new org.apache.hadoop.io.compress.Lz4Codec()
    codec.setConf(conf)
    val out = new ByteArrayOutputStream()
    val s = codec.createOutputStream(out)
    writes.foreach(w => s.write(w))
    s.close()
    out.toByteArray
  }

  test("LZ4: Hadoop framing with several blocks and several chunks per block") {
    val r = new Random(seed + 1)
    val b = Array.tabulate[Byte](50000)(i => if (i % 64 < 40) (i % 5).toByte else r.nextInt().toByte)
    // One large write: one block split into many chunks. Several small writes: many blocks.
    val oneWrite = hadoopLz4(Seq(b))
    assert(oneWrite.takeRight(4).forall(_ == 0), "Hadoop ends a large write with an empty block")
    val manyWrites = hadoopLz4(b.grouped(3000).toSeq)
    val Some((blocks1, chunks1)) = hadoopShape(oneWrite): @unchecked
    val Some((blocks2, chunks2)) = hadoopShape(manyWrites): @unchecked
    assert(blocks1 == 1 && chunks1 > 1, s"one write: $blocks1 blocks, $chunks1 chunks")
    assert(blocks2 > 1, s"many writes: $blocks2 blocks, $chunks2 chunks")
    for (c <- Seq(oneWrite, manyWrites)) {
      assert(decompress(LZ4, c, b.length).sameElements(b))
      val theirs = parquetCodecs.getDecompressor(LZ4).decompress(BytesInput.from(c), b.length).toByteArray
      assert(theirs.sameElements(b))
    }
  }

  test("empty pages: no data, and LZ4's empty Hadoop block (with or without an empty chunk)") {
    for (codec <- Decompressors.supported - UNCOMPRESSED)
      assert(decompress(codec, Array.emptyByteArray, 0).isEmpty, codec)
    val empty = hadoopLz4(Seq.empty)
    assert(empty.sameElements(Array[Byte](0, 0, 0, 0)), empty.mkString(","))
    assert(decompress(LZ4, empty, 0).isEmpty)
    // Arrow's writer: the 8-byte prefix and a one-byte empty LZ4 block.
    assert(decompress(LZ4, Array[Byte](0, 0, 0, 0, 0, 0, 0, 1, 0), 0).isEmpty)
    // An empty block followed by a real one.
    val b = "some page bytes, some page bytes".getBytes("UTF-8")
    val c = LZ4Factory.safeInstance().fastCompressor().compress(b)
    val framed = Array[Byte](0, 0, 0, 0, 0, 0, 0, b.length.toByte, 0, 0, 0, c.length.toByte) ++ c
    assert(decompress(LZ4, framed, b.length).sameElements(b))
  }

  test("LZ4: raw blocks whose first bytes look like a Hadoop frame header still read as raw") {
    // A raw block is taken for Hadoop framing only if every length is consistent; data starting
    // with plausible length words must fall back to raw decoding.
    val r = new Random(seed + 2)
    for (_ <- 0 until 200) {
      val b = new Array[Byte](8 + r.nextInt(2000))
      r.nextBytes(b)
      val len = b.length
      // Big-endian "uncompressed length" and "compressed length" words at the front.
      b(0) = 0; b(1) = 0; b(2) = (len >> 8).toByte; b(3) = len.toByte
      b(4) = 0; b(5) = 0; b(6) = ((len - 8) >> 8).toByte; b(7) = (len - 8).toByte
      val raw = LZ4Factory.safeInstance().fastCompressor().compress(b)
      assert(decompress(LZ4, raw, b.length).sameElements(b))
    }
  }

  /** Gzip members with every optional header field (FEXTRA, FNAME, FCOMMENT, FHCRC). */
  private def gzipWithHeaderFields(b: Array[Byte]): Array[Byte] = {
    val plain = gzip(b)
    val header = new ByteArrayOutputStream()
    header.write(Array[Byte](0x1f, 0x8b.toByte, 8, (4 | 8 | 16 | 2).toByte, 1, 2, 3, 4, 0, 3))
    header.write(Array[Byte](5, 0, 'A', 'B', 2, 0, 9)) // XLEN 5, one subfield
    header.write("page.bin".getBytes("ISO-8859-1")); header.write(0)
    header.write("a comment".getBytes("ISO-8859-1")); header.write(0)
    val crc = new CRC32
    crc.update(header.toByteArray)
    header.write(Array[Byte](crc.getValue.toByte, (crc.getValue >> 8).toByte))
    header.toByteArray ++ plain.drop(10)
  }

  test("GZIP: concatenated members decompress to all members' bytes, as parquet-java's path does") {
    val r = new Random(seed + 3)
    for (members <- Seq(2, 3, 5); round <- 0 until 10) {
      val parts = Seq.fill(members)(inputs(r.nextInt(inputs.size))._2.take(r.nextInt(20000)))
      val forms = Seq(parts.map(gzip), parts.map(gzipWithHeaderFields), parts.zipWithIndex.map {
        case (p, i) => if (i % 2 == 0) gzip(p) else gzipWithHeaderFields(p)
      })
      val expected = parts.flatten.toArray
      for (f <- forms) {
        val c = f.flatten.toArray
        assert(decompress(GZIP, c, expected.length).sameElements(expected), s"$members members, round $round")
        val theirs = parquetCodecs.getDecompressor(GZIP).decompress(BytesInput.from(c), expected.length).toByteArray
        assert(theirs.sameElements(expected), "parquet-java reads concatenated members too")
      }
    }
  }

  test("GZIP: a member's CRC32 or length trailer that does not match fails") {
    val b = inputs.find(_._1 == "text 5000").get._2
    val c = gzip(b) ++ gzip(b)
    for (at <- Seq(c.length / 2 - 8, c.length / 2 - 3, c.length - 8, c.length - 1)) {
      val bad = c.clone()
      bad(at) = (bad(at) ^ 0x10).toByte
      val e = intercept[CorruptCompressedDataException](decompress(GZIP, bad, 2 * b.length))
      assert(e.getMessage.contains("trailer") || e.getMessage.contains("CRC32"), e.getMessage)
    }
    // Trailing bytes that are not a gzip member fail too.
    assertThrows[CorruptCompressedDataException](decompress(GZIP, c ++ Array[Byte](0, 0, 0), 2 * b.length))
  }

  /** The BROTLI pages of the pyarrow fixtures, as (compressed bytes, uncompressed size) with their
    * decompressed bytes as checked against the CSV oracle by CodecFilesSuite. */
  private lazy val brotliPages: Seq[(Array[Byte], Int)] = {
    val lm = new LmFile(CodecFixtures.resource("brotli_v1.parquet"))
    try {
      (for (rg <- 0 until lm.rowGroups; col <- 0 until 6) yield {
        CodecFixtures.split(lmspark.testutil.ChunkBytes.read(lm.path, lm.chunk(rg, col)))
          .map { case (h, data) => (data, h.uncompressed_page_size) }
      }).flatten
    } finally lm.close()
  }

  /** Every compressed sample of every codec, with its uncompressed size. */
  private lazy val samples: Seq[(CompressionCodecName, Array[Byte], Int)] =
    (for (codec <- writable; (_, b) <- inputs.filter(_._2.length <= 70000); (_, c) <- compressedForms(codec, b))
      yield (codec, c, b.length)) ++ brotliPages.map { case (c, n) => (BROTLI, c, n) }

  test("any codec: a wrong uncompressed size fails, never a short or padded page") {
    for ((codec, c, n) <- samples; size <- Seq(n - 1, n + 1, n + 1000) if size >= 0) {
      val e = intercept[Exception](decompress(codec, c, size))
      assert(!e.isInstanceOf[OutOfMemoryError] && e.getMessage != null, s"$codec, size $size instead of $n: $e")
    }
  }

  test("any codec: truncated data fails (unless what is left still encodes the same bytes)") {
    var failures = 0
    for ((codec, c, n) <- samples if c.length > 1; cut <- Seq(1, c.length / 2, c.length - 1).distinct) {
      val t = java.util.Arrays.copyOf(c, c.length - cut)
      scala.util.Try(decompress(codec, t, n)) match {
        case scala.util.Success(out) =>
          // E.g. Hadoop's empty LZ4 block [0, 0, 0, 0] cut to [0], a valid empty raw LZ4 block.
          assert(out.sameElements(decompress(codec, c, n)), s"$codec data of ${c.length} bytes cut by $cut")
        case scala.util.Failure(_) => failures += 1
      }
    }
    assert(failures > 0)
  }

  test("any codec: flipped bytes fail or give exactly the page size (GZIP: the original bytes)") {
    val r = new Random(seed + 4)
    var failures = 0
    var trials = 0
    for ((codec, c, n) <- samples if c.nonEmpty; _ <- 0 until 8) {
      val bad = c.clone()
      val at = r.nextInt(bad.length)
      bad(at) = (bad(at) ^ (1 << r.nextInt(8))).toByte
      trials += 1
      scala.util.Try(decompress(codec, bad, n)) match {
        case scala.util.Success(out) =>
          assert(out.length == n, s"$codec: flip at $at gave ${out.length} bytes, not $n")
          if (codec == GZIP) {
            // Only header bytes outside the CRC (MTIME, XFL, OS) may change without an error.
            val original = decompress(GZIP, c, n)
            assert(out.sameElements(original), s"GZIP: flip at $at changed the data without an error")
          }
        case scala.util.Failure(e) =>
          failures += 1
          assert(!e.isInstanceOf[OutOfMemoryError] && !e.isInstanceOf[StackOverflowError], s"$codec: $e")
      }
    }
    assert(failures > trials / 4, s"only $failures of $trials corruptions were detected")
  }

  /** Bytes this thread allocated while running `body` (HotSpot's per-thread counter). */
  private def allocatedBy(body: => Unit): Long = {
    val mx = java.lang.management.ManagementFactory.getThreadMXBean.asInstanceOf[com.sun.management.ThreadMXBean]
    val before = mx.getCurrentThreadAllocatedBytes
    body
    mx.getCurrentThreadAllocatedBytes - before
  }

  test("zstd and brotli: a size claim the data does not back allocates about what the data holds, not the claim") {
    val rnd = new Random(23)
    val plain = Array.fill(5000)(rnd.nextInt(4).toByte)
    val pages = Seq(ZSTD -> Zstd.compress(plain)) ++ brotliPages.take(3).map { case (c, _) => BROTLI -> c }
    for ((codec, c) <- pages; claim <- Seq(Int.MaxValue - 16, 512 << 20)) {
      var error: Throwable = null
      val allocated = allocatedBy {
        error = intercept[Exception](decompress(codec, c, claim))
      }
      assert(!error.isInstanceOf[OutOfMemoryError] && error.getMessage != null, s"$codec claiming $claim: $error")
      // Only a budget: the output buffer starts at 256x the stored bytes and grows with real output.
      assert(allocated < (64L << 20), s"$codec data of ${c.length} bytes claiming $claim allocated $allocated bytes")
    }
  }

  test("zstd: pages compressing more than 256x (decoded through the growing stream) read exactly") {
    val rnd = new Random(29)
    for (n <- Seq(300000, 1 << 20, (4 << 20) + 17)) {
      val b = new Array[Byte](n)
      // Long runs with a few random bytes: ratios far beyond 256x.
      for (_ <- 0 until 20) b(rnd.nextInt(n)) = rnd.nextInt(256).toByte
      for (c <- Seq(Zstd.compress(b), Zstd.compress(b, 19))) {
        assert(n > c.length * 256L, s"sample of $n bytes compressed to ${c.length}")
        assert(decompress(ZSTD, c, n).sameElements(b))
        intercept[CorruptCompressedDataException](decompress(ZSTD, c, n + 1))
        intercept[CorruptCompressedDataException](decompress(ZSTD, c, n - 1))
      }
    }
  }
}
