package lmspark.selection

/** The run-length backing: `lengths(i)` rows, selected iff `i` is even when `selectedFirst` (odd
  * otherwise), so "select n / skip n" selectors with the flag implied by position. `starts(i)` is
  * the first row of run `i` and `starts(runs) == rowCount`, which makes point queries and splits
  * binary searches.
  *
  * Invariants: no zero-length runs; runs alternate (structural: the flag of run `i` is derived
  * from `selectedFirst` and `i`, so two neighbours can never share a flag); an empty selection has
  * no runs and `selectedFirst == false`. */
final class RunsSelection private (val selectedFirst: Boolean, lengths: Array[Long], starts: Array[Long])
    extends RowSelection {

  /** Number of runs. */
  def runs: Int = lengths.length

  /** Length of run `i`. */
  def length(i: Int): Long = lengths(i)

  /** First row of run `i` (`start(runs) == rowCount`). */
  def start(i: Int): Long = starts(i)

  /** Whether run `i` is a selected run. */
  @inline def runSelected(i: Int): Boolean = ((i & 1) == 0) == selectedFirst

  override val rowCount: Long = starts(lengths.length)

  override val selectedCount: Long = {
    var c = 0L
    var i = if (selectedFirst) 0 else 1
    while (i < lengths.length) { c += lengths(i); i += 2 }
    c
  }

  override def runCount: Long = lengths.length.toLong
  override def backing: Backing = Backing.Runs

  /** Index of the run holding `row` (`0 <= row < rowCount`). */
  def runAt(row: Long): Int = {
    val r = java.util.Arrays.binarySearch(starts, 0, lengths.length, row)
    if (r >= 0) r else -r - 2
  }

  override def isSelected(row: Long): Boolean = {
    require(row >= 0 && row < rowCount, s"row $row outside [0, $rowCount)")
    runSelected(runAt(row))
  }

  override def anySelected(from: Long, until: Long): Boolean = {
    val f = math.max(from, 0L)
    val u = math.min(until, rowCount)
    if (f >= u) false
    else {
      val k = runAt(f)
      runSelected(k) || (k + 1 < lengths.length && starts(k + 1) < u)
    }
  }

  override def countSelected(from: Long, until: Long): Long = {
    val f = math.max(from, 0L)
    val u = math.min(until, rowCount)
    var c = 0L
    if (f < u) {
      var k = runAt(f)
      while (k < lengths.length && starts(k) < u) {
        if (runSelected(k)) c += math.min(u, starts(k + 1)) - math.max(f, starts(k))
        k += 1
      }
    }
    c
  }

  override def selectedEnd: Long = {
    val n = lengths.length
    if (n == 0) 0L else if (runSelected(n - 1)) rowCount else starts(n - 1)
  }

  override def toRuns: RunsSelection = this

  override lazy val toMask: MaskSelection = {
    val words = new Array[Long](Bits.wordsFor(rowCount))
    var i = if (selectedFirst) 0 else 1
    while (i < lengths.length) { Bits.setRange(words, starts(i), starts(i + 1)); i += 2 }
    new MaskSelection(words, rowCount, this)
  }

  override def splitOff(n: Long): (RowSelection, RowSelection) = {
    val m = math.min(math.max(n, 0L), rowCount)
    val first = new RunsBuilder
    val rest = new RunsBuilder
    var i = 0
    while (i < lengths.length) {
      val s = starts(i)
      val e = starts(i + 1)
      val sel = runSelected(i)
      if (e <= m) first.add(sel, e - s)
      else if (s >= m) rest.add(sel, e - s)
      else { first.add(sel, m - s); rest.add(sel, e - m) }
      i += 1
    }
    (first.result(), rest.result())
  }

  override def trim: RowSelection = {
    val n = lengths.length
    if (n == 0 || runSelected(n - 1)) this
    else if (n == 1) RunsSelection.empty
    else new RunsSelection(selectedFirst, java.util.Arrays.copyOf(lengths, n - 1), java.util.Arrays.copyOf(starts, n))
  }

  override def toString: String = {
    val sb = new StringBuilder("RowSelection.runs(")
    var i = 0
    while (i < lengths.length && i < 16) {
      if (i > 0) sb.append(", ")
      sb.append(if (runSelected(i)) "select " else "skip ").append(lengths(i))
      i += 1
    }
    if (lengths.length > 16) sb.append(s", ... ${lengths.length - 16} more")
    sb.append(")").toString
  }
}

object RunsSelection {
  val empty: RunsSelection = new RunsSelection(false, new Array[Long](0), new Array[Long](1))

  /** Checks the invariants and builds the cumulative starts. Takes ownership of `lengths`. */
  private[selection] def of(selectedFirst: Boolean, lengths: Array[Long]): RunsSelection = {
    if (lengths.length == 0) return empty
    val starts = new Array[Long](lengths.length + 1)
    var i = 0
    while (i < lengths.length) {
      require(lengths(i) > 0, s"run $i has length ${lengths(i)}: runs must not be empty")
      starts(i + 1) = starts(i) + lengths(i)
      require(starts(i + 1) > 0, s"run lengths overflow a long at run $i")
      i += 1
    }
    new RunsSelection(selectedFirst, lengths, starts)
  }

  private[selection] def fromMask(m: MaskSelection): RunsSelection = {
    val b = new RunsBuilder
    val words = m.words
    val n = m.rowCount
    var pos = 0L
    while (pos < n) {
      val set = Bits.get(words, pos)
      val e = if (set) Bits.nextClear(words, pos, n) else Bits.nextSet(words, pos, n)
      b.add(set, e - pos)
      pos = e
    }
    b.result()
  }
}

/** Builds a [[RunsSelection]] from (selected, length) pieces in row order: drops zero lengths and
  * merges equal neighbours, so the invariants hold by construction. Amortised O(1) per piece. */
final class RunsBuilder {
  private[this] var lengths = new Array[Long](16)
  private[this] var n = 0
  private[this] var first = false
  private[this] var last = false

  def add(selected: Boolean, length: Long): this.type = {
    require(length >= 0, s"negative run length $length")
    if (length > 0) {
      if (n > 0 && last == selected) lengths(n - 1) += length
      else {
        if (n == lengths.length) lengths = java.util.Arrays.copyOf(lengths, n * 2)
        if (n == 0) first = selected
        lengths(n) = length
        n += 1
        last = selected
      }
    }
    this
  }

  def result(): RunsSelection = RunsSelection.of(first, java.util.Arrays.copyOf(lengths, n))
}
