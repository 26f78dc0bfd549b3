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
  * Invariants: `rowsConsumed <= rowCount`; `pageRemaining` is the number of rows of the current
  * page not yet read or skipped (0 = no current page); `levels` is null iff `maxDef == 0`.
  * Malformed input ends in a [[ParquetDecodeException]] naming file, column and row group. */
final class FlatColumnReader(
    descriptor: ColumnDescriptor,
    pages: PageSource,
    rowCount: Long,
    writer: VectorWriter,
    preserveDictionary: Boolean)
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

  private[this] var dictionary: Dictionary = _
  private[this] var dictionaryDecoder: DictionaryIdsDecoder = _
  private[this] val pageDecoders = new PageDecoders(physical, typeLength)
  private[this] var values: ValuesDecoder = _
  private[this] val preservation = new DictionaryPreservation(preserveDictionary, writer)

  private[this] val rleLevels = new RleBitPackedDecoder
  private[this] var legacyLevels: LegacyBitPackedLevelDecoder = _
  private[this] var levels: LevelDecoder = _
  private[this] var levelBuf: Array[Int] = new Array[Int](1024)

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
    try readRows(n, vector, rowId)
    catch translate
  }

  override def skip(n: Long): Unit = {
    if (n < 0) throw new IllegalArgumentException(s"negative row count $n")
    if (rowsConsumed + n > rowCount)
      throw ctx.error(s"cannot skip $n rows: only ${rowCount - rowsConsumed} of $rowCount rows remain")
    try skipRows(n)
    catch translate
  }

  /** Adds context to decoder errors; leaves Spark's own exceptions (rebase, overflow) alone. */
  private def translate: PartialFunction[Throwable, Nothing] = {
    case e: DecodeException =>
      throw ctx.error(s"${e.getMessage} near row $rowsConsumed", e)
    case e @ (_: IndexOutOfBoundsException | _: BufferUnderflowException | _: NegativeArraySizeException) =>
      throw ctx.error(s"malformed page data near row $rowsConsumed: $e", e)
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
      } else if (l >= 0 && l < maxDef) v.putNulls(rowId + i, j - i)
      else throw new DecodeException(s"definition level $l outside [0, $maxDef]")
      i = j
    }
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
        else values.skip(levels.skipCounting(m, maxDef))
        left -= m
        pageRemaining -= m
        rowsConsumed += m
      }
    }
  }

  /** A read or partial skip reached a page that page pruning removed: the caller's selection and
    * the kept pages disagree (a bug, not a malformed file). */
  private def intoPrunedPage(what: String, rows: Int): IllegalStateException =
    new IllegalStateException(s"internal error: $what inside page ${pages.currentPageOrdinal} (rows " +
      s"[$rowsConsumed, ${rowsConsumed + rows})), which page pruning removed and which was never read ($ctx)")

  private def noMorePages(): ParquetDecodeException =
    ctx.error(s"column chunk has no more data pages after $rowsConsumed of $rowCount rows " +
      "(truncated chunk or wrong row count?)")

  /** Moves to the next data page header (or pruned page), reading a dictionary page on the way. */
  private def nextDataPageHeader(): Boolean = {
    while (pages.nextPage()) {
      if (pages.currentPageIsPruned) return true
      pages.currentPageType match {
        case PageType.DICTIONARY_PAGE => readDictionary()
        case PageType.DATA_PAGE | PageType.DATA_PAGE_V2 => return true
        case other => throw ctx.error(s"unexpected page type $other")
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
    if (dictionary != null) throw ctx.error("column chunk has a second dictionary page")
    val page = pages.readDictionaryPage()
    if (page.encoding != Encoding.PLAIN && page.encoding != Encoding.PLAIN_DICTIONARY)
      throw ctx.error(s"dictionary page encoding ${page.encoding} is not supported")
    dictionary = Dictionary.decodePlain(physical, typeLength, page.numValues, page.bytes, page.offset, page.length)
    dictionaryDecoder = new DictionaryIdsDecoder(dictionary)
    preservation.setChunkDictionary(dictionary)
  }

  private def loadCurrentPage(): Unit = {
    pages.readDataPage() match {
      case p: DataPageV1 =>
        var off = p.offset
        val end = p.offset + p.length
        if (maxDef > 0) {
          p.definitionLevelEncoding match {
            case Encoding.RLE =>
              if (end - off < 4) throw ctx.error("data page too short for its definition level length")
              val len = LittleEndian.int32(p.bytes, off)
              if (len < 0 || len > end - off - 4)
                throw ctx.error(s"definition levels length $len does not fit the page (${end - off - 4} bytes)")
              rleLevels.init(p.bytes, off + 4, len, defBitWidth)
              levels = rleLevels
              off += 4 + len
            case Encoding.BIT_PACKED =>
              val len = ((p.numValues.toLong * defBitWidth + 7) / 8)
              if (len > end - off) throw ctx.error(s"BIT_PACKED definition levels need $len bytes, page has ${end - off}")
              if (legacyLevels == null) legacyLevels = new LegacyBitPackedLevelDecoder
              legacyLevels.init(p.bytes, off, len.toInt, defBitWidth)
              levels = legacyLevels
              off += len.toInt
            case other => throw ctx.error(s"definition level encoding $other is not supported")
          }
        } else levels = null
        initValues(p.valueEncoding, p.bytes, off, end - off, p.numValues)
        pageRemaining = p.numValues
      case p: DataPageV2 =>
        if (p.numRows != p.numValues)
          throw ctx.error(s"data page v2 of a flat column has num_rows ${p.numRows} != num_values ${p.numValues}")
        if (p.numNulls > p.numValues)
          throw ctx.error(s"data page v2 has num_nulls ${p.numNulls} > num_values ${p.numValues}")
        if (maxDef > 0) {
          rleLevels.init(p.levelBytes, p.levelOffset + p.repLevelsLength, p.defLevelsLength, defBitWidth)
          levels = rleLevels
        } else {
          if (p.numNulls != 0) throw ctx.error(s"required column has a data page v2 with ${p.numNulls} nulls")
          levels = null
        }
        initValues(p.valueEncoding, p.valueBytes, p.valueOffset, p.valueLength, p.numValues - p.numNulls)
        pageRemaining = p.numRows
    }
    if (pageRemaining > rowCount - rowsConsumed)
      throw ctx.error(s"data page at row $rowsConsumed holds $pageRemaining rows but only " +
        s"${rowCount - rowsConsumed} of the row group's $rowCount rows remain")
  }

  private def initValues(encoding: Encoding, bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    values = encoding match {
      case Encoding.PLAIN_DICTIONARY | Encoding.RLE_DICTIONARY =>
        if (dictionaryDecoder == null)
          throw ctx.error(s"data page is $encoding encoded but the column chunk has no dictionary page")
        dictionaryDecoder
      case other => pageDecoders.forEncoding(other)
    }
    values.init(bytes, offset, length, numValues)
  }
}
