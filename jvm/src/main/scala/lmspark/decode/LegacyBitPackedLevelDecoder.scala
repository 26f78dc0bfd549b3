package lmspark.decode

/** The deprecated BIT_PACKED level encoding of old data page v1 writers: `numValues` values of
  * `bitWidth` bits packed most-significant-bit first, no length prefix (the caller computes the
  * byte length as `ceil(numValues * bitWidth / 8)`). Invariant: `bitPos` never passes `endBit`. */
final class LegacyBitPackedLevelDecoder extends LevelDecoder {
  private[this] var bytes: Array[Byte] = _
  private[this] var bitPos: Long = 0L
  private[this] var endBit: Long = 0L
  private[this] var bitWidth: Int = 0

  def init(bytes: Array[Byte], offset: Int, length: Int, bitWidth: Int): Unit = {
    if (bitWidth < 0 || bitWidth > 32) throw new DecodeException(s"invalid BIT_PACKED bit width $bitWidth")
    this.bytes = bytes
    this.bitPos = offset.toLong * 8
    this.endBit = (offset.toLong + length) * 8
    this.bitWidth = bitWidth
  }

  private def next(): Int = {
    if (bitPos + bitWidth > endBit) throw new DecodeException("BIT_PACKED levels ended before all values were read")
    var v = 0
    var i = 0
    while (i < bitWidth) {
      val b = bytes((bitPos >>> 3).toInt)
      v = (v << 1) | ((b >>> (7 - (bitPos & 7).toInt)) & 1)
      bitPos += 1
      i += 1
    }
    v
  }

  override def readInts(n: Int, dst: Array[Int], dstOff: Int): Unit = {
    var i = 0
    while (i < n) { dst(dstOff + i) = next(); i += 1 }
  }

  override def skipCounting(n: Int, value: Int): Int = {
    var i = 0
    var c = 0
    while (i < n) { if (next() == value) c += 1; i += 1 }
    c
  }

  override def skip(n: Int): Unit = {
    val bits = n.toLong * bitWidth
    if (bitPos + bits > endBit) throw new DecodeException("BIT_PACKED levels ended before all values were read")
    bitPos += bits
  }
}
