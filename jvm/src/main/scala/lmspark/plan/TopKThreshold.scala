package lmspark.plan

import org.apache.spark.sql.catalyst.InternalRow

/**
 * Which rows Spark's per-task top-k ([[org.apache.spark.sql.lmspark.SparkTopK]], Guava's `leastOf`)
 * would keep in its buffer, so that the others need not be built or offered at all. That top-k
 * keeps its first `k` rows, raising its threshold to the largest of them; afterwards it keeps a row
 * only when it sorts strictly below the threshold, and when `2k` rows are kept it cuts them to the
 * `k` least and makes the largest of those the threshold. A row it does not keep changes nothing in
 * it, so offering only the rows [[admits]] lets through gives the same result, ties included. This
 * follows the threshold's value only (which of equal rows is kept does not change a comparison).
 *
 * It also notes ties at the cut ([[tiedWith]]): a row left out (not admitted, or cut when the
 * buffer is trimmed) that compares equal to the row at the cut then. Which of such rows Spark's
 * top-k keeps depends on every row offered and their order; without one at the final cut, and
 * with no two kept rows equal, its result is the only correct one whatever the order.
 *
 * Invariant: after the same rows were [[offered]] here and to the top-k, this threshold compares
 * equal to the top-k's. Not thread-safe.
 */
final class TopKThreshold(k: Int, ordering: Ordering[InternalRow]) {
  private[this] val kept = new Array[InternalRow](math.max(2 * k, 1))
  private[this] var size = 0
  private[this] var threshold: InternalRow = _
  /** The latest cut a left-out row compared equal to (cuts only get lower: the latest is the least). */
  private[this] var tie: InternalRow = _

  /** Whether the top-k would keep `row` now (`row` may be a reused view: it is not held). */
  def admits(row: InternalRow): Boolean = k > 0 && (size < k || {
    val c = ordering.compare(row, threshold)
    if (c == 0) tie = threshold
    c < 0
  })

  /** The rows kept, sorted, as of `sortedAt` rows offered (null: not yet sorted). */
  private[this] var sorted: Array[InternalRow] = _
  private[this] var offers = 0L
  private[this] var sortedAt = -1L

  /** Whether `k` rows were kept, so that the top-k of the rows so far has a last row ([[cut]]). */
  def full: Boolean = k > 0 && size >= k

  /** The top-k's threshold (only when [[full]]): a row that does not sort strictly before it is not
    * kept. */
  def current: InternalRow = threshold

  /** The `k`-th row of the rows offered so far (only when [[full]]): the top-k's last row if no
    * other row came; every row of the final top-k sorts at or before it. */
  def cut: InternalRow = keptSorted()(k - 1)

  /** Whether a row left out, now or by the final cut to `k` rows, compares equal to `last` (the
    * top-k's last row, or the current [[cut]]). */
  def tiedWith(last: InternalRow): Boolean = {
    if (tie != null && ordering.compare(tie, last) == 0) return true
    if (size <= k) return false
    val s = keptSorted()
    ordering.compare(s(k - 1), s(k)) == 0
  }

  private def keptSorted(): Array[InternalRow] = {
    if (sortedAt != offers) {
      sorted = java.util.Arrays.copyOf(kept, size)
      java.util.Arrays.sort(sorted, ordering)
      sortedAt = offers
    }
    sorted
  }

  /** Records `row` (a row [[admits]] let through, not reused afterwards) as offered to the top-k. */
  def offered(row: InternalRow): Unit = {
    kept(size) = row
    size += 1
    offers += 1
    if (size <= k) {
      if (threshold == null || ordering.compare(row, threshold) > 0) threshold = row
    } else if (size == 2 * k) {
      java.util.Arrays.sort(kept, 0, size, ordering)
      if (ordering.compare(kept(k - 1), kept(k)) == 0) tie = kept(k - 1)
      java.util.Arrays.fill(kept.asInstanceOf[Array[AnyRef]], k, size, null)
      size = k
      threshold = kept(k - 1)
    }
  }
}
