package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** DELTA_BINARY_PACKED INT32 (`maxBitWidth` 32: values wrap to 32 bits, whatever the miniblock widths) or INT64 (`maxBitWidth` 64) values.
  *
  * Layout: a header of ULEB128 `block size` (a multiple of 128), `miniblocks per block` (values
  * per miniblock a multiple of 32), `total value count` and the zigzag `first value`; then blocks
  * of (zigzag `min delta`, one bit width byte per miniblock, the miniblocks needed for the block's
  * deltas, each padded to a full miniblock). Value `i + 1` is `value i + min delta + packed delta`,
  * wrapping in two's complement: sums are kept in a `Long`, whose low 32 bits are the INT32 values.
  *
  * Reading is lazy: a block header is read (and its needed miniblocks' bit widths and sizes
  * checked against the page) when its first delta is needed; deltas are unpacked 32 at a time
  * (each group of 32 is byte aligned) into `group`. `skip` writes nothing: it sums packed deltas
  * group by group, skips bit-width-0 miniblocks in O(1), and a skip to the end is O(1).
  * [[endOffset]] walks the block headers (without unpacking) to find where the encoded stream
  * ends, for the encodings that put other data after it.
  *
  * Invariants: `0 <= remaining <= total <= numValues` of `init`; every byte read is inside the
  * `[offset, offset + length)` given to `init` (all sizes are checked before use); each block header
  * consumes at least one byte and at most `total - 1` deltas exist, so corrupt input ends in a
  * [[DecodeException]], never an out-of-bounds access or a loop. */
final class DeltaBinaryPackedDecoder(maxBitWidth: Int) extends ValuesDecoder {
  require(maxBitWidth == 32 || maxBitWidth == 64, s"maxBitWidth must be 32 or 64, was $maxBitWidth")
  import DeltaBinaryPackedDecoder._

  private[this] var bytes: Array[Byte] = _
  private[this] var end: Int = 0
  /** Next block header (after the header: the first one). */
  private[this] var pos: Int = 0
  private[this] var headerEnd: Int = 0

  private[this] var blockSize: Int = 0
  private[this] var miniblocks: Int = 0
  private[this] var miniSize: Int = 0
  private[this] var total: Int = 0
  private[this] var remaining: Int = 0
  private[this] var firstPending: Boolean = false
  /** The last value produced (before any delta: the first value). */
  private[this] var last: Long = 0L

  // The current block and miniblock.
  private[this] var minDelta: Long = 0L
  private[this] var bitWidths: Array[Int] = new Array[Int](8)
  private[this] var blockDeltasLeft: Int = 0
  private[this] var miniIndex: Int = 0
  private[this] var miniStart: Int = 0
  private[this] var miniPos: Int = 0
  private[this] var miniLeft: Int = 0
  private[this] var bitWidth: Int = 0

  private[this] val group = new Array[Long](32)
  private[this] var groupIndex: Int = -1

  private[this] var intScratch: Array[Int] = _
  private[this] var longScratch: Array[Long] = _

  /** Values in the page according to the header. */
  def totalCount: Int = total

  /** Values not yet read or skipped. */
  def remainingCount: Int = remaining

  override def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    if (offset < 0 || length < 0 || offset.toLong + length > bytes.length)
      throw new DecodeException(s"DELTA_BINARY_PACKED data range [$offset, ${offset.toLong + length}) outside " +
        s"buffer of ${bytes.length} bytes")
    this.bytes = bytes
    this.end = offset + length
    this.pos = offset
    blockDeltasLeft = 0
    miniLeft = 0
    groupIndex = -1
    if (length == 0) {
      // No encoded bytes at all: a page without values (e.g. all nulls) from a terse writer.
      total = 0; remaining = 0; firstPending = false; headerEnd = offset
      return
    }
    val bs = readVarLong(5, "block size")
    val mb = readVarLong(5, "miniblocks per block")
    val tc = readVarLong(5, "total value count")
    val first = zigzag(readVarLong(10, "first value"))
    if (bs <= 0 || bs % 128 != 0 || bs > Int.MaxValue)
      throw new DecodeException(s"DELTA_BINARY_PACKED block size $bs is not a positive multiple of 128")
    if (mb <= 0 || bs % mb != 0 || (bs / mb) % 32 != 0)
      throw new DecodeException(s"DELTA_BINARY_PACKED block size $bs with $mb miniblocks does not give miniblocks " +
        "of a multiple of 32 values")
    if (tc > numValues)
      throw new DecodeException(s"DELTA_BINARY_PACKED header announces $tc values, the page holds at most $numValues")
    blockSize = bs.toInt
    miniblocks = mb.toInt
    miniSize = (bs / mb).toInt
    total = tc.toInt
    remaining = total
    firstPending = total > 0
    last = first
    headerEnd = pos
  }

  /** ULEB128 at `pos` of at most `maxBytes` bytes; moves `pos` past it. */
  private def readVarLong(maxBytes: Int, what: String): Long = {
    val v = readVarLongAt(pos, maxBytes, what)
    pos = varEnd
    v
  }

  /** Where the varint last read by [[readVarLongAt]] ended. */
  private[this] var varEnd: Int = 0

  /** ULEB128 at `p0` of at most `maxBytes` bytes; sets `varEnd` past it. */
  private def readVarLongAt(p0: Int, maxBytes: Int, what: String): Long = {
    var p = p0
    var v = 0L
    var shift = 0
    var b = 0
    var n = 0
    while ({
      if (p >= end) throw new DecodeException(s"DELTA_BINARY_PACKED $what truncated")
      if (n == maxBytes) throw new DecodeException(s"DELTA_BINARY_PACKED $what varint longer than $maxBytes bytes")
      b = bytes(p) & 0xff
      p += 1
      n += 1
      v |= (b & 0x7fL) << shift
      shift += 7
      (b & 0x80) != 0
    }) ()
    varEnd = p
    v
  }

  /** Reads the block header at `pos`: min delta and bit widths; checks the needed miniblocks fit
    * the page and moves `pos` to the next block header. Leaves `miniIndex = -1` and `bitWidth = 0`
    * at the first miniblock's data so that [[nextMiniblock]] lands on miniblock 0. */
  private def readBlockHeader(): Unit = {
    val blockDeltas = math.min(blockSize, remaining)
    minDelta = zigzag(readVarLong(10, "min delta"))
    if (end - pos < miniblocks)
      throw new DecodeException(s"DELTA_BINARY_PACKED block bit widths truncated: need $miniblocks bytes, " +
        s"${end - pos} remain")
    if (bitWidths.length < miniblocks) bitWidths = new Array[Int](miniblocks)
    val needed = (blockDeltas + miniSize - 1) / miniSize
    val dataStart = pos + miniblocks
    var size = 0L
    var i = 0
    while (i < miniblocks) {
      val bw = bytes(pos + i) & 0xff
      // Widths of miniblocks the block does not need may hold anything (the spec says to ignore them).
      if (i < needed) {
        // Up to 64 bits also for INT32: writers that compute INT32 deltas in 64 bits (DuckDB) write
        // 33-bit miniblocks; the values wrap to 32 bits, as parquet-java reads them.
        if (bw > 64)
          throw new DecodeException(s"DELTA_BINARY_PACKED miniblock bit width $bw > 64")
        size += (miniSize >>> 3).toLong * bw
      }
      bitWidths(i) = bw
      i += 1
    }
    if (size > end - dataStart)
      throw new DecodeException(s"DELTA_BINARY_PACKED block of $blockDeltas deltas needs $size bytes of miniblocks, " +
        s"${end - dataStart} remain")
    pos = dataStart + size.toInt
    blockDeltasLeft = blockDeltas
    miniIndex = -1
    miniStart = dataStart
    bitWidth = 0
  }

  private def nextMiniblock(): Unit = {
    if (blockDeltasLeft == 0) readBlockHeader()
    miniStart += (miniSize >>> 3) * bitWidth
    miniIndex += 1
    bitWidth = bitWidths(miniIndex)
    miniPos = 0
    miniLeft = math.min(miniSize, blockDeltasLeft)
    groupIndex = -1
  }

  /** Unpacks the 32 deltas of group `g` of the current miniblock (LSB-first bit packing). */
  private def unpackGroup(g: Int): Unit = {
    val bw = bitWidth
    val out = group
    val b = bytes
    val start = miniStart + g * 4 * bw
    if (bw == 0) java.util.Arrays.fill(out, 0L)
    else if (bw <= 56 && start + 4 * bw + 8 <= b.length) {
      // Fast path: one 8-byte little-endian load per value (bytes past the group are masked off).
      val mask = (1L << bw) - 1
      var i = 0
      var bit = 0
      while (i < 32) {
        out(i) = (LittleEndian.int64(b, start + (bit >>> 3)) >>> (bit & 7)) & mask
        bit += bw
        i += 1
      }
    } else {
      val mask = if (bw == 64) -1L else (1L << bw) - 1
      var i = 0
      var bit = 0
      while (i < 32) {
        var p = start + (bit >>> 3)
        val shift = bit & 7
        var v = (b(p) & 0xffL) >>> shift
        var got = 8 - shift
        p += 1
        while (got < bw) { v |= (b(p) & 0xffL) << got; got += 8; p += 1 }
        out(i) = v & mask
        bit += bw
        i += 1
      }
    }
    groupIndex = g
  }

  private def need(n: Int): Unit =
    if (n < 0 || n > remaining)
      throw new DecodeException(s"DELTA_BINARY_PACKED values ended early: need $n values, $remaining remain")

  @inline private def consumed(k: Int): Unit = {
    miniPos += k
    miniLeft -= k
    blockDeltasLeft -= k
    remaining -= k
  }

  /** The next `n` values (already checked against `remaining`) into `ints` or `longs` at `off`. */
  private def decode(n: Int, ints: Array[Int], longs: Array[Long], off: Int): Unit = {
    var done = 0
    if (firstPending && n > 0) {
      if (ints != null) ints(off) = last.toInt else longs(off) = last
      firstPending = false
      remaining -= 1
      done = 1
    }
    while (done < n) {
      if (miniLeft == 0) nextMiniblock()
      val md = minDelta
      var v = last
      if (bitWidth == 0) {
        val k = math.min(n - done, miniLeft)
        var i = 0
        if (ints != null) while (i < k) { v += md; ints(off + done + i) = v.toInt; i += 1 }
        else while (i < k) { v += md; longs(off + done + i) = v; i += 1 }
        last = v
        consumed(k)
        done += k
      } else {
        val g = miniPos >>> 5
        if (groupIndex != g) unpackGroup(g)
        val j = miniPos & 31
        val k = math.min(n - done, math.min(miniLeft, 32 - j))
        val d = group
        var i = 0
        if (ints != null) while (i < k) { v += md + d(j + i); ints(off + done + i) = v.toInt; i += 1 }
        else while (i < k) { v += md + d(j + i); longs(off + done + i) = v; i += 1 }
        last = v
        consumed(k)
        done += k
      }
    }
  }

  override def skip(n: Int): Unit = {
    need(n)
    if (n == 0) return
    if (n == remaining) {
      // Nothing after this is read: no need to accumulate the deltas.
      remaining = 0
      firstPending = false
      miniLeft = 0
      blockDeltasLeft = 0
      return
    }
    var done = 0
    if (firstPending) { firstPending = false; remaining -= 1; done = 1 }
    while (done < n) {
      if (miniLeft == 0) nextMiniblock()
      if (bitWidth == 0) {
        val k = math.min(n - done, miniLeft)
        last += k.toLong * minDelta
        consumed(k)
        done += k
      } else {
        val g = miniPos >>> 5
        val j = miniPos & 31
        val k = math.min(n - done, math.min(miniLeft, 32 - j))
        if (groupIndex != g) unpackGroup(g)
        val d = group
        var sum = 0L
        var i = 0
        while (i < k) { sum += d(j + i); i += 1 }
        last += k.toLong * minDelta + sum
        consumed(k)
        done += k
      }
    }
  }

  private def checkInts(): Unit = if (maxBitWidth != 32) unsupported("INT32")
  private def checkLongs(): Unit = if (maxBitWidth != 64) unsupported("INT64")

  override def readIntArray(n: Int, dst: Array[Int], dstOff: Int): Unit = {
    checkInts(); need(n); decode(n, dst, null, dstOff)
  }

  override def readLongArray(n: Int, dst: Array[Long], dstOff: Int): Unit = {
    checkLongs(); need(n); decode(n, null, dst, dstOff)
  }

  override def readInts(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    checkInts()
    need(n)
    var done = 0
    while (done < n) {
      val k = math.min(n - done, Chunk)
      if (intScratch == null) intScratch = new Array[Int](Chunk)
      decode(k, intScratch, null, 0)
      v.putInts(rowId + done, k, intScratch, 0)
      done += k
    }
  }

  override def readLongs(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    checkLongs()
    need(n)
    var done = 0
    while (done < n) {
      val k = math.min(n - done, Chunk)
      if (longScratch == null) longScratch = new Array[Long](Chunk)
      decode(k, null, longScratch, 0)
      v.putLongs(rowId + done, k, longScratch, 0)
      done += k
    }
  }

  /** Where the encoded stream ends: the offset after the last block's last needed miniblock.
    * Walks the block headers from the header's end (independently of the read position),
    * checking bit widths and sizes as reading would. */
  def endOffset(): Int = {
    var p = headerEnd
    var deltas = math.max(total - 1, 0)
    while (deltas > 0) {
      readVarLongAt(p, 10, "min delta")
      p = varEnd
      if (end - p < miniblocks)
        throw new DecodeException(s"DELTA_BINARY_PACKED block bit widths truncated: need $miniblocks bytes, " +
          s"${end - p} remain")
      val blockDeltas = math.min(blockSize, deltas)
      val needed = (blockDeltas + miniSize - 1) / miniSize
      var size = 0L
      var i = 0
      while (i < needed) {
        val bw = bytes(p + i) & 0xff
        if (bw > 64) throw new DecodeException(s"DELTA_BINARY_PACKED miniblock bit width $bw > 64")
        size += (miniSize >>> 3).toLong * bw
        i += 1
      }
      p += miniblocks
      if (size > end - p)
        throw new DecodeException(s"DELTA_BINARY_PACKED block of $blockDeltas deltas needs $size bytes of " +
          s"miniblocks, ${end - p} remain")
      p += size.toInt
      deltas -= blockDeltas
    }
    p
  }
}

object DeltaBinaryPackedDecoder {
  /** Values decoded per bulk vector write. */
  private val Chunk = 1024

  @inline private def zigzag(v: Long): Long = (v >>> 1) ^ -(v & 1)
}
