package lmspark.decode

import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** A column chunk's dictionary, over its (PLAIN) dictionary page's bytes, so data pages can look
  * values up by id: fixed-width entries are read per id where they stand ([[FixedWidthDictionary]]),
  * binaries through offsets into the page's bytes. Immutable: a dictionary keeps the page's array
  * instead of copying it, which is safe because no page array a [[lmspark.io.PageSource]] hands out
  * is ever written again. Every `write*` checks each id against `size` and raises
  * [[DecodeException]] when out of range. Kept independent of vectors' dictionary support;
  * `SparkDictionary` adapts it to Spark's. */
abstract class Dictionary(val size: Int) {

  /** The bytes its value arrays take on the heap (what a cache charges for keeping it). */
  def heapBytes: Long

  def writeInts(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("INT32")
  def writeLongs(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("INT64")
  def writeFloats(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("FLOAT")
  def writeDoubles(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("DOUBLE")
  def writeBinaries(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = unsupported("binary")
  def writeIntArray(ids: Array[Int], n: Int, dst: Array[Int], dstOff: Int): Unit = unsupported("INT32")
  def writeLongArray(ids: Array[Int], n: Int, dst: Array[Long], dstOff: Int): Unit = unsupported("INT64")
  def writeBinaryValues(ids: Array[Int], n: Int, sink: BinarySink, rowId: Int): Unit = unsupported("binary")

  @inline protected final def check(id: Int): Int = {
    if (id < 0 || id >= size) throw new DecodeException(s"dictionary id $id out of range [0, $size)")
    id
  }

  private def unsupported(what: String): Nothing =
    throw new UnsupportedOperationException(s"${getClass.getSimpleName} cannot produce $what values")
}

/** A dictionary of fixed-width numbers left in its PLAIN page's bytes: entry `id` is the `width`
  * little-endian bytes at `offset + width * id` of `bytes`, read per id when a row looks it up, so a
  * chunk whose rows use a few entries never decodes the rest (a selective scan reads a dictionary of
  * 100,000 entries for a few dozen rows). Nothing is ever decoded into a second array, so the heap
  * it holds is the page's array alone. Invariant: `bytes[offset, offset + width * size)` lies inside
  * `bytes` (checked by [[Dictionary.decodePlain]]) and is never written again. */
sealed abstract class FixedWidthDictionary(protected val bytes: Array[Byte], protected val offset: Int, n: Int)
    extends Dictionary(n) {
  override def heapBytes: Long = bytes.length.toLong
}

/** INT32 dictionary. */
final class IntDictionary(page: Array[Byte], at: Int, n: Int) extends FixedWidthDictionary(page, at, n) {
  /** Entry `id`, which the caller checked against `size`. */
  @inline def value(id: Int): Int = LittleEndian.int32(bytes, offset + (id << 2))
  override def writeInts(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    var i = 0
    while (i < n) { v.putInt(rowId + i, value(check(ids(i)))); i += 1 }
  }
  override def writeIntArray(ids: Array[Int], n: Int, dst: Array[Int], dstOff: Int): Unit = {
    var i = 0
    while (i < n) { dst(dstOff + i) = value(check(ids(i))); i += 1 }
  }
}

/** INT64 dictionary. */
final class LongDictionary(page: Array[Byte], at: Int, n: Int) extends FixedWidthDictionary(page, at, n) {
  /** Entry `id`, which the caller checked against `size`. */
  @inline def value(id: Int): Long = LittleEndian.int64(bytes, offset + (id << 3))
  override def writeLongs(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    var i = 0
    while (i < n) { v.putLong(rowId + i, value(check(ids(i)))); i += 1 }
  }
  override def writeLongArray(ids: Array[Int], n: Int, dst: Array[Long], dstOff: Int): Unit = {
    var i = 0
    while (i < n) { dst(dstOff + i) = value(check(ids(i))); i += 1 }
  }
}

/** FLOAT dictionary. */
final class FloatDictionary(page: Array[Byte], at: Int, n: Int) extends FixedWidthDictionary(page, at, n) {
  /** Entry `id`, which the caller checked against `size`. */
  @inline def value(id: Int): Float = java.lang.Float.intBitsToFloat(LittleEndian.int32(bytes, offset + (id << 2)))
  override def writeFloats(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    var i = 0
    while (i < n) { v.putFloat(rowId + i, value(check(ids(i)))); i += 1 }
  }
}

/** DOUBLE dictionary. */
final class DoubleDictionary(page: Array[Byte], at: Int, n: Int) extends FixedWidthDictionary(page, at, n) {
  /** Entry `id`, which the caller checked against `size`. */
  @inline def value(id: Int): Double = java.lang.Double.longBitsToDouble(LittleEndian.int64(bytes, offset + (id << 3)))
  override def writeDoubles(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    var i = 0
    while (i < n) { v.putDouble(rowId + i, value(check(ids(i)))); i += 1 }
  }
}

/** BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY dictionary: value `i` is `data[offsets(i), offsets(i + 1))`. */
final class BinaryDictionary(val offsets: Array[Int], val data: Array[Byte], val gap: Int = 0)
    extends Dictionary(offsets.length - 1) {
  /** Where entry `id` ends in `data`. */
  def end(id: Int): Int = offsets(id + 1) - gap
  override def heapBytes: Long = offsets.length * 4L + data.length
  override def writeBinaries(ids: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    var i = 0
    while (i < n) {
      val id = check(ids(i))
      val s = offsets(id)
      v.putByteArray(rowId + i, data, s, offsets(id + 1) - gap - s)
      i += 1
    }
  }
  override def writeBinaryValues(ids: Array[Int], n: Int, sink: BinarySink, rowId: Int): Unit = {
    var i = 0
    while (i < n) {
      val id = check(ids(i))
      val s = offsets(id)
      sink.accept(rowId + i, data, s, offsets(id + 1) - gap - s)
      i += 1
    }
  }
}

object Dictionary {

  /** Decodes `numValues` PLAIN values of `physicalType` (INT96 as 12-byte fixed-length values) from
    * `bytes[offset, offset + length)` (which the dictionary keeps: never to be written again). */
  def decodePlain(
      physicalType: PrimitiveTypeName,
      typeLengthOrZero: Int,
      numValues: Int,
      bytes: Array[Byte],
      offset: Int,
      length: Int): Dictionary = {
    if (numValues < 0) throw new DecodeException(s"dictionary has negative size $numValues")
    def needFixed(width: Int): Unit =
      if (numValues.toLong * width > length)
        throw new DecodeException(s"dictionary page of $length bytes is too short for $numValues values of " +
          s"$width bytes")
    physicalType match {
      case PrimitiveTypeName.INT32 => needFixed(4); new IntDictionary(bytes, offset, numValues)
      case PrimitiveTypeName.INT64 => needFixed(8); new LongDictionary(bytes, offset, numValues)
      case PrimitiveTypeName.FLOAT => needFixed(4); new FloatDictionary(bytes, offset, numValues)
      case PrimitiveTypeName.DOUBLE => needFixed(8); new DoubleDictionary(bytes, offset, numValues)
      case PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY | PrimitiveTypeName.INT96 =>
        val typeLength = if (physicalType == PrimitiveTypeName.INT96) 12 else typeLengthOrZero
        if (typeLength <= 0) throw new DecodeException(s"fixed-length values of invalid length $typeLength")
        needFixed(typeLength)
        val offsets = new Array[Int](numValues + 1)
        var i = 0
        while (i <= numValues) { offsets(i) = offset + i * typeLength; i += 1 }
        new BinaryDictionary(offsets, bytes)
      case PrimitiveTypeName.BINARY =>
        // Each value takes at least its 4-byte length: bounds the offsets array by the page. One pass
        // validates the lengths and notes where each value starts in the page's bytes, which the
        // dictionary keeps, length prefixes and all (entry i ends 4 bytes before entry i + 1 starts).
        needFixed(4)
        val offsets = new Array[Int](numValues + 1)
        val end = offset + length
        var p = offset
        var i = 0
        while (i < numValues) {
          if (end - p < 4) throw new DecodeException(s"dictionary page truncated at value $i of $numValues")
          val len = LittleEndian.int32(bytes, p)
          if (len < 0 || len > end - p - 4)
            throw new DecodeException(s"dictionary value $i has invalid length $len")
          offsets(i) = p + 4
          p += 4 + len
          i += 1
        }
        offsets(numValues) = p + 4
        new BinaryDictionary(offsets, bytes, gap = 4)
      case other =>
        throw new DecodeException(s"dictionary of physical type $other is not supported")
    }
  }
}
