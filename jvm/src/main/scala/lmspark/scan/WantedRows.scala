package lmspark.scan

import lmspark.selection.{RowSelection, RunsBuilder}

/**
 * The rows of one file split a read must yield, and no others: row ordinals counted over the
 * split's rows (its row groups' rows, in file order, as a read without a predicate yields them).
 * A top-k read ([[lmspark.plan.TopKRead]]) names the rows it kept this way.
 *
 * Invariant: `ordinals` is strictly increasing and non-negative.
 */
final class WantedRows(ordinals: Array[Long]) extends Serializable {
  require(ordinals.indices.forall(i => ordinals(i) >= 0 && (i == 0 || ordinals(i - 1) < ordinals(i))),
    "wanted row ordinals must be distinct, sorted and non-negative")

  def count: Int = ordinals.length

  /** The wanted rows among the `rowCount` rows from ordinal `start` (a row group's), as a selection
    * of that row group's rows; None when there is none. */
  def within(start: Long, rowCount: Long): Option[RowSelection] = {
    var i = lowerBound(start)
    val end = lowerBound(start + rowCount)
    if (i == end) return None
    val b = new RunsBuilder
    var pos = 0L
    while (i < end) {
      val row = ordinals(i) - start
      b.add(selected = false, row - pos)
      b.add(selected = true, 1)
      pos = row + 1
      i += 1
    }
    b.add(selected = false, rowCount - pos)
    Some(b.result())
  }

  /** The first index whose ordinal is at least `v`. */
  private def lowerBound(v: Long): Int = {
    val i = java.util.Arrays.binarySearch(ordinals, v)
    if (i >= 0) i else -i - 1
  }
}
