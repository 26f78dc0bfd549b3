package lmspark.decode

/** The state every PLAIN decoder shares: the page's value bytes and a read position.
  * Invariant: `offset <= pos <= end` for the `[offset, offset + length)` given to `init`. */
abstract class PlainBytesDecoder extends ValuesDecoder {
  protected[this] var bytes: Array[Byte] = _
  protected[this] var pos: Int = 0
  protected[this] var end: Int = 0

  override def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    this.bytes = bytes
    this.pos = offset
    this.end = offset + length
  }
}
