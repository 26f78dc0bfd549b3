package lmspark.scan

import lmspark.column.RowMarkReader
import lmspark.selection.{RowSelection, RunsBuilder}
import lmspark.shim.MarkedRows

/**
 * The rows of one file a table format marks ([[MarkedRows]]: a deletion vector's deleted rows, or
 * the only rows to keep), as selections of its row groups' rows: the reader intersects a row
 * group's selection with [[keptWithin]] before anything is decoded, so a dropped row left out is
 * never decoded in any column, and a page holding no kept row is neither fetched nor decompressed.
 * Where the format flags dropped rows in a column of its own ([[lmspark.shim.TableFiles.markColumn]]),
 * short runs of dropped rows may stay in the selection, flagged by [[reader]], for the format's own
 * filter above the scan to drop.
 *
 * The rows are loaded when a row group is first decided to be read ([[RowGroupPruner]]), so a
 * split whose row groups metadata prunes never loads its file's deletion vector.
 *
 * Invariant: `marks.rows` is sorted ascending (duplicates are tolerated: a row is marked or not).
 */
final class RowMarks(marks: MarkedRows) {

  /** The rows among the `rowCount` rows from file row `start` (a row group's) that are not in a run
    * of at least `minDropped` dropped rows, as a selection of the row group's rows; None when it
    * selects every row. With `minDropped` 1, exactly the kept rows. */
  def keptWithin(start: Long, rowCount: Long, minDropped: Int = 1): Option[RowSelection] = {
    val b = new RunsBuilder
    var pos = 0L // the end of the last run left out
    var any = false
    forEachDroppedRun(start, rowCount) { (from, until) =>
      if (until - from >= minDropped) {
        b.add(selected = true, from - pos)
        b.add(selected = false, until - from)
        pos = until
        any = true
      }
    }
    if (!any) None
    else { b.add(selected = true, rowCount - pos); Some(b.result()) }
  }

  /** How many of the `rowCount` rows from file row `start` the marks drop. */
  def droppedWithin(start: Long, rowCount: Long): Long = {
    val rows = marks.rows
    var marked = 0L
    var i = RowMarkReader.lowerBound(rows, start)
    val end = RowMarkReader.lowerBound(rows, start + rowCount)
    while (i < end) { if (i == 0 || rows(i) != rows(i - 1)) marked += 1; i += 1 }
    if (marks.keepMarked) rowCount - marked else marked
  }

  /** The mark column's reader for the row group whose first row is file row `firstRow`. */
  def reader(firstRow: Long): RowMarkReader = new RowMarkReader(marks.rows, marks.keepMarked, firstRow)

  /** Calls `f(from, until)` for each maximal run of dropped rows among the `rowCount` rows from file
    * row `start`, as row-group rows, in order. */
  private def forEachDroppedRun(start: Long, rowCount: Long)(f: (Long, Long) => Unit): Unit = {
    val rows = marks.rows
    var i = RowMarkReader.lowerBound(rows, start)
    val end = RowMarkReader.lowerBound(rows, start + rowCount)
    if (marks.keepMarked) {
      // The gaps between the marked (kept) rows are dropped.
      var pos = 0L
      while (i < end) {
        val row = rows(i) - start
        if (row > pos) f(pos, row)
        pos = math.max(pos, row + 1)
        i += 1
      }
      if (pos < rowCount) f(pos, rowCount)
    } else {
      while (i < end) {
        val from = rows(i) - start
        var until = from + 1
        i += 1
        while (i < end && rows(i) - start <= until) { until = math.max(until, rows(i) - start + 1); i += 1 }
        f(from, until)
      }
    }
  }
}
