package lmspark.scan

import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}

import lmspark.column.{ColumnReader, NestedColumnReader, VectorCopier}
import lmspark.io.PageSource
import lmspark.plan.ScanMetrics
import lmspark.selection.{Bits, RowRanges, RowSelection, SelectionCursor, SelectionPolicy}

/** The read loops of the current row group: fills the vectors of the file's present columns
  * (`vectors`, in present-column order) with the next batch of at most `capacity` rows. Each
  * present column has a reader, or a predicate-cache column it is copied from. With a selection,
  * every reader follows the same [[SelectionCursor]] steps, in the strategy `policy` resolves for
  * the row group's selection: `read` the selected runs and `skip` the others, or (mask) decode a
  * stretch of rows into a scratch vector and copy out the selected ones (a column without a
  * [[VectorCopier]], such as a nested one, reads and skips the stretch's runs instead); cached
  * columns copy the batch's rows. When every column is cached, the selection's mask is walked bit
  * by bit instead. Without a selection, every row is read.
  *
  * It owns the readers and their page sources between [[start]] and [[finish]], and counts what they
  * read. Invariants: `running` is the present column whose reader is running, -1 between them;
  * `readers(k) == null` iff `cached(k) != null`. Not thread-safe. */
private[scan] final class RowGroupBatches(capacity: Int, vectors: Array[WritableColumnVector], metrics: ScanMetrics,
    policy: SelectionPolicy) {

  private[this] var readers: Array[ColumnReader] = Array.empty
  /** The page sources of each reader (a nested column's: one per leaf), for page counts and errors. */
  private[this] var opened: Array[List[PageSource]] = Array.empty
  /** Per present column: the rows of its pages page pruning left out (none holds a selected row;
    * a mask step skips them instead of decoding them). */
  private[this] var prunedRows: Array[RowRanges] = Array.empty
  /** Per source: whether the offset index gave the page count of its chunk. */
  private[this] var pagesKnown = scala.collection.mutable.Map.empty[PageSource, Boolean]
  /** Per present column: the cached filter column that gives its values in this row group, or null. */
  private[this] var cached: Array[PredicateCache.Column] = Array.empty
  /** Columns of the current row group that come from the cache. */
  private[this] var cachedCount = 0
  /** Whether the row group's output-only columns are decoded for surviving rows only. */
  private[this] var materializing = false
  /** The row group's selection walk; null when every row is read. */
  private[this] var cursor: SelectionCursor = _
  /** When every column comes from the cache: the selection's mask words; null otherwise. */
  private[this] var selectedWords: Array[Long] = _
  /** The next row of `selectedWords` to look at. */
  private[this] var nextRow = 0L
  /** Row-group row of each row of the current batch (filled only when some column comes from the cache). */
  private[this] lazy val rowOf = new Array[Int](capacity)
  private[this] var running = -1

  /** The present column whose reader is running, or -1. */
  def runningColumn: Int = running

  /** Forgets the running column (after its failure was reported). */
  def clearRunning(): Unit = running = -1

  /** The current page of the running column's source (`, page ...`), or "". */
  def runningPage: String =
    if (running < 0 || running >= opened.length || opened(running).isEmpty) ""
    else {
      val sources = opened(running).reverse
      val leaf = if (running < readers.length) readers(running) match {
        case n: NestedColumnReader => math.max(0, n.runningLeaf)
        case _ => 0
      } else 0
      s", ${sources(math.min(leaf, sources.length - 1)).describeCurrentPage}"
    }

  /** The row group's readers are being made: `opened` and `pagesKnown` are filled in as they are. */
  def prepare(columns: Int): Unit = {
    opened = Array.fill(columns)(Nil)
    prunedRows = Array.fill(columns)(RowRanges.empty)
    pagesKnown.clear()
  }

  /** Records a page source of present column `k` (`known`: the offset index gives its page count;
    * `pruned`: the rows of its pages left out). */
  def opening(k: Int, source: PageSource, known: Boolean, pruned: RowRanges): Unit = {
    opened(k) ::= source
    pagesKnown(source) = known
    prunedRows(k) = pruned
  }

  /** Starts a row group: its `readers` and `fromCache` columns (one of the two per present column),
    * its `selection` (None: every row of `rowCount`); returns the rows it yields. */
  def start(rs: Array[ColumnReader], fromCache: Array[PredicateCache.Column], selection: Option[RowSelection],
      rowCount: Long, materialize: Boolean): Long = {
    readers = rs
    cached = fromCache
    cachedCount = fromCache.count(_ != null)
    materializing = materialize
    selection match {
      case Some(s) =>
        cursor = new SelectionCursor(s, policy.resolve(s), capacity)
        if (cachedCount == vectors.length && vectors.nonEmpty && s.selectedCount > 0) {
          selectedWords = s.toMask.toWords
          nextRow = 0L
        }
        s.selectedCount
      case None => rowCount
    }
  }

  /** The next batch, of at most `capacity` and `rowsLeft` rows; returns its row count. */
  def next(rowsLeft: Long): Int = {
    var k = 0
    while (k < vectors.length) { vectors(k).reset(); k += 1 }
    if (cursor == null) readAll(rowsLeft)
    else if (selectedWords != null) readCachedOnly(rowsLeft)
    else readSelected()
  }

  /** The next rows of a row group read whole. */
  private def readAll(rowsLeft: Long): Int = {
    val n = math.min(capacity.toLong, rowsLeft).toInt
    var k = 0
    while (k < vectors.length) {
      running = k
      readers(k).read(n, vectors(k))
      k += 1
    }
    running = -1
    metrics.valuesDecoded += n.toLong * vectors.length
    n
  }

  /** The next batch of selected rows: every column with a reader follows the same cursor steps;
    * columns the filter-first pass cached are copied from the cache for the batch's rows. */
  private def readSelected(): Int = {
    if (!cursor.nextBatch()) throw new IllegalStateException("the row group's selection ended early")
    val track = cachedCount > 0
    var out = 0
    var step = cursor.next()
    while (step != SelectionCursor.End) {
      var k = 0
      if (step == SelectionCursor.Read) {
        val n = cursor.stepRows.toInt
        while (k < vectors.length) {
          running = k
          if (readers(k) != null) readers(k).read(n, vectors(k), out)
          k += 1
        }
        if (track) {
          val start = cursor.stepStart.toInt
          var r = 0
          while (r < n) { rowOf(out + r) = start + r; r += 1 }
        }
        out += n
      } else if (step == SelectionCursor.Mask) {
        val n = cursor.stepRows.toInt
        while (k < vectors.length) {
          running = k
          if (readers(k) != null) readMasked(k, n, out)
          k += 1
        }
        if (track) {
          val start = cursor.stepStart.toInt
          var i = cursor.nextSelectedInStep(0L)
          var o = out
          while (i < n) { rowOf(o) = start + i.toInt; o += 1; i = cursor.nextSelectedInStep(i + 1) }
        }
        out += cursor.stepSelected
      } else {
        val n = cursor.stepRows
        while (k < vectors.length) { running = k; if (readers(k) != null) readers(k).skip(n); k += 1 }
      }
      step = cursor.next()
    }
    running = -1
    if (track) {
      var k = 0
      while (k < vectors.length) {
        val c = cached(k)
        if (c != null) c.copyTo(rowOf, out, vectors(k))
        k += 1
      }
    }
    metrics.valuesDecoded += out.toLong * (vectors.length - cachedCount)
    if (materializing) metrics.rowsMaterialized += out
    out
  }

  /** Per present column: its copier (null: none, the mask's runs are read and skipped) and the
    * scratch vector a mask stretch is decoded into; made on first use. */
  private[this] lazy val copiers: Array[VectorCopier] = vectors.map(v => VectorCopier.forType(v.dataType).orNull)
  private[this] lazy val scratch: Array[WritableColumnVector] = new Array[WritableColumnVector](vectors.length)

  /** The current mask step of present column `k` into its vector from row `out`: the step's `n`
    * rows decoded into a scratch vector and the selected ones copied (values, never dictionary
    * ids); without a copier, the step's runs of selected rows read and the others skipped. */
  private def readMasked(k: Int, n: Int, out: Int): Unit = {
    val dst = vectors(k)
    val copier = copiers(k)
    if (copier != null) {
      var v = scratch(k)
      if (v == null) { v = new OnHeapColumnVector(cursor.maxChunkRows, dst.dataType); scratch(k) = v }
      // The batch's values are copied values: a dictionary a previous batch left must not decode them.
      if (dst.hasDictionary) dst.setDictionary(null)
      // The step's rows in stretches between the pages page pruning left out (which hold no selected
      // row and are skipped): each stretch decoded into the scratch vector as a batch of its own,
      // then its selected rows copied out.
      val base = cursor.stepStart
      val pruned = prunedRows(k)
      var p = 0
      var at = 0L
      var o = out
      var decoded = 0L
      while (at < n) {
        while (p < pruned.size && pruned.end(p) <= base + at) p += 1
        if (p < pruned.size && pruned.start(p) <= base + at) {
          val e = math.min(pruned.end(p) - base, n.toLong)
          readers(k).skip(e - at)
          at = e
        } else {
          val e = if (p < pruned.size) math.min(pruned.start(p) - base, n.toLong) else n.toLong
          v.reset()
          readers(k).read((e - at).toInt, v, 0)
          decoded += e - at
          var i = cursor.nextSelectedInStep(at)
          while (i < e) { copier.copy(v, (i - at).toInt, dst, o); o += 1; i = cursor.nextSelectedInStep(i + 1) }
          at = e
        }
      }
      metrics.valuesDecoded += decoded - cursor.stepSelected // the selected ones are counted with the batch
    } else {
      var o = out
      var i = 0L
      while (i < n) {
        val set = cursor.nextSelectedInStep(i) == i
        val e = if (set) cursor.nextUnselectedInStep(i) else cursor.nextSelectedInStep(i)
        if (set) { readers(k).read((e - i).toInt, dst, o); o += (e - i).toInt } else readers(k).skip(e - i)
        i = e
      }
    }
  }

  /** The next batch of selected rows when every column comes from the cache: the rows are the next
    * set bits of the selection, and each column copies them from the cache. */
  private def readCachedOnly(rowsLeft: Long): Int = {
    val limit = math.min(capacity.toLong, rowsLeft).toInt
    val out = Bits.listSet(selectedWords, nextRow, selectedWords.length.toLong << 6, limit, rowOf, 0L)
    if (out != limit) throw new IllegalStateException(s"internal error: $out of $limit selected rows listed")
    nextRow = rowOf(out - 1) + 1L
    var k = 0
    while (k < vectors.length) { cached(k).copyTo(rowOf, out, vectors(k)); k += 1 }
    out
  }

  /** Ends the row group: counts what its sources read (a chunk without an offset index counts the
    * data pages it read toward the total; sources read window by window, so they are counted once
    * done) and closes its readers. */
  def finish(): Unit = {
    opened.foreach(_.foreach { s =>
      metrics.pagesRead += s.dataPagesRead
      metrics.bytesRead += s.bytesRead
      metrics.bytesDecompressed += s.bytesDecompressed
      if (!pagesKnown(s)) metrics.pagesTotal += s.dataPagesRead
    })
    pagesKnown.clear()
    readers.foreach(r => if (r != null) r.close())
    readers = Array.empty
    opened = Array.empty
    cached = Array.empty
    cachedCount = 0
    materializing = false
    cursor = null
    selectedWords = null
    running = -1
  }
}
