package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** PLAIN INT32 / FLOAT (`width` 4) or INT64 / DOUBLE (`width` 8): little-endian values back to back.
  * Reads are bulk little-endian copies into the vector; skips only move `pos`.
  * Invariant: `offset <= pos <= end`. */
final class PlainFixedWidthDecoder(width: Int) extends PlainBytesDecoder {
  require(width == 4 || width == 8, s"width must be 4 or 8, was $width")

  @inline private def need(n: Int): Int = {
    val len = n.toLong * width
    if (n < 0 || pos + len > end)
      throw new DecodeException(s"PLAIN values ended early: $n values of $width bytes need $len bytes, " +
        s"${end - pos} remain")
    len.toInt
  }

  override def skip(n: Int): Unit = pos += need(n)

  override def readInts(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    val len = need(n); v.putIntsLittleEndian(rowId, n, bytes, pos); pos += len
  }

  override def readLongs(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    val len = need(n); v.putLongsLittleEndian(rowId, n, bytes, pos); pos += len
  }

  override def readFloats(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    val len = need(n); v.putFloatsLittleEndian(rowId, n, bytes, pos); pos += len
  }

  override def readDoubles(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    val len = need(n); v.putDoublesLittleEndian(rowId, n, bytes, pos); pos += len
  }

  override def readIntArray(n: Int, dst: Array[Int], dstOff: Int): Unit = {
    val len = need(n)
    var i = 0
    var p = pos
    while (i < n) { dst(dstOff + i) = LittleEndian.int32(bytes, p); p += 4; i += 1 }
    pos += len
  }

  override def readLongArray(n: Int, dst: Array[Long], dstOff: Int): Unit = {
    val len = need(n)
    var i = 0
    var p = pos
    while (i < n) { dst(dstOff + i) = LittleEndian.int64(bytes, p); p += 8; i += 1 }
    pos += len
  }
}
