package lmspark.scan

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

import lmspark.column.{ColumnReader, NestedColumnReader}
import lmspark.io.PageSource
import lmspark.plan.ScanMetrics
import lmspark.selection.{RowSelection, SelectionCursor, SelectionStrategy}

/** The read loops of the current row group: fills the vectors of the file's present columns
  * (`vectors`, in present-column order) with the next batch of at most `capacity` rows. Each
  * present column has a reader, or a predicate-cache column it is copied from. With a selection,
  * every reader follows the same [[SelectionCursor]] steps (`read` the selected runs, `skip` the
  * others), and cached columns copy the batch's rows; when every column is cached, the selection's
  * mask is walked bit by bit instead. Without one, every row is read.
  *
  * It owns the readers and their page sources between [[start]] and [[finish]], and counts what they
  * read. Invariants: `running` is the present column whose reader is running, -1 between them;
  * `readers(k) == null` iff `cached(k) != null`. Not thread-safe. */
private[scan] final class RowGroupBatches(capacity: Int, vectors: Array[WritableColumnVector], metrics: ScanMetrics) {

  private[this] var readers: Array[ColumnReader] = Array.empty
  /** The page sources of each reader (a nested column's: one per leaf), for page counts and errors. */
  private[this] var opened: Array[List[PageSource]] = Array.empty
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
    pagesKnown.clear()
  }

  /** Records a page source of present column `k` (`known`: the offset index gives its page count). */
  def opening(k: Int, source: PageSource, known: Boolean): Unit = { opened(k) ::= source; pagesKnown(source) = known }

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
        cursor = new SelectionCursor(s, SelectionStrategy.Selectors, capacity)
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

  /** The next batch of selected rows when every column comes from the cache: the rows are the next
    * set bits of the selection, and each column copies them from the cache. */
  private def readCachedOnly(rowsLeft: Long): Int = {
    val limit = math.min(capacity.toLong, rowsLeft).toInt
    val words = selectedWords
    var w = (nextRow >>> 6).toInt
    var word = words(w) & (-1L << (nextRow & 63))
    var out = 0
    while (out < limit) {
      while (word == 0) { w += 1; word = words(w) }
      rowOf(out) = (w << 6) + java.lang.Long.numberOfTrailingZeros(word)
      word &= word - 1
      out += 1
    }
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
