package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** PLAIN_DICTIONARY / RLE_DICTIONARY data pages: one byte of bit width, then dictionary ids in the
  * RLE / bit-packed hybrid. Reads either decode ids into a reused int buffer and look the values up
  * in the chunk's [[Dictionary]], or (`readIds`) hand the checked ids themselves to a Spark
  * dictionary ids vector; skips pass over ids without lookups. Every id read, by either path, is
  * checked against the dictionary's size. */
final class DictionaryIdsDecoder(dictionary: Dictionary) extends DictionaryLookupDecoder(dictionary) {
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

  override protected def nextIds(n: Int): Array[Int] = {
    if (ids.length < n) ids = new Array[Int](math.max(n, ids.length * 2))
    rle.readInts(n, ids, 0)
    ids
  }

  override def skip(n: Int): Unit = rle.skip(n)

  /** The next `n` ids (not values) into rows `[rowId, rowId + n)` of `out`, a dictionary ids
    * vector (`WritableColumnVector.reserveDictionaryIds`). An id outside `[0, dictionary.size)`
    * raises [[DecodeException]] here, so a vector decoded lazily later never holds one. */
  def readIds(n: Int, out: WritableColumnVector, rowId: Int): Unit = {
    val a = nextIds(n)
    val size = dictionary.size
    // `id | (size - 1 - id)` is negative exactly when id < 0 or id >= size (no overflow for
    // size >= 0): one OR per id and no branch in the loop; the bad id is looked for only when
    // there is one.
    var bad = 0
    var i = 0
    while (i < n) {
      val id = a(i)
      bad |= id | (size - 1 - id)
      i += 1
    }
    if (bad < 0) {
      val id = a.iterator.take(n).find(id => id < 0 || id >= size).get
      throw new DecodeException(s"dictionary id $id out of range [0, $size)")
    }
    out.putInts(rowId, n, a, 0)
  }
}
