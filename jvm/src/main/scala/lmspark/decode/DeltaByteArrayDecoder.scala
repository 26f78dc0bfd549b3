package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** DELTA_BYTE_ARRAY (incremental / front coding) BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY values:
  * prefix lengths as a DELTA_BINARY_PACKED INT32 stream, then the suffixes as
  * DELTA_LENGTH_BYTE_ARRAY. Value `i` is the first `prefix(i)` bytes of value `i - 1` followed by
  * `suffix(i)`.
  *
  * The previous value lives in `value[0, valueLen)`; the next one is built in place by writing its
  * suffix at `prefix(i)` (the bytes past the prefix are no longer needed). `skip` must rebuild
  * values the same way (a later value may share their prefix) but writes no vector; a skip to the
  * end rebuilds nothing. `fixedLength >= 0` (FIXED_LEN_BYTE_ARRAY) requires every value to have
  * exactly that length. Values never carry over from the previous page.
  *
  * Invariants: `0 <= valueLen <= value.length`; every prefix is checked against `valueLen` and
  * every suffix against the page (by [[DeltaLengthByteArrayDecoder.nextLengths]]) before copying;
  * the prefix and suffix streams announce the same value count. */
final class DeltaByteArrayDecoder(fixedLength: Int) extends ValuesDecoder {
  import DeltaLengthByteArrayDecoder.Chunk

  private[this] val prefixes = new DeltaBinaryPackedDecoder(32)
  private[this] val suffixes = new DeltaLengthByteArrayDecoder
  private[this] val prefixBuf = new Array[Int](Chunk)
  private[this] var bytes: Array[Byte] = _
  private[this] var value: Array[Byte] = new Array[Byte](64)
  private[this] var valueLen: Int = 0

  override def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    prefixes.init(bytes, offset, length, numValues)
    val suffixStart = prefixes.endOffset()
    suffixes.init(bytes, suffixStart, offset + length - suffixStart, numValues)
    if (prefixes.totalCount != suffixes.valueCount)
      throw new DecodeException(s"DELTA_BYTE_ARRAY has ${prefixes.totalCount} prefix lengths but " +
        s"${suffixes.valueCount} suffixes")
    this.bytes = bytes
    valueLen = 0
  }

  /** Rebuilds the next `k` (at most [[Chunk]]) values; hands each to `v` or `sink` unless both are null. */
  private def decode(k: Int, v: WritableColumnVector, sink: BinarySink, rowId: Int): Unit = {
    val pre = prefixBuf
    prefixes.readIntArray(k, pre, 0)
    val sl = suffixes.nextLengths(k)
    var p = suffixes.position
    var i = 0
    while (i < k) {
      val prefix = pre(i)
      val suffix = sl(i)
      if (prefix < 0 || prefix > valueLen)
        throw new DecodeException(s"DELTA_BYTE_ARRAY prefix length $prefix outside [0, $valueLen] (previous value)")
      val len = prefix.toLong + suffix
      if (fixedLength >= 0 && len != fixedLength)
        throw new DecodeException(s"DELTA_BYTE_ARRAY value of $len bytes in a FIXED_LEN_BYTE_ARRAY($fixedLength) column")
      if (len > Int.MaxValue - 8) throw new DecodeException(s"DELTA_BYTE_ARRAY value of $len bytes is too long")
      if (value.length < len) {
        val grown = new Array[Byte](math.max(len.toInt, math.min(value.length.toLong * 2, Int.MaxValue - 8).toInt))
        System.arraycopy(value, 0, grown, 0, prefix)
        value = grown
      }
      System.arraycopy(bytes, p, value, prefix, suffix)
      p += suffix
      valueLen = len.toInt
      if (v != null) v.putByteArray(rowId + i, value, 0, valueLen)
      else if (sink != null) sink.accept(rowId + i, value, 0, valueLen)
      i += 1
    }
    suffixes.advanceTo(p)
  }

  override def skip(n: Int): Unit = {
    if (n < 0 || n > prefixes.remainingCount)
      throw new DecodeException(s"DELTA_BYTE_ARRAY values ended early: need $n values, ${prefixes.remainingCount} remain")
    if (n == prefixes.remainingCount) {
      // Nothing after this is read: no value to rebuild.
      prefixes.skip(n)
      suffixes.skip(n)
      valueLen = 0
      return
    }
    var done = 0
    while (done < n) {
      val k = math.min(n - done, Chunk)
      decode(k, null, null, 0)
      done += k
    }
  }

  override def readBinaries(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    var done = 0
    while (done < n) {
      val k = math.min(n - done, Chunk)
      decode(k, v, null, rowId + done)
      done += k
    }
  }

  override def readBinaryValues(n: Int, sink: BinarySink, rowId: Int): Unit = {
    var done = 0
    while (done < n) {
      val k = math.min(n - done, Chunk)
      decode(k, null, sink, rowId + done)
      done += k
    }
  }
}
