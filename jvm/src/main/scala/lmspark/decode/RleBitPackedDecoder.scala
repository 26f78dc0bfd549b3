package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** The RLE / bit-packed hybrid encoding (without the optional 4-byte length prefix, which callers
  * strip). Used for definition levels, dictionary ids and RLE booleans.
  *
  * State: the current run is either RLE (`runRemaining` copies of `rleValue`) or bit-packed
  * (`packedCount` values at `packedStart`, `packedIndex` consumed so far). A bit-packed run is
  * unpacked into `unpacked` only when a value of it is read; skips only move `packedIndex`.
  * Invariants: `0 <= runRemaining`; `pos <= end`; each run header advances `pos`, so corrupt input
  * ends in a [[DecodeException]], never a loop; a bit-packed run's count is cut to the bytes
  * present, so `unpacked` never grows past 8 values per byte of the page (a zero-width packed run
  * is treated as an RLE run of 0); an RLE value must fit the bit width. */
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
  private[this] var packedCount: Int = 0
  private[this] var unpackedValid: Boolean = false
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
    this.unpackedValid = false
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
      val wanted = groups * 8
      val avail = end - pos
      // The last bit-packed run may be cut short by a writer; never read past `end`.
      val count = math.min(wanted, avail.toLong * 8 / bitWidth) // at most 8x the bytes left: bounded by the page
      val byteLen = math.min(groups * bitWidth, avail.toLong).toInt
      isRle = false
      packedStart = pos
      packedIndex = 0
      packedCount = count.toInt
      runRemaining = count.toInt
      unpackedValid = false
      pos += byteLen
    }
  }

  /** Unpacks the current bit-packed run. Value `i` starts at bit `8 * packedStart + i * bitWidth`
    * (LSB first): while 8 bytes from its first byte lie in the array it is one unaligned load, a
    * shift and a mask (widths up to 32 bits span at most 5 bytes); the last few byte by byte. The
    * run's count was cut to the bytes present, so no value needs a byte past `end`. */
  private def ensureUnpacked(): Unit = if (!unpackedValid) {
    val n = packedCount
    if (unpacked.length < n) unpacked = new Array[Int](math.max(n, unpacked.length * 2))
    val out = unpacked
    val bw = bitWidth
    if (bw == 0) java.util.Arrays.fill(out, 0, n, 0)
    else {
      val mask = if (bw == 32) 0xffffffffL else (1L << bw) - 1
      val b = bytes
      val lastLoad = b.length - 8
      var bit = packedStart.toLong * 8
      var i = 0
      if (bw <= 8) {
        // A group of 8 values takes `bw` bytes from a byte boundary: one load each.
        var p = packedStart
        while (i + 8 <= n && p <= lastLoad) {
          val w = LittleEndian.int64(b, p)
          out(i) = (w & mask).toInt
          out(i + 1) = ((w >>> bw) & mask).toInt
          out(i + 2) = ((w >>> (2 * bw)) & mask).toInt
          out(i + 3) = ((w >>> (3 * bw)) & mask).toInt
          out(i + 4) = ((w >>> (4 * bw)) & mask).toInt
          out(i + 5) = ((w >>> (5 * bw)) & mask).toInt
          out(i + 6) = ((w >>> (6 * bw)) & mask).toInt
          out(i + 7) = ((w >>> (7 * bw)) & mask).toInt
          p += bw
          i += 8
        }
        bit = p.toLong * 8
      }
      while (i < n && (bit >>> 3) <= lastLoad) {
        out(i) = ((LittleEndian.int64(b, (bit >>> 3).toInt) >>> (bit & 7)) & mask).toInt
        bit += bw
        i += 1
      }
      while (i < n) {
        val p = (bit >>> 3).toInt
        var acc = 0L
        var j = 0
        while (j < 5 && p + j < b.length) { acc |= (b(p + j) & 0xffL) << (8 * j); j += 1 }
        out(i) = ((acc >>> (bit & 7)) & mask).toInt
        bit += bw
        i += 1
      }
    }
    unpackedValid = true
  }

  override def readInts(n: Int, dst: Array[Int], dstOff: Int): Unit = {
    var done = 0
    while (done < n) {
      if (runRemaining == 0) nextRun()
      val k = math.min(n - done, runRemaining)
      if (isRle) java.util.Arrays.fill(dst, dstOff + done, dstOff + done + k, rleValue)
      else {
        ensureUnpacked()
        System.arraycopy(unpacked, packedIndex, dst, dstOff + done, k)
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
        ensureUnpacked()
        val u = unpacked
        var i = 0
        while (i < k) { v.putBoolean(rowId + done + i, u(packedIndex + i) != 0); i += 1 }
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
        ensureUnpacked()
        val u = unpacked
        var i = packedIndex
        val e = packedIndex + k
        while (i < e) { if (u(i) == value) count += 1; i += 1 }
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
