package lmspark.io

import java.util.zip.CRC32

import scala.util.control.NonFatal

import org.apache.parquet.format.PageHeader
import org.apache.parquet.hadoop.metadata.CompressionCodecName

/** Turns a page's stored bytes into its data, for one chunk: the CRC check (with
  * `verifyChecksums`, when the header has a `crc`: CRC32 over the `compressed_page_size` bytes as
  * stored, as parquet-java does) and decompression through [[Decompressors]] (null `decompressor`:
  * an uncompressed chunk, whose data is handed out in place). Nothing larger than
  * `maxUncompressedPageSize` is allocated. `describePage` names the page being read, for errors.
  *
  * Invariant: after [[decompress]], the data is `[outOffset, outOffset + outLength)` of the array it
  * returned. Not thread-safe. */
private[io] final class PageDecompression(
    val codec: CompressionCodecName,
    decompressor: Decompressor,
    verifyChecksums: Boolean,
    maxUncompressedPageSize: Long,
    context: ChunkContext,
    describePage: () => String) {

  private[this] lazy val crc = new CRC32
  private[this] var produced: Long = 0L

  /** Where the last page's data starts in the array [[decompress]] returned. */
  var outOffset: Int = 0
  /** The last page's data length. */
  var outLength: Int = 0

  /** Decompressed bytes produced so far. */
  def bytesDecompressed: Long = produced

  /** With `verifyChecksums`, checks `header`'s CRC32 (when it has one) over its page's stored
    * bytes, `bytes(off)` on. */
  def checkCrc(header: PageHeader, bytes: Array[Byte], off: Int): Unit =
    if (verifyChecksums && header.isSetCrc) {
      crc.reset()
      crc.update(bytes, off, header.compressed_page_size)
      val expected = header.crc & 0xffffffffL
      if (crc.getValue != expected)
        throw context.error(f"page CRC32 mismatch in ${describePage()}: the header says 0x$expected%08x, " +
          f"the ${header.compressed_page_size} page bytes give 0x${crc.getValue}%08x (corrupt page)")
    }

  /** Decompresses `len` bytes at `bytes(off)` into `uncompressedSize` bytes; sets [[outOffset]] and
    * [[outLength]]. An uncompressed chunk's data is `bytes` itself, returned as is. */
  def decompress(bytes: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte] =
    if (decompressor == null) {
      outOffset = off; outLength = len
      produced += len
      bytes
    } else {
      if (uncompressedSize < 0 || uncompressedSize > maxUncompressedPageSize)
        throw context.error(s"${describePage()} claims $uncompressedSize uncompressed bytes, more than the " +
          s"chunk's $maxUncompressedPageSize (corrupt page header or chunk metadata)")
      val out =
        try decompressor.decompress(bytes, off, len, uncompressedSize)
        catch {
          case NonFatal(e) =>
            throw context.error(s"cannot decompress $codec data of ${describePage()}, $len bytes to " +
              s"$uncompressedSize bytes (corrupt page?): ${e.getMessage}", e)
        }
      if (out.length != uncompressedSize) // a Decompressor guarantees this; kept as a cheap invariant check
        throw context.error(s"$codec data of ${describePage()} decompressed to ${out.length} bytes, " +
          s"the header says $uncompressedSize")
      outOffset = 0; outLength = out.length
      produced += out.length
      out
    }
}
