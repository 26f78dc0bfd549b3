package lmspark.selection

/** Which rows of a row range `[0, rowCount)` are selected ("still alive" during a scan).
  *
  * An immutable value with two hidden backings, chosen by the caller only through
  * [[withBacking]] (usually from a resolved [[SelectionStrategy]]):
  *  - [[Backing.Runs]]: alternating run lengths, "select n / skip n" ([[RunsSelection]]); compact
  *    when runs are long;
  *  - [[Backing.Mask]]: one bit per row in `long` words ([[MaskSelection]]); compact and branch-free
  *    when runs are short.
  *
  * Only this package can extend it (the constructor is package-private). Both answer every
  * operation with the same result; only speed and size differ. Binary
  * operations return the backing of `this` (the other side is converted first when needed).
  * Invariants (checked with messages when a value is built):
  *  - runs: no zero-length runs, and runs alternate between selected and skipped;
  *  - mask: exactly `ceil(rowCount / 64)` words, and a mask never ends with an unused tail (bits at
  *    or past `rowCount` in the last word are 0).
  *
  * Operations: counts, `andThen`, `intersection`, `union`, `splitOff`, `trim`, conversions and
  * `scanRanges`. The scan pipeline builds one selection per row group (from predicate results
  * with [[RowSelection.fromBooleans]] / [[RowSelection.fromMask]], and from page-index row ranges
  * with [[RowSelection.fromRowRanges]]), combines them with `andThen` / `intersection`, and hands
  * each column reader a [[SelectionCursor]]. */
abstract class RowSelection private[selection] () {

  /** Rows covered, selected or not. */
  def rowCount: Long

  /** Rows selected. */
  def selectedCount: Long

  /** Maximal runs of equal rows (selected or skipped); 0 for an empty selection. */
  def runCount: Long

  /** `rowCount / runCount` (0 for an empty selection): what [[SelectionPolicy]] compares with its
    * threshold. */
  final def meanRunLength: Double = if (runCount == 0) 0.0 else rowCount.toDouble / runCount

  def backing: Backing

  /** Whether row `row` (in `[0, rowCount)`) is selected. */
  def isSelected(row: Long): Boolean

  /** Whether any row in `[from, until)` is selected (the range is clipped to `[0, rowCount)`). */
  def anySelected(from: Long, until: Long): Boolean

  /** Number of selected rows in `[from, until)` (clipped to `[0, rowCount)`). */
  def countSelected(from: Long, until: Long): Long

  /** Position just past the last selected row (0 when none is selected). */
  def selectedEnd: Long

  def toRuns: RunsSelection
  def toMask: MaskSelection

  final def withBacking(b: Backing): RowSelection = b match {
    case Backing.Runs => toRuns
    case Backing.Mask => toMask
  }

  final def withStrategy(s: SelectionStrategy): RowSelection = withBacking(s.backing)

  /** Applies `other`, a selection over the rows this one selects, as arrow-rs `and_then` does:
    * row `i` of the result is selected iff this selects it and `other` selects it among this
    * selection's selected rows. Requires `other.rowCount == selectedCount`. */
  final def andThen(other: RowSelection): RowSelection = {
    require(other.rowCount == selectedCount,
      s"andThen needs a selection over the $selectedCount selected rows, got one over ${other.rowCount} rows")
    if (selectedCount == rowCount) other.withBacking(backing) // every row selected: `other` is over these rows
    else if (backing == Backing.Runs) Algebra.andThenRuns(toRuns, other.toRuns)
    else Algebra.andThenMask(toMask, other.toMask)
  }

  /** Rows selected by both. Rows past the shorter selection's end count as not selected; the
    * result covers `max(rowCount, other.rowCount)` rows. */
  final def intersection(other: RowSelection): RowSelection =
    if (backing == Backing.Runs) Algebra.mergeRuns(toRuns, other.toRuns, and = true)
    else Algebra.mergeMask(toMask, other.toMask, and = true)

  /** Rows selected by either; covers `max(rowCount, other.rowCount)` rows. */
  final def union(other: RowSelection): RowSelection =
    if (backing == Backing.Runs) Algebra.mergeRuns(toRuns, other.toRuns, and = false)
    else Algebra.mergeMask(toMask, other.toMask, and = false)

  /** `(first, rest)`: the first `min(n, rowCount)` rows, and the rows after them (renumbered
    * from 0). Mirrors arrow-rs `split_off`, without mutation. */
  def splitOff(n: Long): (RowSelection, RowSelection)

  /** The same selection without its trailing unselected rows (`rowCount` becomes `selectedEnd`). */
  def trim: RowSelection

  /** The byte ranges to fetch: pages of `pages` holding at least one selected row, coalesced when
    * the gap between them is at most `maxGap` bytes. See [[ScanRanges]]. */
  final def scanRanges(pages: PageLocations, maxGap: Long): ByteRanges = ScanRanges.of(this, pages, maxGap)

  /** One boolean per row (for tests and debugging; allocates `rowCount` booleans). */
  final def toBooleans: Array[Boolean] = {
    require(rowCount <= Int.MaxValue, s"$rowCount rows do not fit a boolean array")
    val m = toMask
    Array.tabulate(rowCount.toInt)(i => Bits.get(m.words, i.toLong))
  }

  final override def equals(o: Any): Boolean = o match {
    case s: RowSelection =>
      rowCount == s.rowCount && java.util.Arrays.equals(toMask.words, s.toMask.words)
    case _ => false
  }

  final override def hashCode: Int = java.util.Arrays.hashCode(toMask.words) * 31 + rowCount.hashCode
}

/** The two backings of a [[RowSelection]]. */
sealed trait Backing
object Backing {
  case object Runs extends Backing
  case object Mask extends Backing
}

object RowSelection {

  /** `rowCount` rows, all selected. */
  def all(rowCount: Long): RowSelection = new RunsBuilder().add(selected = true, rowCount).result()

  /** `rowCount` rows, none selected. */
  def none(rowCount: Long): RowSelection = new RunsBuilder().add(selected = false, rowCount).result()

  /** From one boolean per row of `values[offset, offset + length)` (a predicate's result). */
  def fromBooleans(values: Array[Boolean], offset: Int, length: Int): MaskSelection = {
    require(offset >= 0 && length >= 0 && offset.toLong + length <= values.length,
      s"range [$offset, ${offset.toLong + length}) outside an array of ${values.length}")
    val words = new Array[Long](Bits.wordsFor(length.toLong))
    var i = 0
    while (i < length) {
      if (values(offset + i)) words(i >>> 6) |= 1L << (i & 63)
      i += 1
    }
    new MaskSelection(words, length.toLong)
  }

  def fromBooleans(values: Array[Boolean]): MaskSelection = fromBooleans(values, 0, values.length)

  /** From mask words (bit `i` of word `i / 64` = row `i`); bits at or past `rowCount` must be 0.
    * The array is copied. */
  def fromMask(words: Array[Long], rowCount: Long): MaskSelection =
    new MaskSelection(java.util.Arrays.copyOf(words, Bits.wordsFor(rowCount)), rowCount)

  /** From alternating run lengths, the first selected iff `selectedFirst`. Zero-length runs are
    * rejected (use [[RunsBuilder]] to merge them away). The array is copied. */
  def fromRuns(selectedFirst: Boolean, lengths: Array[Long]): RunsSelection =
    RunsSelection.of(selectedFirst, lengths.clone())

  /** From (selected, length) selectors in any form: zero-length selectors are dropped and equal
    * neighbours merged, like arrow-rs `RowSelection::from(Vec<RowSelector>)`. */
  def fromSelectors(selected: Array[Boolean], lengths: Array[Long]): RunsSelection = {
    require(selected.length == lengths.length, s"${selected.length} flags for ${lengths.length} lengths")
    val b = new RunsBuilder
    var i = 0
    while (i < lengths.length) { b.add(selected(i), lengths(i)); i += 1 }
    b.result()
  }

  /** Rows of `ranges` (for example the row ranges that survive page-index filtering) out of
    * `rowCount` rows. */
  def fromRowRanges(rowCount: Long, ranges: RowRanges): RunsSelection = {
    require(ranges.isEmpty || ranges.end(ranges.size - 1) <= rowCount,
      s"row ranges end at ${ranges.end(ranges.size - 1)}, past the $rowCount rows")
    val b = new RunsBuilder
    var pos = 0L
    var i = 0
    while (i < ranges.size) {
      b.add(selected = false, ranges.start(i) - pos)
      b.add(selected = true, ranges.end(i) - ranges.start(i))
      pos = ranges.end(i)
      i += 1
    }
    b.add(selected = false, rowCount - pos)
    b.result()
  }
}
