package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** RLE BOOLEAN values (as parquet v2 writers emit): a 4-byte little-endian length, then the
  * RLE / bit-packed hybrid with bit width 1. RLE runs are written with one `putBooleans`. */
final class RleBooleanDecoder extends ValuesDecoder {
  private[this] val rle = new RleBitPackedDecoder

  override def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    if (length < 4) {
      if (numValues > 0) throw new DecodeException(s"RLE BOOLEAN data of $length bytes has no length prefix")
      rle.init(bytes, offset, 0, 1)
    } else {
      val len = LittleEndian.int32(bytes, offset)
      if (len < 0 || len > length - 4)
        throw new DecodeException(s"RLE BOOLEAN length prefix $len does not fit the page (${length - 4} bytes)")
      rle.init(bytes, offset + 4, len, 1)
    }
  }

  override def skip(n: Int): Unit = rle.skip(n)

  override def readBooleans(n: Int, v: WritableColumnVector, rowId: Int): Unit = rle.readBooleans(n, v, rowId)
}
