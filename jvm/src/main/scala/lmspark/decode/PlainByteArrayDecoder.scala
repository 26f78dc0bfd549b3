package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** PLAIN BYTE_ARRAY: each value is a 4-byte little-endian length then that many bytes. Skipping
  * must walk the lengths but copies nothing. Invariant: `offset <= pos <= end`. */
final class PlainByteArrayDecoder extends PlainBytesDecoder {

  /** Validates the value at `pos` and returns its length. */
  @inline private def nextLength(): Int = {
    if (end - pos < 4) throw new DecodeException(s"PLAIN BYTE_ARRAY length truncated (${end - pos} bytes remain)")
    val len = LittleEndian.int32(bytes, pos)
    if (len < 0) throw new DecodeException(s"PLAIN BYTE_ARRAY has negative length $len")
    if (len > end - pos - 4)
      throw new DecodeException(s"PLAIN BYTE_ARRAY value of $len bytes runs past the page (${end - pos - 4} remain)")
    len
  }

  override def skip(n: Int): Unit = {
    var i = 0
    while (i < n) { val len = nextLength(); pos += 4 + len; i += 1 }
  }

  override def readBinaries(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    var i = 0
    while (i < n) {
      val len = nextLength()
      v.putByteArray(rowId + i, bytes, pos + 4, len)
      pos += 4 + len
      i += 1
    }
  }

  override def readBinaryValues(n: Int, sink: BinarySink, rowId: Int): Unit = {
    var i = 0
    while (i < n) {
      val len = nextLength()
      sink.accept(rowId + i, bytes, pos + 4, len)
      pos += 4 + len
      i += 1
    }
  }
}
