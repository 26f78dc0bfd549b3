package lmspark.column

import java.nio.BufferUnderflowException

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.format.{Encoding, PageType}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

import lmspark.decode._
import lmspark.io.{DataPageV1, HeldDictionaryPage, PageSource}

/** The page loop every leaf reader of one row group shares, whatever its levels: the dictionary
  * page passed undecoded and decoded once, when the first dictionary-encoded data page is loaded (so
  * a chunk whose loaded pages are all plain, as after a writer's mid-chunk fallback, never
  * decompresses it), or `preloaded`, decoded for dictionary pruning, with `pages` starting past it;
  * page switching (dictionary pages on the way, pruned pages of a [[PageSource.forPages]] source),
  * the values decoder of each page (the dictionary's ids or [[PageDecoders]], per page: chunks fall
  * back mid-chunk), v1 level sections, and the structural checks against the row group: a page may
  * not hold more rows than the row group has left, and once its last row is consumed no later data
  * page may hold rows. Subclasses decode levels and values into vectors.
  *
  * Invariants: `rowsConsumed <= rowCount`; `pageRemaining` is the number of rows of the current
  * page not yet read or skipped (0 = no current page). Malformed input ends in a
  * [[ParquetDecodeException]] naming file, column, row group and, while a page is being decoded, the
  * page ([[PageSource.error]]). */
abstract class LeafPageLoop(descriptor: ColumnDescriptor, protected val pages: PageSource, protected val rowCount: Long)
    extends AutoCloseable {

  protected val ctx = pages.context
  private[this] val physical: PrimitiveTypeName = descriptor.getPrimitiveType.getPrimitiveTypeName
  private[this] val typeLength: Int = descriptor.getPrimitiveType.getTypeLength

  protected var rowsConsumed: Long = 0L
  protected var pageRemaining: Int = 0
  /** The `num_values` of the data page headers passed so far, and whether a pruned page was passed
    * (whose header is not read). */
  protected var valuesSeen: Long = 0L
  protected var prunedSeen: Boolean = false
  /** Whether the chunk was checked to hold no rows after the row group's last one. */
  private[this] var endChecked: Boolean = false

  private[this] var dictionary: Dictionary = _
  /** The chunk's dictionary page, passed but not decoded yet (null: none, or decoded). */
  private[this] var heldDictionary: HeldDictionaryPage = _
  protected var dictionaryDecoder: DictionaryIdsDecoder = _
  private[this] val pageDecoders = new PageDecoders(physical, typeLength)
  /** The current page's values decoder. */
  protected var values: ValuesDecoder = _

  // Level decoders: index 0 for definition levels, 1 for repetition levels.
  private[this] val rleLevels = new Array[RleBitPackedDecoder](2)
  private[this] val legacyLevels = new Array[LegacyBitPackedLevelDecoder](2)
  /** Where the level section [[v1Levels]] read last ends in its page. */
  protected var levelsEnd: Int = 0

  /** Pages read / decompressed so far (the dictionary page once a data page needed it). */
  def pagesRead: Int = pages.pagesRead

  /** Bytes read from the file so far. */
  def bytesRead: Long = pages.bytesRead

  override def close(): Unit = { heldDictionary = null; pages.close() }

  /** A new chunk dictionary (the preloaded one, or the chunk's dictionary page). */
  protected def dictionaryInstalled(d: Dictionary): Unit = ()

  /** Adds context to decoder errors; leaves Spark's own exceptions (rebase, overflow) alone. */
  protected def translate: PartialFunction[Throwable, Nothing] = {
    case e: DecodeException =>
      throw pages.error(s"${e.getMessage} near row $rowsConsumed", e)
    case e @ (_: IndexOutOfBoundsException | _: BufferUnderflowException | _: NegativeArraySizeException) =>
      throw pages.error(s"malformed page data near row $rowsConsumed: $e", e)
  }

  /** After the row group's last row: no later data page may hold rows (pages whose rows add up to
    * more than the row group's are malformed, not silently cut). Parses the remaining page headers
    * only, once. */
  protected def checkEnd(): Unit = if (!endChecked && pageRemaining == 0) {
    endChecked = true
    while (nextDataPageHeader()) {
      if (!pages.currentPageIsPruned && pages.currentPageRows > 0)
        throw pages.error(s"data page holds ${pages.currentPageRows} rows after the row group's last row " +
          s"(the row group has $rowCount rows; the chunk's pages hold more)")
      pages.skipPage()
    }
    chunkEnded()
  }

  /** After [[checkEnd]] has passed every page of the chunk. */
  protected def chunkEnded(): Unit = ()

  /** A read or partial skip reached a page that page pruning removed: the caller's selection and
    * the kept pages disagree (a bug, not a malformed file). */
  protected def intoPrunedPage(what: String, rows: Int): IllegalStateException =
    new IllegalStateException(s"internal error: $what inside page ${pages.currentPageOrdinal} (rows " +
      s"[$rowsConsumed, ${rowsConsumed + rows})), which page pruning removed and which was never read ($ctx)")

  protected def noMorePages(): ParquetDecodeException =
    pages.error(s"column chunk has no more data pages after $rowsConsumed of $rowCount rows " +
      "(truncated chunk or wrong row count?)")

  protected def tooManyRows(rows: Int, left: Long): ParquetDecodeException =
    pages.error(s"data page holds $rows rows but only $left of the row group's $rowCount rows remain " +
      s"(its first row would be row $rowsConsumed; the chunk's pages hold more rows than the row group)")

  /** Moves to the next data page header (or pruned page), holding a dictionary page on the way. */
  protected def nextDataPageHeader(): Boolean = {
    while (pages.nextPage()) {
      if (pages.currentPageIsPruned) { prunedSeen = true; return true }
      pages.currentPageType match {
        case PageType.DICTIONARY_PAGE => holdDictionary()
        case PageType.DATA_PAGE => valuesSeen += pages.currentHeader.getData_page_header.getNum_values; return true
        case PageType.DATA_PAGE_V2 => valuesSeen += pages.currentHeader.getData_page_header_v2.getNum_values; return true
        case other => throw pages.error(s"unexpected page type $other")
      }
    }
    false
  }

  private def holdDictionary(): Unit = {
    if (dictionary != null || heldDictionary != null) throw pages.error("column chunk has a second dictionary page")
    heldDictionary = pages.holdDictionaryPage()
  }

  protected def install(d: Dictionary): Unit = {
    dictionary = d
    dictionaryDecoder = new DictionaryIdsDecoder(d)
    dictionaryInstalled(d)
  }

  private def rle(slot: Int): RleBitPackedDecoder = {
    if (rleLevels(slot) == null) rleLevels(slot) = new RleBitPackedDecoder
    rleLevels(slot)
  }

  /** The levels of a v1 page's section at `off` in `encoding` (repetition levels, or definition
    * levels), `bitWidth` bits each; [[levelsEnd]] is set to where the section ends. */
  protected def v1Levels(p: DataPageV1, off: Int, encoding: Encoding, bitWidth: Int, repetition: Boolean): LevelDecoder = {
    val end = p.offset + p.length
    val slot = if (repetition) 1 else 0
    val kind = if (repetition) "repetition" else "definition"
    encoding match {
      case Encoding.RLE =>
        if (end - off < 4) throw pages.error(s"data page too short for its $kind level length")
        val len = LittleEndian.int32(p.bytes, off)
        if (len < 0 || len > end - off - 4)
          throw pages.error(s"$kind levels length $len does not fit the page (${end - off - 4} bytes)")
        val d = rle(slot)
        d.init(p.bytes, off + 4, len, bitWidth)
        levelsEnd = off + 4 + len
        d
      case Encoding.BIT_PACKED =>
        val len = (p.numValues.toLong * bitWidth + 7) / 8
        if (len > end - off) throw pages.error(s"BIT_PACKED $kind levels need $len bytes, page has ${end - off}")
        if (legacyLevels(slot) == null) legacyLevels(slot) = new LegacyBitPackedLevelDecoder
        legacyLevels(slot).init(p.bytes, off, len.toInt, bitWidth)
        levelsEnd = off + len.toInt
        legacyLevels(slot)
      case other => throw pages.error(s"$kind level encoding $other is not supported")
    }
  }

  /** The RLE levels (repetition levels, or definition levels) of a v2 page's section
    * `[off, off + len)` of `bytes`. */
  protected def v2Levels(bytes: Array[Byte], off: Int, len: Int, bitWidth: Int, repetition: Boolean): LevelDecoder = {
    val d = rle(if (repetition) 1 else 0)
    d.init(bytes, off, len, bitWidth)
    d
  }

  /** Sets [[values]] to the decoder of a page's `numValues` values in `encoding`, at
    * `[offset, offset + length)` of `bytes`. */
  protected def initValues(encoding: Encoding, bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    values = encoding match {
      case Encoding.PLAIN_DICTIONARY | Encoding.RLE_DICTIONARY =>
        if (dictionaryDecoder == null && heldDictionary != null) {
          val held = heldDictionary
          heldDictionary = null
          install(ChunkDictionary.decodeHeld(pages, held, descriptor.getPrimitiveType))
        }
        if (dictionaryDecoder == null)
          throw pages.error(s"data page is $encoding encoded but the column chunk has no dictionary page")
        dictionaryDecoder
      case other => pageDecoders.forEncoding(other)
    }
    values.init(bytes, offset, length, numValues)
  }
}
