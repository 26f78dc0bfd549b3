package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** DELTA_LENGTH_BYTE_ARRAY BYTE_ARRAY values: all lengths as one DELTA_BINARY_PACKED INT32
  * stream, then the values' bytes concatenated. Lengths are decoded lazily, at most [[Chunk]] at a
  * time into `lens`; `skip` decodes lengths only to move `pos` past their bytes (a skip to the end
  * decodes nothing). Also the suffix half of [[DeltaByteArrayDecoder]], through
  * [[nextLengths]] / [[position]] / [[advanceTo]].
  *
  * Invariants: `dataStart <= pos <= end`; every length handed out has been checked to be
  * non-negative and, together with the ones before it in the same call, to fit in `[pos, end)`. */
final class DeltaLengthByteArrayDecoder extends ValuesDecoder {
  import DeltaLengthByteArrayDecoder.Chunk

  private[this] val lengths = new DeltaBinaryPackedDecoder(32)
  private[this] var lens: Array[Int] = new Array[Int](Chunk)
  private[this] var bytes: Array[Byte] = _
  private[this] var pos: Int = 0
  private[this] var end: Int = 0

  override def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    lengths.init(bytes, offset, length, numValues)
    this.bytes = bytes
    this.pos = lengths.endOffset()
    this.end = offset + length
  }

  /** Values in the page according to the lengths header. */
  def valueCount: Int = lengths.totalCount

  /** Where the next value's bytes start. */
  private[decode] def position: Int = pos

  /** Moves past bytes already handed out by [[nextLengths]] (`p` between `pos` and `end`). */
  private[decode] def advanceTo(p: Int): Unit = pos = p

  /** The next `n` (at most [[Chunk]]) lengths, checked: non-negative, and together fitting the
    * bytes from `pos` on. Does not move `pos`. The returned array is reused. */
  private[decode] def nextLengths(n: Int): Array[Int] = {
    if (lens.length < n) lens = new Array[Int](n)
    val ls = lens
    lengths.readIntArray(n, ls, 0)
    var avail = end - pos
    var i = 0
    while (i < n) {
      val len = ls(i)
      if (len < 0) throw new DecodeException(s"DELTA_LENGTH_BYTE_ARRAY has negative length $len")
      if (len > avail)
        throw new DecodeException(s"DELTA_LENGTH_BYTE_ARRAY value of $len bytes runs past the page ($avail remain)")
      avail -= len
      i += 1
    }
    ls
  }

  override def skip(n: Int): Unit = {
    if (n < 0 || n > lengths.remainingCount)
      throw new DecodeException(s"DELTA_LENGTH_BYTE_ARRAY values ended early: need $n values, " +
        s"${lengths.remainingCount} remain")
    if (n == lengths.remainingCount) {
      // Nothing after this is read: no lengths to sum.
      lengths.skip(n)
      pos = end
      return
    }
    var done = 0
    while (done < n) {
      val k = math.min(n - done, Chunk)
      val ls = nextLengths(k)
      var sum = 0
      var i = 0
      while (i < k) { sum += ls(i); i += 1 } // cannot overflow: nextLengths checked the sum fits the page
      pos += sum
      done += k
    }
  }

  override def readBinaries(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    var done = 0
    while (done < n) {
      val k = math.min(n - done, Chunk)
      val ls = nextLengths(k)
      var p = pos
      var i = 0
      while (i < k) { v.putByteArray(rowId + done + i, bytes, p, ls(i)); p += ls(i); i += 1 }
      pos = p
      done += k
    }
  }

  override def readBinaryValues(n: Int, sink: BinarySink, rowId: Int): Unit = {
    var done = 0
    while (done < n) {
      val k = math.min(n - done, Chunk)
      val ls = nextLengths(k)
      var p = pos
      var i = 0
      while (i < k) { sink.accept(rowId + done + i, bytes, p, ls(i)); p += ls(i); i += 1 }
      pos = p
      done += k
    }
  }
}

object DeltaLengthByteArrayDecoder {
  /** Lengths decoded per step. */
  private[decode] val Chunk = 1024
}
