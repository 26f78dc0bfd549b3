package lmspark.testutil

/** Wall time a differential suite spends writing and loading its files, computing the expected rows
  * (the reference) and running lmspark, for the summary it prints at the end. Not thread-safe: one
  * per suite, used from the thread running its tests. */
final class DiffTimes {
  var loadNanos = 0L
  var referenceNanos = 0L
  var lmsparkNanos = 0L

  /** Runs `body`, counting its wall time as the reference's (`reference`) or lmspark's. */
  def timed[T](reference: Boolean)(body: => T): T = {
    val t0 = System.nanoTime()
    try body
    finally if (reference) referenceNanos += System.nanoTime() - t0 else lmsparkNanos += System.nanoTime() - t0
  }

  /** "writing and loading files …, expected rows …, lmspark runs …", in seconds. */
  def summary: String =
    f"writing and loading files ${loadNanos / 1e9}%.1f s, expected rows ${referenceNanos / 1e9}%.1f s, " +
      f"lmspark runs ${lmsparkNanos / 1e9}%.1f s"
}
