package lmspark.column

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/**
 * A table format's mark column for one row group (Delta's is-deleted column): a byte per row, 1
 * on a row the format drops and 0 on a row it keeps. The file's marked rows are `marked` (file
 * row indexes, sorted ascending); `keepMarked` says whether they are the rows kept (the others
 * dropped) or the rows dropped. It reads no page: `read` writes the marks of the next rows, `skip`
 * passes rows over, so it follows every selection as a column does.
 *
 * Invariants: `next` is the file index of the next row to read or skip; `at` is the index of the
 * first marked row at or after `next`.
 */
final class RowMarkReader(marked: Array[Long], keepMarked: Boolean, firstRow: Long) extends ColumnReader {
  private[this] var next = firstRow
  private[this] var at = RowMarkReader.lowerBound(marked, firstRow)
  private[this] val markedValue: Byte = if (keepMarked) 0 else 1
  private[this] val otherValue: Byte = if (keepMarked) 1 else 0

  override def read(n: Int, vector: WritableColumnVector): Unit = read(n, vector, 0)

  override def read(n: Int, vector: WritableColumnVector, rowId: Int): Unit = {
    vector.putBytes(rowId, n, otherValue)
    val end = next + n
    while (at < marked.length && marked(at) < end) {
      vector.putByte(rowId + (marked(at) - next).toInt, markedValue)
      at += 1
    }
    next = end
  }

  override def skip(n: Long): Unit = {
    next += n
    while (at < marked.length && marked(at) < next) at += 1
  }

  override def pagesRead: Int = 0

  override def bytesRead: Long = 0L

  override def close(): Unit = ()
}

object RowMarkReader {
  /** The first index of `sorted` whose value is at least `v`. */
  def lowerBound(sorted: Array[Long], v: Long): Int = {
    var lo = 0
    var hi = sorted.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (sorted(mid) < v) lo = mid + 1 else hi = mid
    }
    lo
  }
}
