package lmspark.scan

import scala.collection.mutable

/** What one file split's reader has learnt about its filters, and the per-row-group choice it makes from that:
  * read the row group filter-first (late materialization) or decode it whole.
  *
  * Learning: for every filtered column, the rows that entered its step and the rows that passed it,
  * over the row groups read filter-first so far; and the rows and runs of the selections those row
  * groups ended with. A column's selectivity is `(passed + 1) / (entered + 2)` (0.5 before anything is
  * seen).
  *
  * Order: filtered columns are decoded by increasing `cost / (1 - selectivity)`, cost being the
  * column's decoded bytes per row: cheap columns that remove many rows first (the classic rank of
  * predicate ordering).
  *
  * The decode-whole rule (`lateMaterialization` knobs in [[ScanSettings]]): with `expected` the
  * product of the filtered columns' selectivities, a row group is decoded whole when
  *  - `expected >= denseFraction` (survivors dense: skipping saves little and costs bookkeeping), or
  *  - at most `narrowColumns` columns are projected without being filtered, `expected >=
  *    scatteredFraction`, and the selections seen so far were scattered (mean run of passing rows
  *    shorter than `selectionThreshold`): the few output-only columns would be read and skipped in
  *    short runs, which costs more than decoding them whole.
  * The first row group of a file split is always read filter-first (nothing is known yet), and of the row
  * groups the rule decodes whole, every `exploreEvery`-th is read filter-first anyway, so that the
  * estimates follow the data. Decoding whole leaves the rows to Spark's `Filter` above the scan.
  *
  * Not thread-safe: one instance per [[FileBatchReader]] (one file split). */
final class LateMaterialization(settings: ScanSettings) {
  private[this] val entered = mutable.HashMap.empty[Int, Long].withDefaultValue(0L)
  private[this] val passed = mutable.HashMap.empty[Int, Long].withDefaultValue(0L)
  private[this] var selectedRows = 0L
  private[this] var selectedRuns = 0L
  private[this] var groupsSeen = 0
  private[this] var wholeInARow = 0

  def selectivity(col: Int): Double = (passed(col) + 1.0) / (entered(col) + 2.0)

  def order(columns: Seq[Int], cost: Int => Double): Seq[Int] =
    columns.sortBy(c => (cost(c) / math.max(1e-3, 1.0 - selectivity(c)), c))

  /** A filter step on `col` kept `after` of `before` rows. */
  def record(col: Int, before: Long, after: Long): Unit = {
    entered(col) += before
    passed(col) += after
  }

  /** A filter-first row group ended with `selected` rows in `runs` runs of selected rows. */
  def recordSelection(selected: Long, runs: Long): Unit = {
    selectedRows += selected
    selectedRuns += runs
    groupsSeen += 1
  }

  /** Whether what is known so far says to decode a row group with these filtered columns whole
    * (the rule below, without its exploring); false before anything is known. Changes nothing. */
  def likelyWhole(filtered: Iterable[Int], outputOnly: Int): Boolean = {
    if (groupsSeen == 0) return false
    val expected = filtered.foldLeft(1.0)((p, c) => p * selectivity(c))
    val meanRun = if (selectedRuns == 0) Double.MaxValue else selectedRows.toDouble / selectedRuns
    expected >= settings.denseFraction ||
      (outputOnly <= settings.narrowColumns && expected >= settings.scatteredFraction &&
        meanRun < settings.selectionThreshold)
  }

  /** Whether to read the next row group filter-first, given its filtered columns and how many
    * columns are projected without being filtered. */
  def filterFirst(filtered: Iterable[Int], outputOnly: Int): Boolean = {
    if (groupsSeen == 0) return true
    val whole = likelyWhole(filtered, outputOnly)
    if (!whole) { wholeInARow = 0; true }
    else {
      wholeInARow += 1
      if (settings.exploreEvery > 0 && wholeInARow % settings.exploreEvery == 0) true else false
    }
  }
}
