package lmspark.scan

import lmspark.selection.{RowSelection, RunsBuilder}
import lmspark.shim.MarkedRows

/**
 * The rows of one file a table format marks ([[MarkedRows]]: a deletion vector's deleted rows, or
 * the only rows to keep), as selections of its row groups' rows: the reader intersects a row
 * group's selection with [[keptWithin]] before anything is decoded, so a dropped row is never
 * decoded in any column, and a page holding no kept row is neither fetched nor decompressed.
 *
 * Invariant: `marks.rows` is sorted ascending (duplicates are tolerated: a row is marked or not).
 */
final class RowMarks(marks: MarkedRows) {
  private[this] val rows = marks.rows

  /** The kept rows among the `rowCount` rows from file row `start` (a row group's), as a selection
    * of the row group's rows; None when every one of them is kept. */
  def keptWithin(start: Long, rowCount: Long): Option[RowSelection] = {
    var i = lowerBound(start)
    val end = lowerBound(start + rowCount)
    if (i == end) return if (marks.keepMarked) Some(RowSelection.none(rowCount)) else None
    val keep = marks.keepMarked
    val b = new RunsBuilder
    var pos = 0L
    while (i < end) {
      val row = rows(i) - start
      if (row >= pos) {
        b.add(selected = !keep, row - pos)
        b.add(selected = keep, 1)
        pos = row + 1
      }
      i += 1
    }
    b.add(selected = !keep, rowCount - pos)
    Some(b.result())
  }

  /** The first index whose row is at least `v`. */
  private def lowerBound(v: Long): Int = {
    var lo = 0
    var hi = rows.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (rows(mid) < v) lo = mid + 1 else hi = mid
    }
    lo
  }
}
