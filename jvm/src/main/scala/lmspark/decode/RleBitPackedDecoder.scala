package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** The RLE / bit-packed hybrid encoding (without the optional 4-byte length prefix, which callers
  * strip). Used for definition levels, dictionary ids and RLE booleans.
  *
  * State: the current run is either RLE (`runRemaining` copies of `rleValue`) or bit-packed
  * (values from byte `packedStart`, `packedIndex` consumed so far, `runRemaining` left). Only the
  * values of a bit-packed run that are read are unpacked, straight into the caller's array; skips
  * only move `packedIndex`.
  * Invariants: `0 <= runRemaining`; `pos <= end`; each run header advances `pos`, so corrupt input
  * ends in a [[DecodeException]], never a loop; a bit-packed run declaring more groups than the
  * bytes left hold is malformed (as in Spark's `VectorizedRleValuesReader`), so the `unpacked`
  * scratch never grows past 8 values per byte of the page (a zero-width packed run is treated as
  * an RLE run of 0); an RLE value must fit the bit width. */
final class RleBitPackedDecoder extends LevelDecoder {
  private[this] var bytes: Array[Byte] = _
  private[this] var pos: Int = 0
  private[this] var end: Int = 0
  private[this] var bitWidth: Int = 0

  private[this] var isRle: Boolean = true
  private[this] var runRemaining: Int = 0
  private[this] var rleValue: Int = 0
  private[this] var packedStart: Int = 0
  private[this] var packedIndex: Int = 0
  private[this] var unpacked: Array[Int] = new Array[Int](64)

  /** Points the decoder at `bytes[offset, offset + length)` with values of `bitWidth` bits. */
  def init(bytes: Array[Byte], offset: Int, length: Int, bitWidth: Int): Unit = {
    if (bitWidth < 0 || bitWidth > 32) throw new DecodeException(s"invalid RLE/bit-packed bit width $bitWidth")
    if (offset < 0 || length < 0 || offset.toLong + length > bytes.length)
      throw new DecodeException(s"RLE/bit-packed data range [$offset, ${offset.toLong + length}) " +
        s"outside buffer of ${bytes.length} bytes")
    this.bytes = bytes
    this.pos = offset
    this.end = offset + length
    this.bitWidth = bitWidth
    this.runRemaining = 0
    this.isRle = true
  }

  /** Reads the next run header. */
  private def nextRun(): Unit = {
    if (pos >= end) throw new DecodeException("RLE/bit-packed data ended before all values were read")
    var header = 0L
    var shift = 0
    var b = 0
    while ({
      if (pos >= end) throw new DecodeException("RLE/bit-packed run header truncated")
      if (shift > 28) throw new DecodeException("RLE/bit-packed run header varint too long")
      b = bytes(pos) & 0xff
      pos += 1
      header |= (b & 0x7fL) << shift
      shift += 7
      (b & 0x80) != 0
    }) ()
    if ((header & 1) == 0) {
      val count = header >>> 1
      val width = (bitWidth + 7) >>> 3
      if (pos + width > end) throw new DecodeException("RLE run value truncated")
      var v = 0
      var i = 0
      while (i < width) { v |= (bytes(pos + i) & 0xff) << (8 * i); i += 1 }
      pos += width
      // A run value wider than the bit width (a level above the column's max, an id past any
      // dictionary of that width) is malformed.
      if (bitWidth < 32 && (v >>> bitWidth) != 0)
        throw new DecodeException(s"RLE run value $v does not fit the bit width $bitWidth")
      isRle = true
      rleValue = v
      runRemaining = math.min(count, Int.MaxValue.toLong).toInt
    } else if (bitWidth == 0) {
      // Zero-width packed values are all 0: an RLE run of 0, so that nothing is unpacked (a count
      // taken from the file must not size an allocation).
      isRle = true
      rleValue = 0
      runRemaining = math.min(header >>> 1 << 3, Int.MaxValue.toLong).toInt
    } else {
      val groups = header >>> 1
      val byteLen = groups * bitWidth
      val avail = end - pos
      // A run declaring more groups than the bytes left hold is malformed, as Spark's reader (every
      // line) decides, even when the values asked lie in the bytes present. So a run's values are
      // at most 8 per byte of the page.
      if (byteLen > avail)
        throw new DecodeException(s"bit-packed run of $groups groups needs $byteLen bytes, but only $avail bytes are left")
      isRle = false
      packedStart = pos
      packedIndex = 0
      runRemaining = math.min(groups * 8, Int.MaxValue.toLong).toInt
      pos += byteLen.toInt
    }
  }

  /** Scratch for the paths that look at unpacked values before storing them (booleans, counting). */
  private def scratch(n: Int): Array[Int] = {
    if (unpacked.length < n) unpacked = new Array[Int](math.max(n, unpacked.length * 2))
    unpacked
  }

  /** Unpacks values `[from, from + k)` of the current bit-packed run into `dst[dstOff, dstOff + k)`.
    * Value `i` starts at bit `8 * packedStart + i * bitWidth` (LSB first). Values of whole groups of
    * 8 (a group is `bitWidth` bytes from a byte boundary) take one unaligned 8-byte load per group
    * up to 8 bits wide, two up to 16 bits, and one per value beyond, at offsets fixed for the width
    * (widths up to 32 bits span at most 5 bytes from their first byte);
    * values before the first whole group, after the last, or near the array's end, one by one. The
    * run's count was cut to the bytes present, so no value needs a byte past `end`. Only the values
    * asked for are unpacked: a skip costs nothing and a short read of a long run unpacks little. */
  private def unpackInto(from: Int, k: Int, dst: Array[Int], dstOff: Int): Unit = {
    val bw = bitWidth
    if (bw == 0) { java.util.Arrays.fill(dst, dstOff, dstOff + k, 0); return }
    val b = bytes
    val mask = if (bw == 32) 0xffffffffL else (1L << bw) - 1
    val m = mask.toInt
    var i = from
    val e = from + k
    var o = dstOff
    // Head: up to the next group boundary.
    while (i < e && (i & 7) != 0) { dst(o) = one(b, i, mask); i += 1; o += 1 }
    // Whole groups while their loads stay inside the array.
    var p = packedStart + (i >>> 3) * bw
    val lastGroup = b.length - 8 - bw
    val o1 = bw >>> 3; val s1 = bw & 7
    val o2 = (2 * bw) >>> 3; val s2 = (2 * bw) & 7
    val o3 = (3 * bw) >>> 3; val s3 = (3 * bw) & 7
    val o4 = (4 * bw) >>> 3; val s4 = (4 * bw) & 7
    val o5 = (5 * bw) >>> 3; val s5 = (5 * bw) & 7
    val o6 = (6 * bw) >>> 3; val s6 = (6 * bw) & 7
    val o7 = (7 * bw) >>> 3; val s7 = (7 * bw) & 7
    if (bw <= 8) {
      // A group fits one load.
      while (i + 8 <= e && p <= lastGroup) {
        val w = LittleEndian.int64(b, p)
        dst(o) = w.toInt & m
        dst(o + 1) = (w >>> bw).toInt & m
        dst(o + 2) = (w >>> (2 * bw)).toInt & m
        dst(o + 3) = (w >>> (3 * bw)).toInt & m
        dst(o + 4) = (w >>> (4 * bw)).toInt & m
        dst(o + 5) = (w >>> (5 * bw)).toInt & m
        dst(o + 6) = (w >>> (6 * bw)).toInt & m
        dst(o + 7) = (w >>> (7 * bw)).toInt & m
        p += bw
        i += 8
        o += 8
      }
    } else if (bw <= 16) {
      // Values 0 to 3 fit the load at the group's start, values 4 to 7 the load at value 4's byte
      // (4 * bw + s4 <= 64 bits).
      while (i + 8 <= e && p <= lastGroup) {
        val w0 = LittleEndian.int64(b, p)
        val w1 = LittleEndian.int64(b, p + o4) >>> s4
        dst(o) = w0.toInt & m
        dst(o + 1) = (w0 >>> bw).toInt & m
        dst(o + 2) = (w0 >>> (2 * bw)).toInt & m
        dst(o + 3) = (w0 >>> (3 * bw)).toInt & m
        dst(o + 4) = w1.toInt & m
        dst(o + 5) = (w1 >>> bw).toInt & m
        dst(o + 6) = (w1 >>> (2 * bw)).toInt & m
        dst(o + 7) = (w1 >>> (3 * bw)).toInt & m
        p += bw
        i += 8
        o += 8
      }
    }
    while (i + 8 <= e && p <= lastGroup) {
      dst(o) = LittleEndian.int64(b, p).toInt & m
      dst(o + 1) = (LittleEndian.int64(b, p + o1) >>> s1).toInt & m
      dst(o + 2) = (LittleEndian.int64(b, p + o2) >>> s2).toInt & m
      dst(o + 3) = (LittleEndian.int64(b, p + o3) >>> s3).toInt & m
      dst(o + 4) = (LittleEndian.int64(b, p + o4) >>> s4).toInt & m
      dst(o + 5) = (LittleEndian.int64(b, p + o5) >>> s5).toInt & m
      dst(o + 6) = (LittleEndian.int64(b, p + o6) >>> s6).toInt & m
      dst(o + 7) = (LittleEndian.int64(b, p + o7) >>> s7).toInt & m
      p += bw
      i += 8
      o += 8
    }
    // Tail.
    while (i < e) { dst(o) = one(b, i, mask); i += 1; o += 1 }
  }

  /** Value `i` of the current bit-packed run, loaded byte by byte near the array's end. */
  private def one(b: Array[Byte], i: Int, mask: Long): Int = {
    val bit = packedStart.toLong * 8 + i.toLong * bitWidth
    val p = (bit >>> 3).toInt
    val word =
      if (p <= b.length - 8) LittleEndian.int64(b, p)
      else {
        var acc = 0L
        var j = 0
        while (j < 5 && p + j < b.length) { acc |= (b(p + j) & 0xffL) << (8 * j); j += 1 }
        acc
      }
    ((word >>> (bit & 7)) & mask).toInt
  }

  override def readInts(n: Int, dst: Array[Int], dstOff: Int): Unit = {
    var done = 0
    while (done < n) {
      if (runRemaining == 0) nextRun()
      val k = math.min(n - done, runRemaining)
      if (isRle) java.util.Arrays.fill(dst, dstOff + done, dstOff + done + k, rleValue)
      else {
        unpackInto(packedIndex, k, dst, dstOff + done)
        packedIndex += k
      }
      runRemaining -= k
      done += k
    }
  }

  /** Booleans (bit width 1) straight into a vector; RLE runs become one `putBooleans`. */
  def readBooleans(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    var done = 0
    while (done < n) {
      if (runRemaining == 0) nextRun()
      val k = math.min(n - done, runRemaining)
      if (isRle) v.putBooleans(rowId + done, k, rleValue != 0)
      else {
        val u = scratch(k)
        unpackInto(packedIndex, k, u, 0)
        var i = 0
        while (i < k) { v.putBoolean(rowId + done + i, u(i) != 0); i += 1 }
        packedIndex += k
      }
      runRemaining -= k
      done += k
    }
  }

  override def runOf(value: Int, max: Int): Int = {
    if (runRemaining == 0) {
      if (pos >= end) return 0
      nextRun()
    }
    if (isRle && rleValue == value) math.min(runRemaining, max) else 0
  }

  override def skipCounting(n: Int, value: Int): Int = {
    var done = 0
    var count = 0
    while (done < n) {
      if (runRemaining == 0) nextRun()
      val k = math.min(n - done, runRemaining)
      if (isRle) { if (rleValue == value) count += k }
      else {
        val u = scratch(k)
        unpackInto(packedIndex, k, u, 0)
        var i = 0
        while (i < k) { if (u(i) == value) count += 1; i += 1 }
        packedIndex += k
      }
      runRemaining -= k
      done += k
    }
    count
  }

  override def skip(n: Int): Unit = {
    var done = 0
    while (done < n) {
      if (runRemaining == 0) nextRun()
      val k = math.min(n - done, runRemaining)
      if (!isRle) packedIndex += k
      runRemaining -= k
      done += k
    }
  }
}
