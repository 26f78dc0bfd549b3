package lmspark.selection

/** The bitmask backing: bit `i & 63` of `words(i >>> 6)` is row `i`.
  *
  * Invariants: `words.length == ceil(rowCount / 64)`; a mask never ends with an unused tail: the
  * bits at or past `rowCount` in the last word are 0 (so word-wise popcounts and comparisons need
  * no masking). `words` is never mutated after construction. */
final class MaskSelection private[selection] (
    private[selection] val words: Array[Long],
    override val rowCount: Long,
    cachedRuns: RunsSelection)
    extends RowSelection {

  private[selection] def this(words: Array[Long], rowCount: Long) = this(words, rowCount, null)

  require(rowCount >= 0, s"negative row count $rowCount")
  require(words.length.toLong == (rowCount + 63) / 64,
    s"a mask over $rowCount rows needs ${(rowCount + 63) / 64} words, got ${words.length}")
  require(words.length == 0 || (rowCount & 63) == 0 || (words(words.length - 1) >>> (rowCount & 63)) == 0,
    s"mask has bits set at or past its row count $rowCount (an unused tail)")

  /** A copy of the words. */
  def toWords: Array[Long] = words.clone()

  override val selectedCount: Long = {
    var c = 0L
    var i = 0
    while (i < words.length) { c += java.lang.Long.bitCount(words(i)); i += 1 }
    c
  }

  /** Counts positions where a bit differs from the one before it, one popcount per word. */
  override lazy val runCount: Long = {
    if (rowCount == 0) 0L
    else {
      var changes = 0L
      var prevTop = words(0) & 1L // no change before row 0
      var i = 0
      while (i < words.length) {
        val w = words(i)
        var x = w ^ ((w << 1) | prevTop)
        if (i == words.length - 1 && (rowCount & 63) != 0) x &= Bits.lowMask((rowCount & 63).toInt)
        changes += java.lang.Long.bitCount(x)
        prevTop = w >>> 63
        i += 1
      }
      changes + 1
    }
  }

  override def backing: Backing = Backing.Mask

  override def isSelected(row: Long): Boolean = {
    require(row >= 0 && row < rowCount, s"row $row outside [0, $rowCount)")
    Bits.get(words, row)
  }

  override def anySelected(from: Long, until: Long): Boolean = {
    val u = math.min(until, rowCount)
    Bits.nextSet(words, math.max(from, 0L), u) < u
  }

  override def countSelected(from: Long, until: Long): Long =
    Bits.count(words, math.max(from, 0L), math.min(until, rowCount))

  override def selectedEnd: Long = Bits.lastSet(words, 0L, rowCount) + 1

  override lazy val toRuns: RunsSelection = if (cachedRuns != null) cachedRuns else RunsSelection.fromMask(this)
  override def toMask: MaskSelection = this

  override def splitOff(n: Long): (RowSelection, RowSelection) = {
    val m = math.min(math.max(n, 0L), rowCount)
    (slice(0L, m), slice(m, rowCount))
  }

  /** Rows `[from, until)` as a new mask starting at row 0. */
  private[selection] def slice(from: Long, until: Long): MaskSelection = {
    val n = until - from
    val out = new Array[Long](Bits.wordsFor(n))
    if (n > 0) Bits.extract(words, from, n, out)
    new MaskSelection(out, n)
  }

  override def trim: RowSelection = {
    val e = selectedEnd
    if (e == rowCount) this else slice(0L, e)
  }

  override def toString: String = s"RowSelection.mask($selectedCount of $rowCount rows, $runCount runs)"
}
