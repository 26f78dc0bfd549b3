package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** PLAIN BOOLEAN: one bit per value, least significant bit first. Skips move the bit cursor only.
  * Invariant: `bitPos <= endBit`. */
final class PlainBooleanDecoder extends ValuesDecoder {
  private[this] var bytes: Array[Byte] = _
  private[this] var bitPos: Long = 0L
  private[this] var endBit: Long = 0L

  override def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    this.bytes = bytes
    this.bitPos = offset.toLong * 8
    this.endBit = (offset.toLong + length) * 8
  }

  @inline private def need(n: Int): Unit =
    if (n < 0 || bitPos + n > endBit)
      throw new DecodeException(s"PLAIN BOOLEAN values ended early: need $n bits, ${endBit - bitPos} remain")

  override def skip(n: Int): Unit = { need(n); bitPos += n }

  override def readBooleans(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    need(n)
    var i = 0
    var bp = bitPos
    val b = bytes
    while (i < n) {
      v.putBoolean(rowId + i, ((b((bp >>> 3).toInt) >>> (bp & 7).toInt) & 1) != 0)
      bp += 1
      i += 1
    }
    bitPos = bp
  }
}
