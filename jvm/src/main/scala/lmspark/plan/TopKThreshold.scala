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
 * Invariant: after the same rows were [[offered]] here and to the top-k, this threshold compares
 * equal to the top-k's. Not thread-safe.
 */
final class TopKThreshold(k: Int, ordering: Ordering[InternalRow]) {
  private[this] val kept = new Array[InternalRow](math.max(2 * k, 1))
  private[this] var size = 0
  private[this] var threshold: InternalRow = _

  /** Whether the top-k would keep `row` now (`row` may be a reused view: it is not held). */
  def admits(row: InternalRow): Boolean = k > 0 && (size < k || ordering.compare(row, threshold) < 0)

  /** Records `row` (a row [[admits]] let through, not reused afterwards) as offered to the top-k. */
  def offered(row: InternalRow): Unit = {
    kept(size) = row
    size += 1
    if (size <= k) {
      if (threshold == null || ordering.compare(row, threshold) > 0) threshold = row
    } else if (size == 2 * k) {
      java.util.Arrays.sort(kept, 0, size, ordering)
      java.util.Arrays.fill(kept.asInstanceOf[Array[AnyRef]], k, size, null)
      size = k
      threshold = kept(k - 1)
    }
  }
}
