package lmspark.selection

/** `andThen`, `intersection` and `union`, one implementation per backing. Both sides arrive in the
  * same backing ([[RowSelection]] converts the right-hand side first). Runs are merged with two
  * cursors and a [[RunsBuilder]] (O(runs)); masks word by word (O(rows / 64), plus one loop over
  * the set bits of a word only when `andThen` keeps some but not all of its rows). */
private[selection] object Algebra {

  /** Walks the runs of `s` one piece at a time: `sel` / `left` describe the current run's
    * remaining rows; past the end it yields unselected rows forever. */
  private final class RunWalker(s: RunsSelection) {
    private[this] var i = 0
    var sel: Boolean = if (s.runs > 0) s.runSelected(0) else false
    var left: Long = if (s.runs > 0) s.length(0) else Long.MaxValue

    def take(n: Long): Unit = {
      left -= n
      if (left == 0) {
        i += 1
        if (i < s.runs) { sel = s.runSelected(i); left = s.length(i) }
        else { sel = false; left = Long.MaxValue }
      }
    }
  }

  def mergeRuns(a: RunsSelection, b: RunsSelection, and: Boolean): RunsSelection = {
    val total = math.max(a.rowCount, b.rowCount)
    val out = new RunsBuilder
    val wa = new RunWalker(a)
    val wb = new RunWalker(b)
    var pos = 0L
    while (pos < total) {
      val n = math.min(math.min(wa.left, wb.left), total - pos)
      out.add(if (and) wa.sel && wb.sel else wa.sel || wb.sel, n)
      wa.take(n)
      wb.take(n)
      pos += n
    }
    out.result()
  }

  def mergeMask(a: MaskSelection, b: MaskSelection, and: Boolean): MaskSelection = {
    val total = math.max(a.rowCount, b.rowCount)
    val aw = a.words
    val bw = b.words
    val out = new Array[Long](Bits.wordsFor(total))
    var i = 0
    while (i < out.length) {
      val x = if (i < aw.length) aw(i) else 0L
      val y = if (i < bw.length) bw(i) else 0L
      out(i) = if (and) x & y else x | y
      i += 1
    }
    new MaskSelection(out, total)
  }

  /** Each selected run of `a` takes the next rows of `b`; skipped runs of `a` stay skipped. */
  def andThenRuns(a: RunsSelection, b: RunsSelection): RunsSelection = {
    val out = new RunsBuilder
    val wb = new RunWalker(b)
    var i = 0
    while (i < a.runs) {
      val len = a.length(i)
      if (!a.runSelected(i)) out.add(selected = false, len)
      else {
        var left = len
        while (left > 0) {
          val n = math.min(left, wb.left)
          out.add(wb.sel, n)
          wb.take(n)
          left -= n
        }
      }
      i += 1
    }
    out.result()
  }

  /** Per word of `a`: take the next `bitCount` bits of `b` and deposit them onto the set bits. */
  def andThenMask(a: MaskSelection, b: MaskSelection): MaskSelection = {
    val aw = a.words
    val bw = b.words
    val out = new Array[Long](aw.length)
    var pos = 0L
    var i = 0
    while (i < aw.length) {
      val w = aw(i)
      if (w != 0) {
        val c = java.lang.Long.bitCount(w)
        out(i) = Bits.deposit(Bits.bitsAt(bw, pos, c), w)
        pos += c
      }
      i += 1
    }
    new MaskSelection(out, a.rowCount)
  }
}
