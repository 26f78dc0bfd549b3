package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** PLAIN_DICTIONARY / RLE_DICTIONARY data pages: one byte of bit width, then dictionary ids in the
  * RLE / bit-packed hybrid. Reads decode ids into a reused int buffer and look the values up in the
  * chunk's [[Dictionary]]; skips pass over ids without lookups. */
final class DictionaryIdsDecoder(dictionary: Dictionary) extends ValuesDecoder {
  private[this] val rle = new RleBitPackedDecoder
  private[this] var ids: Array[Int] = new Array[Int](256)

  override def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    if (length <= 0) {
      if (numValues > 0) throw new DecodeException("dictionary-encoded page has no bit width byte")
      rle.init(bytes, offset, 0, 0)
    } else {
      val bitWidth = bytes(offset) & 0xff
      if (bitWidth > 32) throw new DecodeException(s"dictionary id bit width $bitWidth > 32")
      rle.init(bytes, offset + 1, length - 1, bitWidth)
    }
  }

  private def decodeIds(n: Int): Array[Int] = {
    if (ids.length < n) ids = new Array[Int](math.max(n, ids.length * 2))
    rle.readInts(n, ids, 0)
    ids
  }

  override def skip(n: Int): Unit = rle.skip(n)

  override def readInts(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeInts(decodeIds(n), n, v, rowId)
  override def readLongs(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeLongs(decodeIds(n), n, v, rowId)
  override def readFloats(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeFloats(decodeIds(n), n, v, rowId)
  override def readDoubles(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeDoubles(decodeIds(n), n, v, rowId)
  override def readBinaries(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeBinaries(decodeIds(n), n, v, rowId)
  override def readIntArray(n: Int, dst: Array[Int], dstOff: Int): Unit =
    dictionary.writeIntArray(decodeIds(n), n, dst, dstOff)
  override def readLongArray(n: Int, dst: Array[Long], dstOff: Int): Unit =
    dictionary.writeLongArray(decodeIds(n), n, dst, dstOff)
  override def readBinaryValues(n: Int, sink: BinarySink, rowId: Int): Unit =
    dictionary.writeBinaryValues(decodeIds(n), n, sink, rowId)
}
