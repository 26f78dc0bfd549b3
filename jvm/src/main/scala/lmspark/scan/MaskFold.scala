package lmspark.scan

import org.apache.spark.sql.vectorized.ColumnVector

import lmspark.decode.LittleEndian

/** Folds one batch's filter results into the filter-first pass's mask over the selected rows:
  * batch row `i` is mask bit `at + i`, ORed with the row's result. Results gather in a register,
  * eight rows at a time where the rows allow it, and reach the mask a word at a time.
  *
  * Invariants: only bits `[at, at + n)` of `mask` are written (ORed), so the caller's earlier bits
  * are kept; a row's bit is set exactly when its result is TRUE (bit 0 of a result byte, or the
  * dictionary entry's result for its id, or the NULL result on a NULL row). */
private[scan] object MaskFold {
  /** Bit 0 of each of 8 bytes. */
  private final val Lows = 0x0101010101010101L
  /** Multiplying the 8 bits at 8j (j < 8) by this brings bit 8j to bit 56 + j, with no carries:
    * the products' bit positions 8j + 56 - 7i are distinct for distinct (i, j). */
  private final val Gather = 0x0102040810204080L

  /** Bit 0 of `pass(i)`, `i < n`. */
  def bytes(pass: Array[Byte], n: Int, mask: Array[Long], at: Long): Unit = {
    val f = new Folder(mask, at)
    var i = 0
    while (i + 8 <= n) {
      f.put8(((LittleEndian.int64(pass, i) & Lows) * Gather) >>> 56)
      i += 8
    }
    while (i < n) { f.put1(pass(i) & 1L); i += 1 }
    f.flush()
  }

  /** `passing(ids(i))` (each 0 or 1), or `nullResult` where `v` is NULL (whose id is never read),
    * `i < n`: a dictionary-encoded batch tested id by id with no result array in between. */
  def ids(v: ColumnVector, ids: ColumnVector, passing: Array[Byte], nullResult: Boolean, n: Int,
      mask: Array[Long], at: Long): Unit = {
    val f = new Folder(mask, at)
    var i = 0
    if (!v.hasNull) {
      while (i + 8 <= n) {
        f.put8(passing(ids.getInt(i)) | passing(ids.getInt(i + 1)) << 1 | passing(ids.getInt(i + 2)) << 2 |
          passing(ids.getInt(i + 3)) << 3 | passing(ids.getInt(i + 4)) << 4 | passing(ids.getInt(i + 5)) << 5 |
          passing(ids.getInt(i + 6)) << 6 | passing(ids.getInt(i + 7)) << 7)
        i += 8
      }
      while (i < n) { f.put1(passing(ids.getInt(i))); i += 1 }
    } else {
      val onNull = if (nullResult) 1L else 0L
      while (i < n) { f.put1(if (v.isNullAt(i)) onNull else passing(ids.getInt(i))); i += 1 }
    }
    f.flush()
  }

  /** Bit 0 of `pass(i)` ANDed with bit `rows(i)` of `alive`, `i < n`: the batch was decoded on a
    * wider walk than the selection, and `alive` holds the selection's rows. */
  def alive(pass: Array[Byte], rows: Array[Int], alive: Array[Long], n: Int, mask: Array[Long], at: Long): Unit = {
    val f = new Folder(mask, at)
    var i = 0
    while (i < n) {
      val r = rows(i)
      f.put1(pass(i) & (alive(r >>> 6) >>> (r & 63)) & 1L)
      i += 1
    }
    f.flush()
  }

  /** The register: `acc` holds bits `[0, bit)` of mask word `word` not yet written. */
  private final class Folder(mask: Array[Long], at: Long) {
    private[this] var word = (at >>> 6).toInt
    private[this] var bit = (at & 63).toInt
    private[this] var acc = 0L

    /** One row's result, 0 or 1. */
    @inline def put1(b: Long): Unit = {
      acc |= b << bit
      bit += 1
      if (bit == 64) { mask(word) |= acc; word += 1; bit = 0; acc = 0L }
    }

    /** Eight rows' results, row j in bit j (bits 8 and up clear). */
    @inline def put8(b8: Long): Unit = {
      acc |= b8 << bit
      bit += 8
      if (bit >= 64) {
        mask(word) |= acc
        word += 1
        bit -= 64
        acc = if (bit == 0) 0L else b8 >>> (8 - bit)
      }
    }

    def flush(): Unit = if (bit != 0) mask(word) |= acc
  }
}
