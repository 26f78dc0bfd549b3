package lmspark.io

import java.io.{ByteArrayInputStream, IOException}
import java.util.zip.{CRC32, DataFormatException, Inflater}

import scala.util.control.NonFatal

import com.github.luben.zstd.Zstd
import io.airlift.compress.lz4.Lz4Decompressor
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.brotli.dec.BrotliInputStream
import org.xerial.snappy.Snappy

/** Decompresses the pages of one codec. `decompress(src, off, len, n)` turns `src[off, off + len)`
  * into a new array of exactly `n` bytes (the page header's uncompressed size), or throws: a
  * [[CorruptCompressedDataException]] when the data is corrupt, truncated or of another size, or
  * whatever the codec library throws on malformed input. The caller bounds `n` before calling, so
  * the output allocation is never larger than it allows. No data at all for an empty page is
  * accepted for every codec (writers store zero bytes for it, e.g. parquet-java's SNAPPY and LZ4
  * compressors). Implementations keep no state between calls and are thread-safe.
  *
  * Codecs whose format bounds how much output a byte of input can give ([[maxExpansion]]: snappy,
  * LZ4, gzip) refuse a size beyond that bound before allocating, so such a page's allocation is
  * bounded by its own stored bytes, not only by the header's claim. The others (zstd, brotli) believe
  * a claim up to [[Decompressor.TrustedExpansion]] times the stored bytes; beyond it they decompress
  * as a stream into a buffer grown as output arrives ([[stream]]), so a claim the data does not back
  * allocates at most about twice what the data really holds. */
sealed abstract class Decompressor(val codec: CompressionCodecName) {
  /** Output bytes one input byte can give at most in this codec's format (with
    * [[Decompressor.Slack]] bytes more per page), or 0 when the format sets no useful bound. */
  protected def maxExpansion: Long = 0L

  final def decompress(src: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte] = {
    if (off < 0 || len < 0 || off.toLong + len > src.length || uncompressedSize < 0)
      throw new IllegalArgumentException(s"bad range [$off, $off + $len) of ${src.length} bytes, or size $uncompressedSize")
    if (maxExpansion > 0 && uncompressedSize > len * maxExpansion + Decompressor.Slack)
      throw new CorruptCompressedDataException(s"$len bytes of $codec data cannot decompress to $uncompressedSize " +
        s"bytes (at most ${maxExpansion}x + ${Decompressor.Slack}): corrupt page size")
    if (len == 0 && uncompressedSize == 0) Array.emptyByteArray
    else if (maxExpansion == 0 && uncompressedSize > len * Decompressor.TrustedExpansion + Decompressor.Slack)
      Decompressor.readGrowing(stream(src, off, len), uncompressedSize,
        (len * Decompressor.TrustedExpansion + Decompressor.Slack).toInt, codec)
    else decode(src, off, len, uncompressedSize)
  }

  /** The data as a stream of decompressed bytes, for claims beyond [[Decompressor.TrustedExpansion]]
    * (codecs without a [[maxExpansion]] bound only). */
  protected def stream(src: Array[Byte], off: Int, len: Int): java.io.InputStream =
    throw new UnsupportedOperationException(s"$codec has no stream decoder")

  /** `decompress` for data that is not the empty data of an empty page. */
  protected def decode(src: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte]

  override def toString: String = s"Decompressor($codec)"
}

object Decompressor {
  /** Bytes allowed beyond a codec's expansion bound (stream headers, tiny pages). */
  val Slack: Long = 1024L

  /** Output per stored byte that codecs without a format bound are believed to give outright. */
  val TrustedExpansion: Long = 256L

  /** Reads `in` to its end into exactly `expected` bytes, starting with a buffer of `initial` bytes
    * and doubling it (never past `expected`) only as output arrives; closes `in`. Fails when the
    * stream gives fewer or more bytes than `expected`. */
  def readGrowing(in: java.io.InputStream, expected: Int, initial: Int, codec: CompressionCodecName): Array[Byte] =
    try {
      var out = new Array[Byte](math.max(1, math.min(expected, initial)))
      var q = 0
      var done = false
      while (!done) {
        if (q == out.length && q < expected)
          out = java.util.Arrays.copyOf(out, math.min(expected.toLong, out.length * 2L).toInt)
        if (q == expected) done = true
        else {
          val n = in.read(out, q, out.length - q)
          if (n < 0) throw new CorruptCompressedDataException(s"$codec data ends after $q bytes, the page header says $expected")
          q += n
        }
      }
      if (in.read() != -1)
        throw new CorruptCompressedDataException(s"$codec data decompresses to more than the page header's $expected bytes")
      out
    } finally in.close()
}

/** Compressed page data that does not decompress to what its header says. No file context; the
  * page source adds it. */
final class CorruptCompressedDataException(message: String) extends IOException(message)

/** The one decompression dispatch: codec -> [[Decompressor]]. Uses the codec libraries Spark ships
  * (snappy-java, zstd-jni, aircompressor's LZ4), `java.util.zip` for GZIP and Google's pure-Java
  * Brotli decoder (bundled in our jar) for BROTLI. */
object Decompressors {

  /** Every codec a page source can read; UNCOMPRESSED pages are used in place. */
  val supported: Set[CompressionCodecName] = Set(
    CompressionCodecName.UNCOMPRESSED,
    CompressionCodecName.SNAPPY,
    CompressionCodecName.GZIP,
    CompressionCodecName.ZSTD,
    CompressionCodecName.LZ4,
    CompressionCodecName.LZ4_RAW,
    CompressionCodecName.BROTLI)

  /** The decompressor for `codec`; None for UNCOMPRESSED. Throws IllegalArgumentException for a
    * codec outside [[supported]]. */
  def forCodec(codec: CompressionCodecName): Option[Decompressor] = codec match {
    case CompressionCodecName.UNCOMPRESSED => None
    case CompressionCodecName.SNAPPY => Some(SnappyPages)
    case CompressionCodecName.GZIP => Some(GzipPages)
    case CompressionCodecName.ZSTD => Some(ZstdPages)
    case CompressionCodecName.LZ4 => Some(Lz4Pages)
    case CompressionCodecName.LZ4_RAW => Some(Lz4RawPages)
    case CompressionCodecName.BROTLI => Some(BrotliPages)
    case other => throw new IllegalArgumentException(s"compression codec $other is not supported")
  }

  private def corrupt(what: String): Nothing = throw new CorruptCompressedDataException(what)

  private def checkSize(codec: String, produced: Long, expected: Int): Unit =
    if (produced != expected) corrupt(s"$codec data decompressed to $produced bytes, the page header says $expected")

  /** Snappy (raw snappy format, as parquet writes it): its preamble must declare the header's size. */
  private object SnappyPages extends Decompressor(CompressionCodecName.SNAPPY) {
    // A 3-byte copy yields at most 64 bytes (21.3x); literals and 2-byte copies less.
    override protected def maxExpansion: Long = 32L
    override protected def decode(src: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte] = {
      val declared = Snappy.uncompressedLength(src, off, len)
      if (declared != uncompressedSize)
        corrupt(s"snappy data declares $declared uncompressed bytes, the page header says $uncompressedSize")
      val out = new Array[Byte](uncompressedSize)
      checkSize("snappy", Snappy.uncompress(src, off, len, out, 0), uncompressedSize)
      out
    }
  }

  /** Zstandard: one or more complete frames filling exactly the output. */
  private object ZstdPages extends Decompressor(CompressionCodecName.ZSTD) {
    override protected def stream(src: Array[Byte], off: Int, len: Int): java.io.InputStream =
      new com.github.luben.zstd.ZstdInputStreamNoFinalizer(new ByteArrayInputStream(src, off, len))
    override protected def decode(src: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte] = {
      val out = new Array[Byte](uncompressedSize)
      checkSize("zstd", Zstd.decompressByteArray(out, 0, uncompressedSize, src, off, len), uncompressedSize)
      out
    }
  }

  /** One LZ4 block (no framing) filling exactly `out[outOff, outOff + n)` where n is returned; the
    * decoder never writes past `maxOut` bytes. */
  private def lz4Block(src: Array[Byte], off: Int, len: Int, out: Array[Byte], outOff: Int, maxOut: Int): Int =
    new Lz4Decompressor().decompress(src, off, len, out, outOff, maxOut)

  /** LZ4_RAW: one LZ4 block. */
  private object Lz4RawPages extends Decompressor(CompressionCodecName.LZ4_RAW) {
    // Each match-length byte adds at most 255 bytes of output.
    override protected def maxExpansion: Long = 256L
    override protected def decode(src: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte] = {
      val out = new Array[Byte](uncompressedSize)
      checkSize("lz4", lz4Block(src, off, len, out, 0, uncompressedSize), uncompressedSize)
      out
    }
  }

  /** The deprecated LZ4 codec, which writers filled in two ways: parquet-java with Hadoop's block
    * framing, old parquet-cpp / pyarrow with one bare LZ4 block. As Arrow does, the Hadoop framing
    * is taken when its lengths are consistent (every length fits, every block decompresses to its
    * declared size, the input is used up and the output filled); otherwise the page is one raw
    * block.
    *
    * Hadoop framing: blocks of [4-byte big-endian uncompressed length] followed by chunks of
    * [4-byte big-endian compressed length][LZ4 block] until the block's uncompressed length is
    * produced (Hadoop splits large inputs into several chunks; Arrow's writer writes one). A block
    * of length 0 has no chunk (Hadoop) or one chunk that decodes to nothing (Arrow). */
  private object Lz4Pages extends Decompressor(CompressionCodecName.LZ4) {
    override protected def maxExpansion: Long = 256L
    override protected def decode(src: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte] = {
      val out = new Array[Byte](uncompressedSize)
      if (!hadoopFramed(src, off, len, out)) {
        val n =
          try lz4Block(src, off, len, out, 0, uncompressedSize)
          catch {
            case NonFatal(e) =>
              corrupt(s"lz4 data is neither Hadoop-framed nor one raw LZ4 block (${e.getMessage})")
          }
        checkSize("lz4 (raw block)", n, uncompressedSize)
      }
      out
    }

    private def int32BigEndian(b: Array[Byte], p: Int): Int =
      ((b(p) & 0xff) << 24) | ((b(p + 1) & 0xff) << 16) | ((b(p + 2) & 0xff) << 8) | (b(p + 3) & 0xff)

    /** Decodes Hadoop-framed data into `out`; false (with `out` in any state) as soon as the framing
      * is inconsistent. */
    private def hadoopFramed(src: Array[Byte], off: Int, len: Int, out: Array[Byte]): Boolean = {
      val end = off + len
      var p = off
      var q = 0
      if (len < 4) return false
      while (p < end) {
        if (end - p < 4) return false
        val raw = int32BigEndian(src, p)
        p += 4
        if (raw < 0 || raw > out.length - q) return false
        val blockEnd = q + raw
        if (raw == 0) {
          // An empty chunk after an empty block (Arrow) is consumed; otherwise the next block follows.
          if (end - p >= 5) {
            val c = int32BigEndian(src, p)
            if (c > 0 && c <= end - p - 4 && (try lz4Block(src, p + 4, c, out, q, 0) == 0 catch { case NonFatal(_) => false }))
              p += 4 + c
          }
        }
        while (q < blockEnd) {
          if (end - p < 4) return false
          val c = int32BigEndian(src, p)
          p += 4
          if (c <= 0 || c > end - p) return false
          val n = try lz4Block(src, p, c, out, q, blockEnd - q) catch { case NonFatal(_) => return false }
          if (n <= 0 || n > blockEnd - q) return false
          q += n
          p += c
        }
      }
      q == out.length
    }
  }

  /** GZIP: one or more gzip members (RFC 1952) back to back, all decompressed one after another;
    * each member's CRC32 and length trailer is checked. */
  private object GzipPages extends Decompressor(CompressionCodecName.GZIP) {
    // Deflate's limit is 1032:1 (258-byte matches in 2 bits).
    override protected def maxExpansion: Long = 1040L
    private final val FTEXT = 1
    private final val FHCRC = 2
    private final val FEXTRA = 4
    private final val FNAME = 8
    private final val FCOMMENT = 16

    override protected def decode(src: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte] = {
      val out = new Array[Byte](uncompressedSize)
      val inflater = new Inflater(true)
      val crc = new CRC32
      val scratch = new Array[Byte](1)
      try {
        val end = off + len
        var p = off
        var produced = 0
        var members = 0
        while (p < end || members == 0) {
          p = skipHeader(src, p, end, members)
          inflater.reset()
          inflater.setInput(src, p, end - p)
          val start = produced
          while (!inflater.finished()) {
            val n =
              try {
                if (produced < uncompressedSize) inflater.inflate(out, produced, uncompressedSize - produced)
                else inflater.inflate(scratch, 0, 1)
              } catch { case e: DataFormatException => corrupt(s"gzip member $members is corrupt: ${e.getMessage}") }
            if (produced >= uncompressedSize && n > 0)
              corrupt(s"gzip data decompresses to more than the page header's $uncompressedSize bytes")
            produced += n
            if (n == 0 && !inflater.finished()) {
              // zlib only stops short of the output's end for these reasons; anything else would spin.
              if (inflater.needsDictionary()) corrupt(s"gzip member $members needs a preset dictionary")
              if (inflater.needsInput()) corrupt(s"gzip member $members is truncated")
              corrupt(s"gzip member $members makes no progress")
            }
          }
          p = end - inflater.getRemaining
          if (end - p < 8) corrupt(s"gzip member $members lacks its 8-byte trailer")
          crc.reset()
          crc.update(out, start, produced - start)
          val storedCrc = int32LittleEndian(src, p) & 0xffffffffL
          val storedSize = int32LittleEndian(src, p + 4) & 0xffffffffL
          if (storedCrc != crc.getValue)
            corrupt(f"gzip member $members has CRC32 0x${crc.getValue}%08x, its trailer says 0x$storedCrc%08x")
          if (storedSize != ((produced - start) & 0xffffffffL))
            corrupt(s"gzip member $members has ${produced - start} bytes, its trailer says $storedSize")
          p += 8
          members += 1
        }
        checkSize("gzip", produced, uncompressedSize)
        out
      } finally inflater.end()
    }

    private def int32LittleEndian(b: Array[Byte], p: Int): Int =
      (b(p) & 0xff) | ((b(p + 1) & 0xff) << 8) | ((b(p + 2) & 0xff) << 16) | ((b(p + 3) & 0xff) << 24)

    /** Position after the member header at `p`. */
    private def skipHeader(b: Array[Byte], start: Int, end: Int, member: Int): Int = {
      def need(p: Int, n: Int): Unit =
        if (end - p < n) corrupt(s"gzip member $member header is truncated")
      need(start, 10)
      if ((b(start) & 0xff) != 0x1f || (b(start + 1) & 0xff) != 0x8b)
        corrupt(f"gzip member $member does not start with the gzip magic (found 0x${b(start) & 0xff}%02x${b(start + 1) & 0xff}%02x)")
      if (b(start + 2) != 8) corrupt(s"gzip member $member uses compression method ${b(start + 2)}, not deflate")
      val flags = b(start + 3) & 0xff
      if ((flags & ~(FTEXT | FHCRC | FEXTRA | FNAME | FCOMMENT)) != 0)
        corrupt(s"gzip member $member header has reserved flags set ($flags)")
      var p = start + 10
      if ((flags & FEXTRA) != 0) {
        need(p, 2)
        val xlen = (b(p) & 0xff) | ((b(p + 1) & 0xff) << 8)
        need(p + 2, xlen)
        p += 2 + xlen
      }
      def skipZeroTerminated(): Unit = {
        while (p < end && b(p) != 0) p += 1
        need(p, 1)
        p += 1
      }
      if ((flags & FNAME) != 0) skipZeroTerminated()
      if ((flags & FCOMMENT) != 0) skipZeroTerminated()
      if ((flags & FHCRC) != 0) { need(p, 2); p += 2 }
      p
    }
  }

  /** Brotli, with Google's reference decoder: exactly `uncompressedSize` bytes, then end of stream. */
  private object BrotliPages extends Decompressor(CompressionCodecName.BROTLI) {
    override protected def stream(src: Array[Byte], off: Int, len: Int): java.io.InputStream =
      new BrotliInputStream(new ByteArrayInputStream(src, off, len))
    override protected def decode(src: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte] = {
      val out = new Array[Byte](uncompressedSize)
      val in = new BrotliInputStream(new ByteArrayInputStream(src, off, len))
      try {
        var q = 0
        while (q < uncompressedSize) {
          val n = in.read(out, q, uncompressedSize - q)
          if (n <= 0) corrupt(s"brotli data ends after $q bytes, the page header says $uncompressedSize")
          q += n
        }
        if (in.read() != -1)
          corrupt(s"brotli data decompresses to more than the page header's $uncompressedSize bytes")
        out
      } finally in.close()
    }
  }
}
