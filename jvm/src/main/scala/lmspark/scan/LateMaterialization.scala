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
  * Order: of the orders of the filtered columns (up to [[LateMaterialization.MaxPermuted]]), the one of
  * least expected decode cost, cost being a column's decoded bytes per row (plus a fixed cost per row
  * evaluated) on the rows it walks: those that passed the columns before it, or every row when those
  * are scattered, since a scattered selection is decoded on every row. Without scattering that is the
  * classic rank of predicate ordering, increasing `cost / (1 - selectivity)`, which also breaks near
  * ties (and orders more columns). So a moderately selective cheap column no longer goes first when
  * the rows it leaves are scattered and a very selective column would leave the cheap one almost
  * nothing to decode.
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

  /** The order to decode the filtered columns in (see the class comment). */
  def order(columns: Seq[Int], cost: Int => Double): Seq[Int] = {
    val ranked = columns.sortBy(c => (cost(c) / math.max(1e-3, 1.0 - selectivity(c)), c))
    if (ranked.size < 2 || ranked.size > LateMaterialization.MaxPermuted) ranked
    else {
      // Permutations come in lexicographic order of `ranked`'s positions (the first is `ranked`):
      // among orders within 1 % of the cheapest, the first wins, so near ties keep the rank rule's.
      val costs = ranked.permutations.map(o => o -> expectedCost(o, cost)).toVector
      val cheapest = costs.map(_._2).min
      costs.find(_._2 <= cheapest * 1.01).get._1
    }
  }

  /** Expected decode cost per row of the row group, decoding `order`'s columns in turn: each column
    * costs its bytes per row plus [[LateMaterialization.PerRowCost]], on the rows it walks. A column
    * walks the rows that passed the columns before it, or every row when those rows are expected to
    * be scattered ([[FilterFirstPass]] then decodes it on every row). */
  private def expectedCost(order: Seq[Int], cost: Int => Double): Double = {
    var passing = 1.0
    var total = 0.0
    order.foreach { c =>
      val walked = if (passing < 1.0 && scattered(passing)) 1.0 else passing
      total += (cost(c) + LateMaterialization.PerRowCost) * walked
      passing *= selectivity(c)
    }
    total
  }

  /** Whether a selection keeping a fraction `p` of the rows is expected to have runs shorter than
    * `selectionThreshold`: when the selections seen so far had long runs (clustered data), no; else
    * as if its rows were spread at random (about `2 p (1 - p)` runs per row). */
  private def scattered(p: Double): Boolean = {
    val threshold = settings.selectionThreshold
    if (threshold <= 0) false
    else if (selectedRuns > 0 && selectedRows.toDouble / selectedRuns >= threshold) false
    else 2.0 * p * (1.0 - p) * threshold > 1.0
  }

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

object LateMaterialization {
  /** Filtered columns beyond which orders are not enumerated (the rank rule orders them). */
  val MaxPermuted = 5

  /** What evaluating a column costs per row walked besides its decoded bytes (the comparison and
    * the fold into the selection), in bytes' worth. */
  val PerRowCost = 1.0
}
