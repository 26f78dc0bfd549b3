package lmspark.column

import org.apache.parquet.column.ColumnDescriptor
import org.apache.spark.sql.execution.vectorized.WritableColumnVector

import lmspark.decode._
import lmspark.io.{DataPageV1, DataPageV2, PageSource}

/** The reader of one leaf without repetition (max repetition level 0) of one row group: a flat
  * column, or a field below structs only (a struct field filtered on: its value is null when any
  * level is undefined, exactly Spark's `s.a`), on the shared page loop ([[LeafPageLoop]]: dictionary, page switching, structural
  * checks): decodes definition levels and values page by page, and skips whole pages by their header
  * row count without decompressing them. Batches made only of dictionary-encoded rows may come back
  * dictionary-encoded (ids + Spark dictionary, decoded lazily), as [[DictionaryPreservation]]
  * decides; other batches hold values. A batch may be written by several `read(n, v, rowId)` calls
  * (appends), with skips between them.
  *
  * With a [[PageSource]] of some pages only ([[PageSource.forPages]]), pruned pages are skipped
  * whole by their offset-index row count; reading a row of one, or a skip that ends inside one,
  * is an internal error (the selection must never select rows of a pruned page). A v2 page read
  * through must have as many null definition levels as its `num_nulls`.
  *
  * `preloaded`, when given, is the chunk's dictionary page already decoded ([[ChunkDictionary.read]],
  * for dictionary pruning), and `pages` starts just past it.
  *
  * Invariants: those of [[LeafPageLoop]]; `levels` is null iff `maxDef == 0`. */
final class FlatColumnReader(
    descriptor: ColumnDescriptor,
    source: PageSource,
    rows: Long,
    writer: VectorWriter,
    preserveDictionary: Boolean,
    preloaded: Dictionary = null)
    extends LeafPageLoop(descriptor, source, rows) with ColumnReader {

  private[this] val maxDef: Int = descriptor.getMaxDefinitionLevel
  private[this] val defBitWidth: Int = 32 - Integer.numberOfLeadingZeros(maxDef)

  require(descriptor.getMaxRepetitionLevel == 0,
    s"FlatColumnReader needs a column without repetition, got ${ctx.columnPath} with max repetition level " +
      s"${descriptor.getMaxRepetitionLevel} and max definition level $maxDef")

  /** The current page's `num_nulls` when it is a v2 page of a nullable column, else -1. */
  private[this] var pageNullsExpected: Int = -1
  /** Null definition levels seen in the current page (only while `pageNullsExpected >= 0`). */
  private[this] var pageNulls: Int = 0

  private[this] val preservation = new DictionaryPreservation(preserveDictionary, writer)

  private[this] var levels: LevelDecoder = _
  private[this] var levelBuf: Array[Int] = new Array[Int](1024)

  if (preloaded != null) install(preloaded)

  override protected def dictionaryInstalled(d: Dictionary): Unit = preservation.setChunkDictionary(d)

  override def vectorDictionary: SparkDictionary = preservation.current

  override def read(n: Int, vector: WritableColumnVector): Unit = read(n, vector, 0)

  override def read(n: Int, vector: WritableColumnVector, rowId: Int): Unit = {
    if (n < 0) throw new IllegalArgumentException(s"negative row count $n")
    if (rowId < 0) throw new IllegalArgumentException(s"negative row id $rowId")
    if (rowsConsumed + n > rowCount)
      throw ctx.error(s"cannot read $n rows: only ${rowCount - rowsConsumed} of $rowCount rows remain")
    try { readRows(n, vector, rowId); if (rowsConsumed == rowCount) checkEnd() }
    catch translate
  }

  override def skip(n: Long): Unit = {
    if (n < 0) throw new IllegalArgumentException(s"negative row count $n")
    if (rowsConsumed + n > rowCount)
      throw ctx.error(s"cannot skip $n rows: only ${rowCount - rowsConsumed} of $rowCount rows remain")
    try { skipRows(n); if (rowsConsumed == rowCount) checkEnd() }
    catch translate
  }

  private def readRows(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    if (rowId == 0) preservation.startBatch(v)
    var done = 0
    while (done < n) {
      if (pageRemaining == 0) loadNextPage()
      val m = math.min(n - done, pageRemaining)
      val at = rowId + done
      val ids = preservation.idsFor(v, dictionaryDecoder != null && (values eq dictionaryDecoder), at, rowId + n)
      if (levels != null) readNullable(m, v, at, ids)
      else if (ids == null) writer.write(values, m, v, at)
      else dictionaryDecoder.readIds(m, ids, at)
      done += m
      pageRemaining -= m
      rowsConsumed += m
      if (pageRemaining == 0) pageDone()
    }
  }

  /** The current page was read or skipped through: checks its null count (v2). */
  private def pageDone(): Unit =
    if (pageNullsExpected >= 0 && pageNulls != pageNullsExpected)
      throw pages.error(s"data page v2 has num_nulls $pageNullsExpected but its definition levels hold " +
        s"$pageNulls nulls")

  /** Rows `[rowId, rowId + m)` with definition levels: nulls into `v`; values into `v`, or their
    * dictionary ids into `ids` when it is non-null. */
  private def readNullable(m: Int, v: WritableColumnVector, rowId: Int, ids: WritableColumnVector): Unit = {
    // Null-free fast path: the levels of all m rows are one RLE run of maxDef, so no level is
    // materialised and the values go out in one call.
    if (levels.runOf(maxDef, m) == m) {
      levels.skip(m)
      if (ids == null) writer.write(values, m, v, rowId)
      else dictionaryDecoder.readIds(m, ids, rowId)
      return
    }
    var nulls = 0
    if (levelBuf.length < m) levelBuf = new Array[Int](math.max(m, levelBuf.length * 2))
    val lv = levelBuf
    levels.readInts(m, lv, 0)
    var i = 0
    while (i < m) {
      val l = lv(i)
      var j = i + 1
      while (j < m && lv(j) == l) j += 1
      if (l == maxDef) {
        if (ids == null) writer.write(values, j - i, v, rowId + i)
        else dictionaryDecoder.readIds(j - i, ids, rowId + i)
      } else if (l >= 0 && l < maxDef) { v.putNulls(rowId + i, j - i); nulls += j - i }
      else throw new DecodeException(s"definition level $l outside [0, $maxDef]")
      i = j
    }
    pageNulls += nulls
  }

  private def skipRows(n: Long): Unit = {
    var left = n
    while (left > 0) {
      if (pageRemaining == 0) {
        if (!nextDataPageHeader()) throw noMorePages()
        val rows = pages.currentPageRows
        if (rows <= left) {
          pages.skipPage()
          left -= rows
          rowsConsumed += rows
        } else if (pages.currentPageIsPruned) throw intoPrunedPage(s"a skip of $left rows ends", rows)
        else loadCurrentPage()
      } else {
        val m = math.min(left, pageRemaining.toLong).toInt
        if (levels == null) values.skip(m)
        else {
          val present = levels.skipCounting(m, maxDef)
          pageNulls += m - present
          values.skip(present)
        }
        left -= m
        pageRemaining -= m
        rowsConsumed += m
        if (pageRemaining == 0) pageDone()
      }
    }
  }

  private def loadNextPage(): Unit =
    while (pageRemaining == 0) {
      if (!nextDataPageHeader()) throw noMorePages()
      if (pages.currentPageIsPruned) throw intoPrunedPage("a read", pages.currentPageRows)
      loadCurrentPage()
    }

  private def loadCurrentPage(): Unit = {
    pageNullsExpected = -1
    pageNulls = 0
    val left = rowCount - rowsConsumed
    pages.readDataPage() match {
      case p: DataPageV1 =>
        var off = p.offset
        val end = p.offset + p.length
        if (maxDef > 0) {
          levels = v1Levels(p, off, p.definitionLevelEncoding, defBitWidth, repetition = false)
          off = levelsEnd
        } else levels = null
        if (p.numValues > left) throw tooManyRows(p.numValues, left)
        initValues(p.valueEncoding, p.bytes, off, end - off, p.numValues)
        pageRemaining = p.numValues
      case p: DataPageV2 =>
        if (p.numRows != p.numValues)
          throw pages.error(s"data page v2 of a flat column has num_rows ${p.numRows} != num_values ${p.numValues}")
        if (p.numNulls > p.numValues)
          throw pages.error(s"data page v2 has num_nulls ${p.numNulls} > num_values ${p.numValues}")
        if (p.numRows > left) throw tooManyRows(p.numRows, left)
        if (maxDef > 0) {
          levels = v2Levels(p.levelBytes, p.levelOffset + p.repLevelsLength, p.defLevelsLength, defBitWidth,
            repetition = false)
          pageNullsExpected = p.numNulls
        } else {
          if (p.numNulls != 0) throw pages.error(s"required column has a data page v2 with ${p.numNulls} nulls")
          levels = null
        }
        initValues(p.valueEncoding, p.valueBytes, p.valueOffset, p.valueLength, p.numValues - p.numNulls)
        pageRemaining = p.numRows
    }
  }
}
