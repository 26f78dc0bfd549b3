package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** Values looked up in a chunk's [[Dictionary]] by id: every `read*` takes the next `n` ids from
  * the subclass (`nextIds`) and writes the matching dictionary values with the dictionary's bulk
  * lookups, which check each id against the dictionary's size. Subclasses own where ids come from
  * (an encoded page, or ids already read into a vector). */
abstract class DictionaryLookupDecoder(val dictionary: Dictionary) extends ValuesDecoder {

  /** The next `n` ids, at `[0, n)` of the returned array (valid until the next call). */
  protected def nextIds(n: Int): Array[Int]

  override def readInts(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeInts(nextIds(n), n, v, rowId)
  override def readLongs(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeLongs(nextIds(n), n, v, rowId)
  override def readFloats(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeFloats(nextIds(n), n, v, rowId)
  override def readDoubles(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeDoubles(nextIds(n), n, v, rowId)
  override def readBinaries(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    dictionary.writeBinaries(nextIds(n), n, v, rowId)
  override def readIntArray(n: Int, dst: Array[Int], dstOff: Int): Unit =
    dictionary.writeIntArray(nextIds(n), n, dst, dstOff)
  override def readLongArray(n: Int, dst: Array[Long], dstOff: Int): Unit =
    dictionary.writeLongArray(nextIds(n), n, dst, dstOff)
  override def readBinaryValues(n: Int, sink: BinarySink, rowId: Int): Unit =
    dictionary.writeBinaryValues(nextIds(n), n, sink, rowId)
}
