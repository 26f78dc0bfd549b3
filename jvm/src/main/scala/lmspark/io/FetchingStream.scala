package lmspark.io

import java.io.EOFException
import java.nio.ByteBuffer
import java.util.concurrent.CompletableFuture

import scala.util.control.NonFatal

import org.apache.hadoop.fs.FSDataInputStream
import org.apache.parquet.io.SeekableInputStream

import lmspark.shim.VectoredReads

/** One open file as lmspark's readers see it: a `SeekableInputStream` whose reads are served from
  * byte ranges fetched ahead of need, and otherwise from the file system's stream.
  *
  * [[fetch]] plans a stage: its ranges are merged across gaps of at most `maxGap` bytes and sent in
  * one call, a vectored read (`PositionedReadable.readVectored`, through [[VectoredReads]]) when
  * the stream implements one, so the connector merges and fetches them in parallel (S3A, ABFS, GCS,
  * local NIO); otherwise one positioned read per merged range. The call returns at once; a read
  * that needs a fetched range waits for it then (the wait is counted). A read is served from memory
  * when one fetched range holds all of it; any other read (a range not planned, one that failed, or
  * no fetch at all) is a seek and read on the file system's stream, exactly as without fetching, so
  * fetching never changes what is read, only how many requests it takes. A fetched range that failed
  * (a file shorter than its metadata says) is read again that way, so the error is the stream's.
  *
  * What a fetch holds is bounded: ranges beyond `maxBytes` held at once are not fetched (they are
  * read when needed). [[Fetch.release]] drops a stage's buffers.
  *
  * Invariants: `pos` is the position of the next read; `held` maps each fetched range's offset to
  * it; `heldBytes` is the sum of their lengths. Not thread-safe: one task reads a file. */
final class FetchingStream(in: FSDataInputStream, val fileSize: Long, val stats: IoStats, vectored: Boolean,
    val maxBytes: Long, maxRequestBytes: Long = FetchingStream.MaxRequestBytes) extends SeekableInputStream {

  private[this] var pos = 0L
  /** Where the stream's last direct read ended (-1: none yet): a read starting there continues it. */
  private[this] var streamEnd = -1L
  private[this] val held = new java.util.TreeMap[java.lang.Long, FetchingStream.Held]()
  private[this] var heldBytes = 0L
  private[this] val one = new Array[Byte](1)

  /** Bytes of fetched ranges held now. */
  def bytesHeld: Long = heldBytes

  /** Whether fetches go out as one vectored read (else one positioned read per merged range). */
  lazy val vectoredReads: Boolean = vectored && VectoredReads.available(in)

  /** The requests [[fetch]] makes of `ranges`: merged across gaps of at most `maxGap` (reading a
    * gap costs less than another request in turn: at 20 ms and 100 MB/s a request is worth 2 MB),
    * or of at most [[FetchingStream.VectoredGap]] when the ranges go out in one vectored read (its
    * ranges run in parallel, so a gap costs bandwidth and saves no wait; the connector merges its own
    * way too, S3A across 128 KiB); then cut into requests of at most `maxRequestBytes`, which the
    * connector runs side by side. With `pieces` above 1 and vectored reads, the requests are cut
    * further, into about `pieces` pieces of at least [[FetchingStream.MinPieceBytes]], so that a
    * small fetch arrives in parallel ([[FetchingStream.Spread]]). */
  def plan(ranges: Seq[ByteRange], maxGap: Long, pieces: Int = 1): IndexedSeq[ByteRange] = {
    val gap = if (vectoredReads) math.min(maxGap, FetchingStream.VectoredGap) else maxGap
    val requests = ByteRange.split(ByteRange.merge(ranges, gap), maxRequestBytes)
    if (pieces <= 1 || !vectoredReads || requests.size >= pieces) requests
    else {
      val total = requests.iterator.map(_.length).sum
      ByteRange.split(requests, math.max(FetchingStream.MinPieceBytes, (total + pieces - 1) / pieces))
    }
  }

  /** Fetches `ranges` in one call, as [[plan]] makes them requests; ranges held already are not
    * fetched again, and none past what `maxBytes` allows. */
  def fetch(ranges: Seq[ByteRange], maxGap: Long, spread: FetchingStream.Spread = FetchingStream.Spread.No): FetchingStream.Fetch =
    fetchAll(Seq(ranges), maxGap, spread).head

  /** As [[fetch]], for several groups of ranges in one call (one round trip), each group released
    * on its own (its ranges are merged among themselves only). */
  def fetchAll(groups: Seq[Seq[ByteRange]], maxGap: Long,
      spread: FetchingStream.Spread = FetchingStream.Spread.No): IndexedSeq[FetchingStream.Fetch] = {
    val pieces = if (spread == FetchingStream.Spread.No) 1 else FetchingStream.Parallel
    val room = maxBytes - heldBytes
    var total = 0L
    val chosenByGroup = groups.map { ranges =>
      val wanted = plan(ranges.filter(r => r.length > 0 && r.end <= fileSize && !covered(r.offset, r.length)), maxGap, pieces)
      wanted.filter { r =>
        val fits = total + r.length <= room && r.length <= Int.MaxValue - 16
        if (fits) total += r.length
        fits
      }
    }.toIndexedSeq
    val chosen = chosenByGroup.flatten
    if (chosen.isEmpty) return groups.indices.map(_ => FetchingStream.Fetch.Empty)
    val offsets = chosen.map(_.offset).toArray
    val lengths = chosen.map(_.length.toInt).toArray
    stats.roundTrips += 1
    stats.requests += chosen.size
    stats.bytesRequested += lengths.map(_.toLong).sum
    val futures =
      if (!vectoredReads) offsets.indices.map(i => positioned(offsets(i), lengths(i))).toArray
      else if (spread == FetchingStream.Spread.Apart) offsets.indices.flatMap(i => vectored(offsets.slice(i, i + 1), lengths.slice(i, i + 1))).toArray
      else vectored(offsets, lengths)
    val items = offsets.indices.map { i =>
      val h = new FetchingStream.Held(offsets(i), lengths(i), futures(i))
      val old = held.put(offsets(i), h)
      if (old != null) heldBytes -= old.length
      heldBytes += h.length
      h
    }
    var at = 0
    chosenByGroup.map { g =>
      val mine = items.slice(at, at + g.size).toArray
      at += g.size
      new FetchingStream.Fetch(this, mine)
    }
  }

  /** One vectored read of the ranges; a call that fails at once fails each of its ranges. */
  private def vectored(offsets: Array[Long], lengths: Array[Int]): Array[CompletableFuture[ByteBuffer]] =
    try VectoredReads.read(in, offsets, lengths)
    catch { case NonFatal(e) => Array.fill(offsets.length)(CompletableFuture.failedFuture[ByteBuffer](e)) }

  private def positioned(offset: Long, length: Int): CompletableFuture[ByteBuffer] =
    try {
      val b = new Array[Byte](length)
      val t0 = System.nanoTime()
      in.readFully(offset, b, 0, length)
      stats.waitNanos += System.nanoTime() - t0
      CompletableFuture.completedFuture(ByteBuffer.wrap(b))
    } catch { case NonFatal(e) => CompletableFuture.failedFuture[ByteBuffer](e) }

  private[io] def drop(h: FetchingStream.Held): Unit =
    if (held.get(h.offset) eq h) { held.remove(h.offset); heldBytes -= h.length }

  /** The held range that holds `[at, at + length)`, or null. */
  private def covering(at: Long, length: Long): FetchingStream.Held = {
    var e = held.floorEntry(at)
    var tries = 0
    while (e != null && tries < 8) {
      val h = e.getValue
      if (h.offset <= at && at + length <= h.end) return h
      e = held.lowerEntry(e.getKey)
      tries += 1
    }
    null
  }

  /** Whether held ranges (one, or several end to end) hold all of `[at, at + length)`. */
  private def covered(at: Long, length: Long): Boolean = {
    var from = at
    val end = at + length
    while (from < end) {
      val h = covering(from, 1)
      if (h == null) return false
      from = h.end
    }
    true
  }

  /** Reads `len` bytes at `pos` into `b`: from fetched ranges while they hold the next bytes (a read
    * may span ranges cut apart by `maxRequestBytes`), the rest from the stream. */
  private def readAt(b: Array[Byte], off: Int, len: Int): Unit = {
    if (len == 0) return
    var o = off
    var n = len
    var h = covering(pos, 1)
    var data = if (h == null) null else h.data(stats)
    while (data != null && n > 0) {
      val k = math.min(n.toLong, h.end - pos).toInt
      val src = data.duplicate()
      src.position(src.position() + (pos - h.offset).toInt)
      src.get(b, o, k)
      stats.bytesUsed += k
      pos += k
      o += k
      n -= k
      if (n > 0) {
        h = covering(pos, 1)
        data = if (h == null) null else h.data(stats)
      }
    }
    if (n > 0) direct(b, o, n)
  }

  /** Reads `len` bytes at `pos` from the file system's stream (a request unless it continues the last). */
  private def direct(b: Array[Byte], off: Int, len: Int): Unit = {
    if (pos != streamEnd) { stats.requests += 1; stats.roundTrips += 1 }
    stats.bytesRequested += len
    val t0 = System.nanoTime()
    try {
      in.seek(pos)
      in.readFully(b, off, len)
    } finally stats.waitNanos += System.nanoTime() - t0
    streamEnd = pos + len
    stats.bytesUsed += len
    pos += len
  }

  override def getPos: Long = pos

  override def seek(newPos: Long): Unit = {
    if (newPos < 0) throw new EOFException(s"cannot seek to $newPos")
    pos = newPos
  }

  override def read(): Int =
    if (pos >= fileSize) -1
    else { readAt(one, 0, 1); one(0) & 0xff }

  override def read(b: Array[Byte], off: Int, len: Int): Int =
    if (len == 0) 0
    else if (pos >= fileSize) -1
    else {
      val n = math.min(len.toLong, fileSize - pos).toInt
      readAt(b, off, n)
      n
    }

  override def readFully(bytes: Array[Byte]): Unit = readFully(bytes, 0, bytes.length)

  override def readFully(bytes: Array[Byte], start: Int, len: Int): Unit = {
    if (pos + len > fileSize) throw new EOFException(s"reading $len bytes at $pos passes the end of the file ($fileSize bytes)")
    readAt(bytes, start, len)
  }

  override def read(buf: ByteBuffer): Int = {
    val n = math.min(buf.remaining().toLong, math.max(0L, fileSize - pos)).toInt
    if (buf.remaining() > 0 && n == 0) return -1
    fill(buf, n)
    n
  }

  override def readFully(buf: ByteBuffer): Unit = fill(buf, buf.remaining())

  /** Reads `n` bytes into `buf` at its position: straight into a heap buffer's array, through one
    * temporary array into a direct one. */
  private def fill(buf: ByteBuffer, n: Int): Unit =
    if (buf.hasArray) {
      readFully(buf.array, buf.arrayOffset + buf.position(), n)
      buf.position(buf.position() + n)
    } else {
      val b = new Array[Byte](n)
      readFully(b)
      buf.put(b)
    }

  override def close(): Unit = {
    held.clear()
    heldBytes = 0L
    in.close()
  }
}

object FetchingStream {

  /** Largest gap read through between the ranges of one vectored read (S3A's own merge gap). */
  val VectoredGap: Long = 128L << 10

  /** Pieces a spread fetch is cut into ([[plan]]'s `pieces`): the ranged reads S3A runs at once by
    * default (`fs.s3a.vectored.active.ranged.reads`). */
  val Parallel: Int = 4

  /** How a fetch's requests are cut so that they arrive in parallel. */
  sealed trait Spread
  object Spread {
    /** Requests as merged and cut at the request bound. */
    case object No extends Spread
    /** Cut into [[Parallel]] pieces, in one vectored call: the connector may merge adjacent pieces
      * back, up to its largest request (S3A: 2 MiB), so a large fetch costs few more requests. */
    case object Merged extends Spread
    /** The same pieces, each its own vectored call: they go out in parallel whatever the connector
      * merges (a few more requests; for a fetch that is all a task waits for). */
    case object Apart extends Spread
  }

  /** Smallest piece [[plan]] cuts a request into when spreading it. */
  val MinPieceBytes: Long = 256L << 10

  /** Default largest request (`spark.lmspark.io.maxRequestBytes`). */
  val MaxRequestBytes: Long = 8L << 20

  /** One fetched range; its bytes once the read completes (null when it failed). */
  private[io] final class Held(val offset: Long, val length: Int, future: CompletableFuture[ByteBuffer]) {
    private[this] var buffer: ByteBuffer = _
    private[this] var failed = false
    def end: Long = offset + length

    def data(stats: IoStats): ByteBuffer = {
      if (buffer == null && !failed) {
        val t0 = System.nanoTime()
        try {
          val b = future.get()
          if (b.remaining() >= length) buffer = b else failed = true
        } catch { case NonFatal(_) => failed = true } // read again from the stream, which gives its own error
        finally stats.waitNanos += System.nanoTime() - t0
      }
      buffer
    }
  }

  /** The ranges one [[FetchingStream.fetch]] call fetched. */
  final class Fetch private[io] (stream: FetchingStream, items: Array[Held]) {
    /** Bytes fetched. */
    def bytes: Long = items.iterator.map(_.length.toLong).sum
    /** Drops these ranges' buffers: later reads of them go to the stream. */
    def release(): Unit = if (stream != null) items.foreach(stream.drop)
  }

  object Fetch {
    val Empty: Fetch = new Fetch(null, Array.empty)
  }
}
