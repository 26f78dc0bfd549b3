package lmspark.column

import java.nio.BufferUnderflowException

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.format.{Encoding, PageType}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.execution.vectorized.WritableColumnVector

import lmspark.decode._
import lmspark.io.{DataPageV1, DataPageV2, PageSource}

/** The page loop for one flat leaf (max repetition level 0, max definition level 0 or 1) of one
  * row group: reads the dictionary page once, decodes definition levels and values page by page,
  * switches between the dictionary decoder and [[PageDecoders]] per page (chunks that fall back
  * mid-chunk), and skips whole pages by their header row count without decompressing them. Batches
  * made only of dictionary-encoded rows may come back dictionary-encoded (ids + Spark dictionary,
  * decoded lazily), as [[DictionaryPreservation]] decides; other batches hold values. A batch may
  * be written by several `read(n, v, rowId)` calls (appends), with skips between them.
  *
  * With a [[PageSource]] of some pages only ([[PageSource.forPages]]), pruned pages are skipped
  * whole by their offset-index row count; reading a row of one, or a skip that ends inside one,
  * is an internal error (the selection must never select rows of a pruned page).
  *
  * Structural checks against the row group: a page may not hold more rows than the row group has
  * left, and once the row group's last row is consumed no later data page may hold rows (the pages'
  * rows must add up to the row group's); a v2 page read through must have as many null definition
  * levels as its `num_nulls`.
  *
  * `preloaded`, when given, is the chunk's dictionary page already decoded ([[ChunkDictionary.read]],
  * for dictionary pruning), and `pages` starts just past it.
  *
  * Invariants: `rowsConsumed <= rowCount`; `pageRemaining` is the number of rows of the current
  * page not yet read or skipped (0 = no current page); `levels` is null iff `maxDef == 0`.
  * Malformed input ends in a [[ParquetDecodeException]] naming file, column, row group and, while a
  * page is being decoded, the page ([[PageSource.error]]). */
final class FlatColumnReader(
    descriptor: ColumnDescriptor,
    pages: PageSource,
    rowCount: Long,
    writer: VectorWriter,
    preserveDictionary: Boolean,
    preloaded: Dictionary = null)
    extends ColumnReader {

  private[this] val ctx = pages.context
  private[this] val physical: PrimitiveTypeName = descriptor.getPrimitiveType.getPrimitiveTypeName
  private[this] val typeLength: Int = descriptor.getPrimitiveType.getTypeLength
  private[this] val maxDef: Int = descriptor.getMaxDefinitionLevel
  private[this] val defBitWidth: Int = 32 - Integer.numberOfLeadingZeros(maxDef)

  require(descriptor.getMaxRepetitionLevel == 0 && maxDef <= 1,
    s"FlatColumnReader needs a flat column, got ${ctx.columnPath} with max repetition level " +
      s"${descriptor.getMaxRepetitionLevel} and max definition level $maxDef")

  private[this] var rowsConsumed: Long = 0L
  private[this] var pageRemaining: Int = 0
  /** The current page's `num_nulls` when it is a v2 page of a nullable column, else -1. */
  private[this] var pageNullsExpected: Int = -1
  /** Null definition levels seen in the current page (only while `pageNullsExpected >= 0`). */
  private[this] var pageNulls: Int = 0
  /** Whether the chunk was checked to hold no rows after the row group's last one. */
  private[this] var endChecked: Boolean = false

  private[this] var dictionary: Dictionary = _
  private[this] var dictionaryDecoder: DictionaryIdsDecoder = _
  private[this] val pageDecoders = new PageDecoders(physical, typeLength)
  private[this] var values: ValuesDecoder = _
  private[this] val preservation = new DictionaryPreservation(preserveDictionary, writer)

  private[this] val rleLevels = new RleBitPackedDecoder
  private[this] var legacyLevels: LegacyBitPackedLevelDecoder = _
  private[this] var levels: LevelDecoder = _
  private[this] var levelBuf: Array[Int] = new Array[Int](1024)

  if (preloaded != null) install(preloaded)

  override def vectorDictionary: SparkDictionary = preservation.current

  override def pagesRead: Int = pages.pagesRead
  override def bytesRead: Long = pages.bytesRead

  override def close(): Unit = pages.close()

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

  /** Adds context to decoder errors; leaves Spark's own exceptions (rebase, overflow) alone. */
  private def translate: PartialFunction[Throwable, Nothing] = {
    case e: DecodeException =>
      throw pages.error(s"${e.getMessage} near row $rowsConsumed", e)
    case e @ (_: IndexOutOfBoundsException | _: BufferUnderflowException | _: NegativeArraySizeException) =>
      throw pages.error(s"malformed page data near row $rowsConsumed: $e", e)
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

  /** After the row group's last row: no later data page may hold rows (pages whose rows add up to
    * more than the row group's are malformed, not silently cut). Parses the remaining page headers
    * only, once. */
  private def checkEnd(): Unit = if (!endChecked && pageRemaining == 0) {
    endChecked = true
    while (nextDataPageHeader()) {
      if (!pages.currentPageIsPruned && pages.currentPageRows > 0)
        throw pages.error(s"data page holds ${pages.currentPageRows} rows after the row group's last row " +
          s"(the row group has $rowCount rows; the chunk's pages hold more)")
      pages.skipPage()
    }
  }

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

  /** A read or partial skip reached a page that page pruning removed: the caller's selection and
    * the kept pages disagree (a bug, not a malformed file). */
  private def intoPrunedPage(what: String, rows: Int): IllegalStateException =
    new IllegalStateException(s"internal error: $what inside page ${pages.currentPageOrdinal} (rows " +
      s"[$rowsConsumed, ${rowsConsumed + rows})), which page pruning removed and which was never read ($ctx)")

  private def noMorePages(): ParquetDecodeException =
    pages.error(s"column chunk has no more data pages after $rowsConsumed of $rowCount rows " +
      "(truncated chunk or wrong row count?)")

  /** Moves to the next data page header (or pruned page), reading a dictionary page on the way. */
  private def nextDataPageHeader(): Boolean = {
    while (pages.nextPage()) {
      if (pages.currentPageIsPruned) return true
      pages.currentPageType match {
        case PageType.DICTIONARY_PAGE => readDictionary()
        case PageType.DATA_PAGE | PageType.DATA_PAGE_V2 => return true
        case other => throw pages.error(s"unexpected page type $other")
      }
    }
    false
  }

  private def loadNextPage(): Unit =
    while (pageRemaining == 0) {
      if (!nextDataPageHeader()) throw noMorePages()
      if (pages.currentPageIsPruned) throw intoPrunedPage("a read", pages.currentPageRows)
      loadCurrentPage()
    }

  private def readDictionary(): Unit = {
    if (dictionary != null) throw pages.error("column chunk has a second dictionary page")
    install(ChunkDictionary.decode(pages, descriptor.getPrimitiveType))
  }

  private def install(d: Dictionary): Unit = {
    dictionary = d
    dictionaryDecoder = new DictionaryIdsDecoder(d)
    preservation.setChunkDictionary(d)
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
          p.definitionLevelEncoding match {
            case Encoding.RLE =>
              if (end - off < 4) throw pages.error("data page too short for its definition level length")
              val len = LittleEndian.int32(p.bytes, off)
              if (len < 0 || len > end - off - 4)
                throw pages.error(s"definition levels length $len does not fit the page (${end - off - 4} bytes)")
              rleLevels.init(p.bytes, off + 4, len, defBitWidth)
              levels = rleLevels
              off += 4 + len
            case Encoding.BIT_PACKED =>
              val len = ((p.numValues.toLong * defBitWidth + 7) / 8)
              if (len > end - off) throw pages.error(s"BIT_PACKED definition levels need $len bytes, page has ${end - off}")
              if (legacyLevels == null) legacyLevels = new LegacyBitPackedLevelDecoder
              legacyLevels.init(p.bytes, off, len.toInt, defBitWidth)
              levels = legacyLevels
              off += len.toInt
            case other => throw pages.error(s"definition level encoding $other is not supported")
          }
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
          rleLevels.init(p.levelBytes, p.levelOffset + p.repLevelsLength, p.defLevelsLength, defBitWidth)
          levels = rleLevels
          pageNullsExpected = p.numNulls
        } else {
          if (p.numNulls != 0) throw pages.error(s"required column has a data page v2 with ${p.numNulls} nulls")
          levels = null
        }
        initValues(p.valueEncoding, p.valueBytes, p.valueOffset, p.valueLength, p.numValues - p.numNulls)
        pageRemaining = p.numRows
    }
  }

  private def tooManyRows(rows: Int, left: Long): ParquetDecodeException =
    pages.error(s"data page holds $rows rows but only $left of the row group's $rowCount rows remain " +
      s"(its first row would be row $rowsConsumed; the chunk's pages hold more rows than the row group)")

  private def initValues(encoding: Encoding, bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    values = encoding match {
      case Encoding.PLAIN_DICTIONARY | Encoding.RLE_DICTIONARY =>
        if (dictionaryDecoder == null)
          throw pages.error(s"data page is $encoding encoded but the column chunk has no dictionary page")
        dictionaryDecoder
      case other => pageDecoders.forEncoding(other)
    }
    values.init(bytes, offset, length, numValues)
  }
}
