package lmspark.selection

/** One column reader's position in a [[RowSelection]]: walks it in batch-sized steps and says what
  * to do with the next rows. Steps never allocate; the current step is read from fields.
  *
  * {{{
  *   while (cursor.nextBatch()) {              // false once no selected row remains
  *     var out = 0
  *     var k = cursor.next()
  *     while (k != SelectionCursor.End) {      // End: the batch holds batchSize rows, or nothing is left
  *       k match {
  *         case SelectionCursor.Read => reader.read(cursor.stepRows.toInt, vector, out); out += cursor.stepSelected
  *         case SelectionCursor.Skip => reader.skip(cursor.stepRows)   // stepPruned: the page is not there at all
  *         case SelectionCursor.Mask => decode cursor.stepRows rows, keep those set in cursor.maskWords
  *       }
  *       k = cursor.next()
  *     }
  *   }
  * }}}
  *
  * Strategies ([[SelectionStrategy]], resolved once by a [[SelectionPolicy]]):
  *  - `Selectors`: alternating `Skip(n)` and `Read(n)`, with a `Read` cut where the batch fills.
  *  - `Mask`: unselected stretches are `Skip`s; a selected stretch becomes a `Mask` chunk of at most
  *    [[maxChunkRows]] rows that starts and ends on a selected row and holds at most the batch's
  *    remaining rows. Its bits are word-aligned: bit `i` of `maskWords(i >>> 6)` is row
  *    `stepStart + i`, for `i < stepRows`; later bits of the last word are 0.
  *
  * Pruned pages come first: `pruned` lists the row ranges of pages that page pruning removed (the
  * reader never fetched them). Each is yielded as one `Skip` with `stepPruned == true`, and no
  * `Read`, `Mask` or other `Skip` ever covers one of its rows, under both strategies. (arrow-rs
  * forbids masks whenever pages are pruned; here a mask chunk simply stops at the pruned page.) The
  * selection must select no row of a pruned range; that is checked.
  *
  * Trailing unselected rows are never yielded: a cursor ends at the selection's last selected row.
  * Invariant: `0 <= position <= selection.selectedEnd` or past a trailing pruned range; steps are
  * contiguous and in row order. */
final class SelectionCursor(
    selection: RowSelection,
    val strategy: SelectionStrategy,
    val batchSize: Int,
    pruned: RowRanges = RowRanges.empty) {
  import SelectionCursor._

  require(batchSize > 0, s"batch size must be positive, was $batchSize")
  locally {
    var i = 0
    while (i < pruned.size) {
      require(pruned.end(i) <= selection.rowCount,
        s"pruned rows [${pruned.start(i)}, ${pruned.end(i)}) reach past the selection's ${selection.rowCount} rows")
      require(!selection.anySelected(pruned.start(i), pruned.end(i)),
        s"the selection selects ${selection.countSelected(pruned.start(i), pruned.end(i))} rows of pruned rows " +
          s"[${pruned.start(i)}, ${pruned.end(i)}): pages with selected rows must not be pruned")
      i += 1
    }
  }

  /** The largest `Mask` chunk in rows: the batch size rounded up to whole words. */
  val maxChunkRows: Int = ((batchSize + 63L) & ~63L).min(Int.MaxValue & ~63L).toInt

  private[this] val runs: RunsSelection = if (strategy == SelectionStrategy.Selectors) selection.toRuns else null
  private[this] val words: Array[Long] = if (strategy == SelectionStrategy.Mask) selection.toMask.words else null
  private[this] val end: Long = selection.selectedEnd
  private[this] val chunk: Array[Long] = if (words != null) new Array[Long](maxChunkRows >>> 6) else null

  private[this] var pos = 0L
  private[this] var budget = 0
  private[this] var prunedIdx = 0
  private[this] var runIdx = 0

  private[this] var _stepStart = 0L
  private[this] var _stepRows = 0L
  private[this] var _stepSelected = 0
  private[this] var _stepPruned = false

  /** First row of the current step. */
  def stepStart: Long = _stepStart

  /** Rows the current step covers (read, skipped, or covered by the mask chunk). */
  def stepRows: Long = _stepRows

  /** Rows the current step adds to the batch (`stepRows` for `Read`, 0 for `Skip`). */
  def stepSelected: Int = _stepSelected

  /** Whether the current `Skip` is a pruned page range (rows the reader does not hold). */
  def stepPruned: Boolean = _stepPruned

  /** The current `Mask` chunk; owned by the cursor, overwritten by the next step. */
  def maskWords: Array[Long] = chunk

  /** In the current `Mask` step: the first row at or after `i` (counted from `stepStart`) that it
    * selects, or `stepRows` when none. */
  def nextSelectedInStep(i: Long): Long = Bits.nextSet(chunk, i, _stepRows)

  /** In the current `Mask` step: the first row at or after `i` that it does not select, or `stepRows`. */
  def nextUnselectedInStep(i: Long): Long = Bits.nextClear(chunk, i, _stepRows)

  /** The next row the cursor will yield. */
  def position: Long = pos

  /** Rows the current batch can still take. */
  def batchRemaining: Int = budget

  /** Starts a batch of up to `batchSize` selected rows; false when no selected row remains. */
  def nextBatch(): Boolean = {
    if (pos >= end) false
    else { budget = batchSize; true }
  }

  /** The next step of the current batch: [[Read]], [[Skip]], [[Mask]] or [[End]]. */
  def next(): Int = {
    if (budget == 0 || pos >= end) return End
    while (prunedIdx < pruned.size && pruned.end(prunedIdx) <= pos) prunedIdx += 1
    val nextPruned = if (prunedIdx < pruned.size) pruned.start(prunedIdx) else Long.MaxValue
    if (nextPruned <= pos) return skip(pruned.end(prunedIdx) - pos, isPruned = true)
    val limit = math.min(nextPruned, end)
    if (runs != null) nextSelector(limit) else nextMaskStep(limit)
  }

  private def skip(n: Long, isPruned: Boolean): Int = {
    _stepStart = pos; _stepRows = n; _stepSelected = 0; _stepPruned = isPruned
    pos += n
    Skip
  }

  private def nextSelector(limit: Long): Int = {
    while (runs.start(runIdx + 1) <= pos) runIdx += 1
    val runEnd = math.min(runs.start(runIdx + 1), limit)
    if (!runs.runSelected(runIdx)) skip(runEnd - pos, isPruned = false)
    else {
      val n = math.min(runEnd - pos, budget.toLong).toInt
      _stepStart = pos; _stepRows = n; _stepSelected = n; _stepPruned = false
      pos += n
      budget -= n
      Read
    }
  }

  private def nextMaskStep(limit: Long): Int = {
    val first = Bits.nextSet(words, pos, limit)
    if (first > pos) skip(first - pos, isPruned = false)
    else {
      val cap = math.min(limit, pos + maxChunkRows)
      var e = Bits.endAfterKth(words, pos, cap, budget.toLong)
      if (e == cap) e = Bits.lastSet(words, pos, cap) + 1
      val n = e - pos
      Bits.extract(words, pos, n, chunk)
      val selected = Bits.count(words, pos, e).toInt
      _stepStart = pos; _stepRows = n; _stepSelected = selected; _stepPruned = false
      pos = e
      budget -= selected
      Mask
    }
  }
}

object SelectionCursor {

  /** The batch is full, or no selected row remains. */
  final val End = 0

  /** Decode the next `stepRows` rows; all are selected. */
  final val Read = 1

  /** Pass over the next `stepRows` rows; none is selected. */
  final val Skip = 2

  /** Decode the next `stepRows` rows, keep those set in `maskWords`. */
  final val Mask = 3
}
