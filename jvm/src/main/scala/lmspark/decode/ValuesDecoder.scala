package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** Receives binary values one by one (for writers that convert binaries, e.g. decimals). The
  * bytes are only valid during the call. */
trait BinarySink {
  def accept(rowId: Int, bytes: Array[Byte], offset: Int, length: Int): Unit
}

/** Decodes the non-null values of one data page. `init` points it at the page's value bytes;
  * `read*` writes the next `n` values at rows `[rowId, rowId + n)` of a vector with bulk calls;
  * `skip(n)` passes over `n` values doing as little work as the encoding allows.
  *
  * A decoder supports only the read methods of its physical type; the others throw
  * `UnsupportedOperationException` (the column reader factory never pairs them wrongly). Running
  * out of bytes raises [[DecodeException]]. */
abstract class ValuesDecoder {

  /** Points the decoder at `bytes[offset, offset + length)` holding at most `numValues` values. */
  def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit

  def skip(n: Int): Unit

  def readBooleans(n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("BOOLEAN")
  def readInts(n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("INT32")
  def readLongs(n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("INT64")
  def readFloats(n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("FLOAT")
  def readDoubles(n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("DOUBLE")
  def readBinaries(n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("binary")

  /** INT32 values into `dst[dstOff, dstOff + n)` (for writers that narrow or convert). */
  def readIntArray(n: Int, dst: Array[Int], dstOff: Int): Unit = unsupported("INT32")

  /** INT64 values into `dst[dstOff, dstOff + n)`. */
  def readLongArray(n: Int, dst: Array[Long], dstOff: Int): Unit = unsupported("INT64")

  /** Binary values handed to `sink` with row ids `rowId, rowId + 1, ...`. */
  def readBinaryValues(n: Int, sink: BinarySink, rowId: Int): Unit = unsupported("binary")

  protected final def unsupported(what: String): Nothing =
    throw new UnsupportedOperationException(s"${getClass.getSimpleName} cannot read $what values")
}
