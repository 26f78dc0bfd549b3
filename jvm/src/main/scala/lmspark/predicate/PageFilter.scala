package lmspark.predicate

import lmspark.selection.RowRanges

/** One column's page index over a row group, converted and checked: page `i` covers rows
  * `[firstRow(i), endRow(i))` and `stats(i)` holds for them. */
final case class ColumnPages(firstRow: Array[Long], endRow: Array[Long], stats: IndexedSeq[ColumnStats])

/** Page-index filtering: the rows of a row group that may pass a predicate, from the page
  * statistics of the columns it reads (a leaf keeps the pages not proven FALSE; AND intersects,
  * OR unions; a column without a page index keeps every row). */
object PageFilter {
  def candidateRows(p: Predicate, rowCount: Long, pages: Int => Option[ColumnPages]): RowRanges =
    RowRanges.single(0, rowCount) // TODO(predicate helper)
}
