package lmspark.io

import java.io.InputStream

import scala.util.control.NonFatal

import org.apache.parquet.format.{PageHeader, PageType}

import lmspark.column.ParquetDecodeException

/** Parses page headers out of a [[ChunkWindow]], refilling it as thrift reads, and checks each
  * header before anything of its page is read or allocated: a page type and its type-specific
  * header, sizes that are not negative, and a compressed size that fits what remains of the region
  * (`window.limit`). Thrift's message limit is the bytes left in the region ([[BoundedThrift]]).
  * Errors name the page (`page N of the chunk`) and its chunk offset.
  *
  * Invariant: after [[parse]], [[dataStart]] is the position just past the header. Not
  * thread-safe. */
private[io] final class PageHeaderReader(window: ChunkWindow, context: ChunkContext, chunkStart: Long) {

  private[this] val stream = new HeaderStream
  private[this] var after: Long = -1L

  /** Where the data of the page last parsed starts (just past its header). */
  def dataStart: Long = after

  /** Parses and checks the header at position `at` of the page described by `page`. */
  def parse(at: Long, page: String): PageHeader = {
    val limit = window.limit
    stream.reset(at)
    val h =
      try BoundedThrift.pageHeader(stream, math.min(limit - at, Int.MaxValue.toLong).toInt)
      catch {
        case NonFatal(e) =>
          // A refill that failed (file truncated, I/O error) reaches here wrapped by thrift: its own
          // error already says what happened.
          Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null)
            .collectFirst { case d: ParquetDecodeException => d }.foreach(d => throw d)
          throw context.error(s"cannot read the page header of $page at chunk offset ${at - chunkStart} of " +
            s"${limit - chunkStart} (corrupt or truncated chunk): ${e.getMessage}", e)
      }
    val start = stream.position
    val where = s"chunk offset ${at - chunkStart}"
    if (h.getType == null) throw context.error(s"page header of $page at $where has no page type")
    val missing = h.getType match {
      case PageType.DATA_PAGE => h.data_page_header == null
      case PageType.DATA_PAGE_V2 => h.data_page_header_v2 == null
      case PageType.DICTIONARY_PAGE => h.dictionary_page_header == null
      case _ => false
    }
    if (missing) throw context.error(s"${h.getType} header of $page at $where lacks its type-specific header")
    if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0)
      throw context.error(s"page header of $page at $where has negative sizes " +
        s"(compressed ${h.compressed_page_size}, uncompressed ${h.uncompressed_page_size})")
    if (h.compressed_page_size.toLong > limit - start)
      throw context.error(s"$page at $where needs ${h.compressed_page_size} bytes but " +
        s"only ${limit - start} remain in the chunk (truncated chunk?)")
    after = start
    h
  }

  /** An InputStream over the positions `[p, window.limit)` that reports how far the thrift parser
    * read; it refills the window when the parser reads past it. */
  private final class HeaderStream extends InputStream {
    private[this] var p = 0L
    def reset(at: Long): Unit = p = at
    def position: Long = p
    /** Bytes readable at `p` without a refill, refilling first when there are none. */
    private def ready(): Int = {
      if (p >= window.limit) return 0
      if (p < window.start || p >= window.end) window.ensure(p, 1)
      (math.min(window.end, window.limit) - p).toInt
    }
    override def read(): Int = if (ready() > 0) { val b = window.buf(window.index(p)) & 0xff; p += 1; b } else -1
    override def read(b: Array[Byte], off: Int, len: Int): Int = {
      if (len == 0) return 0
      val n = math.min(len, ready())
      if (n <= 0) return -1
      System.arraycopy(window.buf, window.index(p), b, off, n)
      p += n
      n
    }
    override def available(): Int =
      if (p >= window.start && p < window.end) (math.min(window.end, window.limit) - p).toInt else 0
  }
}
