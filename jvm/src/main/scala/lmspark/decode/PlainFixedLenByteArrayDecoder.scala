package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** PLAIN FIXED_LEN_BYTE_ARRAY: values of `typeLength` bytes back to back.
  * Invariant: `offset <= pos <= end`. */
final class PlainFixedLenByteArrayDecoder(typeLength: Int) extends PlainBytesDecoder {
  require(typeLength >= 0, s"negative type length $typeLength")

  @inline private def need(n: Int): Int = {
    val len = n.toLong * typeLength
    if (n < 0 || pos + len > end)
      throw new DecodeException(s"PLAIN FIXED_LEN_BYTE_ARRAY values ended early: $n values of $typeLength " +
        s"bytes need $len bytes, ${end - pos} remain")
    len.toInt
  }

  override def skip(n: Int): Unit = pos += need(n)

  override def readBinaries(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    need(n)
    var i = 0
    while (i < n) { v.putByteArray(rowId + i, bytes, pos, typeLength); pos += typeLength; i += 1 }
  }

  override def readBinaryValues(n: Int, sink: BinarySink, rowId: Int): Unit = {
    need(n)
    var i = 0
    while (i < n) { sink.accept(rowId + i, bytes, pos, typeLength); pos += typeLength; i += 1 }
  }
}
