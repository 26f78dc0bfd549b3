package lmspark.io

import java.io.EOFException

import scala.util.control.NonFatal

import org.apache.parquet.io.SeekableInputStream

/** The bytes of one column chunk that a [[PageSource]] holds: one heap array holding the file
  * range `[start, end)`, at most `windowBytes` long, or one page (header end to data end) when a
  * page is larger. Every position is a file offset.
  *
  * [[ensure]] refills the window from a byte it lacks: the bytes of the window still ahead are
  * kept, the rest is read from the file with one `seek` + `readFully`, never past `limit` (the end
  * of the current region: the chunk, or for a source of some pages the dictionary region or the
  * coalesced range of the current page), so nothing outside the chunk's kept ranges is ever read. A
  * page that was skipped and lies past the window is never read: the refill seeks past it. The
  * stream is shared by the file's columns: every read positions it itself.
  *
  * A window some handed-out page points into (`shared`) is never overwritten: its refill allocates
  * a new array; otherwise the array is reused.
  *
  * Invariants: `start <= end`; `buf(index(p))` is the byte at `p` for `start <= p < end`; reads
  * stay below `limit`. Not thread-safe. */
private[io] final class ChunkWindow(in: SeekableInputStream, context: ChunkContext, chunkStart: Long, chunkEnd: Long,
    windowBytes: Int, from: Long) {

  private[this] var array: Array[Byte] = _
  private[this] var base: Long = 0L // position of array(0)
  private[this] var first: Long = from
  private[this] var last: Long = from
  private[this] var readBytes: Long = 0L

  /** Some page handed out points into the array: a refill must not overwrite it. */
  var shared: Boolean = false

  /** Where the current region ends: refills and header parsing stop here. */
  var limit: Long = chunkEnd

  /** The array holding the window's bytes (null before the first read, and once dropped). */
  def buf: Array[Byte] = array

  /** First position held. */
  def start: Long = first

  /** Position past the last one held. */
  def end: Long = last

  /** The position of `buf(0)`. */
  def origin: Long = base

  /** Bytes read from the file so far. */
  def bytesRead: Long = readBytes

  /** Counts `n` bytes as read (bytes the caller handed over). */
  def countRead(n: Long): Unit = readBytes += n

  /** Bytes held now (the array's length). */
  def bytesHeld: Int = if (array == null) 0 else array.length

  /** Whether there is a stream to refill from. */
  def hasStream: Boolean = in != null

  /** Whether the window holds every position of `[from, until)`. */
  def holds(from: Long, until: Long): Boolean = array != null && first <= from && last >= until

  /** Index in `buf` of position `p` (which the window holds). */
  @inline def index(p: Long): Int = (p - base).toInt

  /** Starts with `bytes` as the window (not to be written: it is shared), holding `[from, until)`,
    * `bytes(0)` being position `origin`. */
  def adopt(bytes: Array[Byte], origin: Long, from: Long, until: Long): Unit = {
    array = bytes; base = origin; first = from; last = until; shared = true
  }

  /** Drops the array: the window holds nothing, and stands at `at`. */
  def drop(at: Long): Unit = { array = null; first = at; last = at; shared = false }

  /** Makes the window hold `[from, from + len)`, which lies inside the current region (callers
    * check), refilling it from `from` when it does not: window bytes from `from` on are kept, the
    * rest is read from the file up to `max(len, windowBytes)` bytes from `from` or the region's end,
    * whichever comes first. The array is reused unless a handed-out page points into it or it is
    * larger than the window (it held a large page). */
  def ensure(from: Long, len: Int): Unit = {
    if (from >= first && from + len <= last) return
    if (in == null || from + len > limit || len < 0)
      throw new IllegalStateException(s"internal error: bytes [$from, ${from + len}) are outside the chunk's " +
        s"held bytes [$first, $last) and region end $limit ($context)")
    val until = math.min(limit, from + math.max(len.toLong, windowBytes.toLong))
    val size = (until - from).toInt
    val keep = if (from >= first && from < last) (last - from).toInt else 0
    val target =
      if (!shared && array != null && array.length >= size && array.length <= math.max(size, windowBytes)) array
      else new Array[Byte](size)
    if (keep > 0) System.arraycopy(array, index(from), target, 0, keep)
    array = target; base = from; first = from; last = from + keep; shared = false
    val readFrom = from + keep
    val n = (until - readFrom).toInt
    try {
      in.seek(readFrom)
      in.readFully(target, keep, n)
    } catch {
      case e: EOFException =>
        throw context.error(s"file ends inside column chunk [$chunkStart, $chunkEnd), reading [$readFrom, $until) " +
          "(truncated file?)", e)
      case NonFatal(e) =>
        throw context.error(s"cannot read column chunk [$chunkStart, $chunkEnd) at [$readFrom, $until): " +
          s"${e.getMessage}", e)
    }
    readBytes += n
    last = until
  }
}
