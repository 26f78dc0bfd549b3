package lmspark.predicate

import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String

/** Substring search of one fixed pattern in UTF-8 strings, byte for byte (UTF8_BINARY `contains`):
  * Boyer-Moore-Horspool over the string's bytes when they live in a byte array (on-heap vectors),
  * `UTF8String.contains` otherwise. Horspool looks at the byte under the pattern's last position and
  * shifts by how far that byte is from the pattern's end, so a 16-byte pattern reads a few bytes of
  * a typical string instead of every one.
  *
  * Invariants: `in(s) == s.contains(pattern)` for every string; the empty pattern is in every
  * string. Immutable after construction, so one instance serves every row. */
final class ByteSearch(pattern: UTF8String) {
  private[this] val p: Array[Byte] = pattern.getBytes
  private[this] val m = p.length
  private[this] val shift: Array[Int] = {
    val s = Array.fill(256)(math.max(m, 1))
    var j = 0
    while (j < m - 1) { s(p(j) & 0xff) = m - 1 - j; j += 1 }
    s
  }

  /** Whether the pattern occurs in `s`. */
  def in(s: UTF8String): Boolean = s.getBaseObject match {
    case bytes: Array[Byte] if m > 0 =>
      search(bytes, (s.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt, s.numBytes)
    case _ => s.contains(pattern)
  }

  /** Whether the pattern occurs in `t[off, off + len)`. */
  def search(t: Array[Byte], off: Int, len: Int): Boolean = {
    val last = p(m - 1)
    val end = off + len - m // last start position
    var i = off
    while (i <= end) {
      val c = t(i + m - 1)
      if (c == last) {
        var j = 0
        while (j < m - 1 && t(i + j) == p(j)) j += 1
        if (j == m - 1) return true
      }
      i += shift(c & 0xff)
    }
    false
  }
}
