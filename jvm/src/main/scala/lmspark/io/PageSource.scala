package lmspark.io

import org.apache.parquet.format.{PageHeader, PageType}
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, CompressionCodecName}
import org.apache.parquet.io.SeekableInputStream

import lmspark.decode.Dictionary

/** Reads the pages of one column chunk: the page walk and its protocol. How the chunk's bytes are
  * held is [[ChunkWindow]]'s (a bounded window over the file), header parsing and checks
  * [[PageHeaderReader]]'s, CRC checks and decompression [[PageDecompression]]'s, and where the kept
  * pages of a pruned chunk lie [[PrunedLayout]]'s. The first window is read when the source is
  * made, so a chunk that fits the window is read with one request.
  *
  * Pages handed out may point into the window (uncompressed data, levels of uncompressed v2 pages):
  * they stay valid until the next `nextPage` (as [[Page]] says), and the window is then `shared`
  * (its next refill allocates a new array). Levels of a compressed v2 page are copied out, so
  * compressed chunks reuse one array for the whole walk.
  *
  * Protocol: [[nextPage]] parses the next page header (INDEX_PAGEs are passed over) and then exactly
  * one of [[readDictionaryPage]], [[holdDictionaryPage]], [[readDataPage]] or [[skipPage]] consumes
  * that page. Skipping never decompresses nor checks the CRC; a held dictionary page is checked and
  * decompressed only if [[readHeld]] is asked for it. `pagesRead` counts pages whose data was
  * handed out (decompressed); `bytesRead` counts bytes read from the file so far (each byte once
  * per walk).
  * Errors name the page they concern (`page N of the chunk`, [[error]] for decoders' errors).
  *
  * A source made by [[PageSource.forPages]] holds only some data pages (per the chunk's checked
  * offset index): it still yields every page in order, but a pruned page has no header
  * (`currentPageIsPruned`), its row count comes from the offset index, and it can only be skipped.
  *
  * A source made by [[PageSource.fromBytes]] has no stream: its window is the caller's array (never
  * written to) and holds the whole chunk.
  *
  * Invariants: `chunkStart <= pos <= chunkEnd`; a header is "current" between `nextPage() == true`
  * and the call that consumes it (`dataStart >= 0`, or `prunedCurrent` for a pruned page). Not
  * thread-safe. */
final class PageSource private (
    in: SeekableInputStream,
    val context: ChunkContext,
    val codec: CompressionCodecName,
    decompressor: Decompressor,
    verifyChecksums: Boolean,
    maxUncompressedPageSize: Long,
    chunkStart: Long,
    chunkEnd: Long,
    fileOffsetKnown: Boolean,
    layout: PrunedLayout,
    windowBytes: Int,
    resumeAt: Long) {

  /** Where the walk starts: the chunk's start, or just past a dictionary page the caller read. */
  private[this] val walkStart: Long = if (resumeAt >= 0) resumeAt else chunkStart

  private val window = new ChunkWindow(in, context, chunkStart, chunkEnd, windowBytes, walkStart)
  private[this] val headers = new PageHeaderReader(window, context, chunkStart)
  private[this] val data = new PageDecompression(codec, decompressor, verifyChecksums, maxUncompressedPageSize, context,
    () => describePage)

  private[this] var pos: Long = walkStart
  private[this] var header: PageHeader = _
  private[this] var headerStart: Long = -1L // start of the current page's header
  private[this] var dataStart: Long = -1L // start of the current page's (compressed) data, -1 if none
  // Of the current page among the chunk's non-index pages (the dictionary page read by the caller counts).
  private[this] var ordinal: Int = if (resumeAt >= 0) 0 else -1
  private[this] var pages: Int = 0
  private[this] var dataPagesDecompressed: Int = 0
  private[this] var dataPage: Int = -1 // pruned layouts: index of the current data page in the offset index
  private[this] var prunedCurrent: Boolean = false
  // While [[readHeld]] decompresses a held dictionary page: its description, which errors name.
  private[this] var describing: String = null
  // Decompressed pages kept for a reopened source (keepDecompressed), shared with it; null: none kept.
  private var memo: PageMemo = null
  // Where dictionaries decoded from this chunk's held dictionary page go (keepDictionariesWith); null: nowhere.
  private[this] var dictionaryKeeper: (Dictionary, Long) => Unit = null

  /** Hands each dictionary a reader decodes from this chunk's held dictionary page
    * ([[lmspark.column.ChunkDictionary.decodeHeld]]) to `keep`, with the file offset just past that
    * page, when the dictionary owns its bytes (a decompressed page, not a view into the window): the
    * scan keeps it in the executor's cache, and a later read of the chunk starts past the page. */
  def keepDictionariesWith(keep: (Dictionary, Long) => Unit): this.type = { dictionaryKeeper = keep; this }

  /** Told by [[lmspark.column.ChunkDictionary.decodeHeld]] of the `dictionary` it decoded from
    * `held`, whose data [[readHeld]] returned as `page`. */
  def decodedHeld(held: HeldDictionaryPage, page: DictionaryPage, dictionary: Dictionary): Unit =
    if (dictionaryKeeper != null && page.offset == 0 && page.length == page.bytes.length)
      dictionaryKeeper(dictionary, held.dataStart + held.header.compressed_page_size)

  /** Pages whose data was read (decompressed) so far, dictionary page included. */
  def pagesRead: Int = pages

  /** Data pages whose data was read (decompressed) so far. */
  def dataPagesRead: Int = dataPagesDecompressed

  /** Bytes read from the file for this chunk so far (the window's reads; 0 for a reopened source
    * that reuses its window). */
  def bytesRead: Long = window.bytesRead

  /** Decompressed bytes produced so far. */
  def bytesDecompressed: Long = data.bytesDecompressed

  /** The file offset where the walk stands: just past the last page consumed (or of the current
    * page's header, while one is current). */
  def filePosition: Long = pos

  /** The page whose data is being decoded (the last one read), e.g. `page 3 of the chunk
    * (DATA_PAGE at chunk offset 1234, file offset 5678)`, for errors raised while decoding it. */
  def describeCurrentPage: String =
    if (prunedCurrent) s"page $ordinal of the chunk (pruned)"
    else if (header == null) s"no page (${if (ordinal < 0) "none read yet" else s"$ordinal was the chunk's last"})"
    else describePage

  /** An error naming `what`, the current page ([[describeCurrentPage]]) and the chunk. */
  def error(what: String, cause: Throwable = null): lmspark.column.ParquetDecodeException =
    if (header == null && !prunedCurrent) {
      val where = if (ordinal < 0) "before the chunk's first page" else s"after page $ordinal, the chunk's last"
      context.error(s"$what, $where", cause)
    } else context.error(s"$what in $describeCurrentPage", cause)

  /** Bytes this source holds now (its window's array), for tests of the memory bound. */
  def bytesHeld: Int = window.bytesHeld

  /** A fresh source over the same chunk (or the same kept pages), from where this one started,
    * sharing nothing mutable with this one. When this source's window holds the whole chunk (a
    * chunk that fits the window, or bytes given to `fromBytes`), the new source reuses it and reads
    * nothing from the file (`bytesRead` is 0); otherwise it reads the chunk again, window by
    * window. */
  def reopen(): PageSource = {
    val s = new PageSource(in, context, codec, decompressor, verifyChecksums, maxUncompressedPageSize, chunkStart,
      chunkEnd, fileOffsetKnown, layout, windowBytes, resumeAt)
    s.memo = memo
    if (holdsWholeChunk) {
      window.shared = true
      s.window.adopt(window.buf, window.origin, window.start, window.end)
    } else s.prime()
    s
  }

  /** From now on, keeps the data of the compressed pages this source decompresses, up to `maxBytes`
    * of it, for the sources [[reopen]] makes: they hand those pages out without decompressing them
    * again (and without counting them in `bytesDecompressed`). For a chunk read twice in one row
    * group, such as a struct field that a filter reads first and its struct's output reads again.
    * Pages are read-only ([[Page]]), so sharing their arrays is safe. */
  def keepDecompressed(maxBytes: Long): Unit =
    if (decompressor != null && memo == null) memo = new PageMemo(maxBytes)

  /** Whether the window holds every byte of the chunk (so a reopened source needs no read). */
  private def holdsWholeChunk: Boolean =
    window.buf != null && (!window.hasStream || (layout == null && window.holds(walkStart, chunkEnd)))

  /** Reads the first window: from where the walk starts (for a source of some pages, from the first
    * byte its walk needs), so that a chunk that fits the window is read with one request. */
  private def prime(): Unit =
    if (layout == null) {
      if (walkStart < chunkEnd) window.ensure(walkStart, 1)
    } else if (layout.dictionaryLimit > walkStart) {
      window.limit = layout.dictionaryLimit
      window.ensure(walkStart, 1)
    } else {
      val first = layout.firstKept
      if (first >= 0) {
        window.limit = layout.segmentEnd(first)
        window.ensure(layout.start(first), 1)
      }
    }

  /** Parses the next page header, passing over index pages. False at the end of the chunk. For a
    * source of some pages only, the next page may be a pruned one (no header is parsed). */
  def nextPage(): Boolean = {
    if (dataStart >= 0 || prunedCurrent) skipPage()
    if (layout == null) {
      while (pos < chunkEnd) {
        val h = parseHeader()
        if (h.getType == PageType.INDEX_PAGE) {
          pos = dataStart + h.compressed_page_size
          dataStart = -1
        } else {
          header = h
          ordinal += 1
          return true
        }
      }
      header = null
      false
    } else nextOfLayout()
  }

  /** Whether the current page was pruned: not read from the file, only `currentPageRows`,
    * `currentPageOrdinal` and `skipPage` apply to it. */
  def currentPageIsPruned: Boolean = {
    if (!prunedCurrent) requireHeader()
    prunedCurrent
  }

  /** 0-based ordinal of the current page in the chunk, dictionary page included, index pages not. */
  def currentPageOrdinal: Int = { if (!prunedCurrent) requireHeader(); ordinal }

  /** The current page header (after `nextPage() == true`); not for a pruned page. */
  def currentHeader: PageHeader = { requireHeader(); header }

  /** The current page's type; not for a pruned page (whose type is not known: check
    * `currentPageIsPruned` first). */
  def currentPageType: PageType = { requireHeader(); header.getType }

  /** Rows in the current data page, from its header alone (v1: num_values, valid for flat columns;
    * v2: num_rows), or for a pruned page from the offset index. */
  def currentPageRows: Int = {
    if (prunedCurrent) return layout.rows(dataPage, context)
    requireHeader()
    header.getType match {
      case PageType.DATA_PAGE =>
        val n = header.data_page_header.num_values
        if (n < 0) throw error(s"data page has negative num_values $n")
        n
      case PageType.DATA_PAGE_V2 =>
        val n = header.data_page_header_v2.num_rows
        if (n < 0) throw error(s"data page v2 has negative num_rows $n")
        n
      case t => throw error(s"page of type $t has no rows")
    }
  }

  /** Rows in the current data page per the chunk's offset index (a source of some pages), or -1
    * when the source has none; for a nested column, where a v1 page's `num_values` counts levels. */
  def currentPageIndexRows: Int =
    if (layout == null || dataPage < 0 || (!prunedCurrent && header == null)) -1 else layout.rows(dataPage, context)

  /** Consumes the current page without decompressing it (nor reading its bytes, when they lie
    * past the window). */
  def skipPage(): Unit = {
    if (prunedCurrent) { prunedCurrent = false; return }
    requireHeader()
    pos = dataStart + header.compressed_page_size
    dataStart = -1
  }

  /** Decompresses and returns the current page, which must be a dictionary page. */
  def readDictionaryPage(): DictionaryPage = {
    val dh = dictionaryHeader()
    val out = storedData(header.compressed_page_size, header.uncompressed_page_size)
    val page = new DictionaryPage(dh.num_values, dh.encoding, out, data.outOffset, data.outLength)
    consumed()
    page
  }

  /** Consumes the current page, which must be a dictionary page, without decompressing it (nor
    * counting it in `pagesRead`): its stored bytes stay in the window, which is marked shared so
    * that no refill overwrites them, and [[readHeld]] decompresses them if a data page needs them.
    * The header is checked as [[readDictionaryPage]] checks it. */
  def holdDictionaryPage(): HeldDictionaryPage = {
    dictionaryHeader()
    window.ensure(dataStart, header.compressed_page_size)
    window.shared = true
    val held = new HeldDictionaryPage(header, window.buf, window.index(dataStart), dataStart, describePage)
    pos = dataStart + header.compressed_page_size
    dataStart = -1
    held
  }

  /** The data of a dictionary page this source held ([[holdDictionaryPage]]), CRC-checked and
    * decompressed now, and counted in `pagesRead` and `bytesDecompressed`; errors name that page,
    * wherever the walk stands. */
  def readHeld(held: HeldDictionaryPage): DictionaryPage = {
    describing = held.description
    try {
      val h = held.header
      data.checkCrc(h, held.stored, held.storedOffset)
      val out = decompressed(held.dataStart, held.stored, held.storedOffset, h.compressed_page_size,
        h.uncompressed_page_size)
      pages += 1
      val dh = h.dictionary_page_header
      new DictionaryPage(dh.num_values, dh.encoding, out, data.outOffset, data.outLength)
    } finally describing = null
  }

  /** An error naming `what`, a dictionary page this source held, and the chunk. */
  def errorIn(held: HeldDictionaryPage, what: String, cause: Throwable = null): lmspark.column.ParquetDecodeException =
    context.error(s"$what in ${held.description}", cause)

  /** Decompresses and returns the current page, which must be a data page (v1 or v2). */
  def readDataPage(): DataPage = {
    requireHeader()
    val page = header.getType match {
      case PageType.DATA_PAGE =>
        val dh = header.data_page_header
        if (dh == null) throw error("data page without data_page_header")
        if (dh.num_values < 0) throw error(s"data page has negative num_values ${dh.num_values}")
        val out = storedData(header.compressed_page_size, header.uncompressed_page_size)
        new DataPageV1(dh.num_values, dh.encoding, dh.definition_level_encoding, dh.repetition_level_encoding,
          out, data.outOffset, data.outLength)
      case PageType.DATA_PAGE_V2 =>
        val dh = header.data_page_header_v2
        if (dh == null) throw error("data page v2 without data_page_header_v2")
        if (dh.num_values < 0 || dh.num_rows < 0 || dh.num_nulls < 0)
          throw error(s"data page v2 has negative counts (num_values ${dh.num_values}, " +
            s"num_rows ${dh.num_rows}, num_nulls ${dh.num_nulls})")
        val rl = dh.repetition_levels_byte_length
        val dl = dh.definition_levels_byte_length
        val levels = rl.toLong + dl
        if (rl < 0 || dl < 0 || levels > header.compressed_page_size || levels > header.uncompressed_page_size)
          throw error(s"data page v2 has invalid level lengths (repetition $rl, definition $dl, " +
            s"page ${header.compressed_page_size} bytes)")
        window.ensure(dataStart, header.compressed_page_size)
        val buf = window.buf
        val start = window.index(dataStart)
        data.checkCrc(header, buf, start)
        val compressedValues = header.compressed_page_size - levels.toInt
        val uncompressedValues = header.uncompressed_page_size - levels.toInt
        val valueStart = start + levels.toInt
        val out =
          if (dh.is_compressed) handedOut(decompressed(dataStart, buf, valueStart, compressedValues, uncompressedValues))
          else {
            data.outOffset = valueStart; data.outLength = compressedValues; window.shared = true; buf
          }
        // Levels stay in the window only when the values do too; otherwise they are copied out, so
        // that the window can be reused.
        val (levelBytes, levelOffset) =
          if (out eq buf) (buf, start)
          else (java.util.Arrays.copyOfRange(buf, start, valueStart), 0)
        new DataPageV2(dh.num_values, dh.num_nulls, dh.num_rows, dh.encoding, levelBytes, levelOffset, rl, dl,
          out, data.outOffset, data.outLength)
      case t => throw error(s"expected a data page, found $t")
    }
    consumed()
    dataPagesDecompressed += 1
    page
  }

  /** Drops the current page and, unless a reopened source could reuse it (it holds the whole
    * chunk), the window: a closed source holds no chunk bytes. */
  def close(): Unit = {
    header = null; dataStart = -1; prunedCurrent = false
    if (!holdsWholeChunk) window.drop(pos)
  }

  // ---- internals ----

  /** The current page's data: its stored bytes made held, CRC-checked and decompressed. */
  private def storedData(compressedSize: Int, uncompressedSize: Int): Array[Byte] = {
    window.ensure(dataStart, compressedSize)
    val start = window.index(dataStart)
    data.checkCrc(header, window.buf, start)
    handedOut(decompressed(dataStart, window.buf, start, compressedSize, uncompressedSize))
  }

  /** The data of the page whose data starts at file position `at` (or a v2 page's values), `len`
    * stored bytes at `buf(off)`: kept data when an earlier source of this chunk decompressed it
    * ([[keepDecompressed]]), else decompressed now (and kept, while the memo's bound allows). Sets
    * `data.outOffset` and `data.outLength`. */
  private def decompressed(at: Long, buf: Array[Byte], off: Int, len: Int, uncompressedSize: Int): Array[Byte] =
    if (memo == null || decompressor == null) data.decompress(buf, off, len, uncompressedSize)
    else {
      val kept = memo.get(at)
      if (kept != null && kept.length == uncompressedSize) {
        data.outOffset = 0; data.outLength = kept.length
        kept
      } else {
        val out = data.decompress(buf, off, len, uncompressedSize)
        if (data.outOffset == 0 && data.outLength == out.length) memo.put(at, out)
        out
      }
    }

  /** `out`, marking the window shared when `out` is the window (data handed out in place). */
  private def handedOut(out: Array[Byte]): Array[Byte] = {
    if (out eq window.buf) window.shared = true
    out
  }

  /** The current page's dictionary page header, checked: the page must be a dictionary page. */
  private def dictionaryHeader(): org.apache.parquet.format.DictionaryPageHeader = {
    requireHeader()
    if (header.getType != PageType.DICTIONARY_PAGE)
      throw error(s"expected a dictionary page, found ${header.getType}")
    val dh = header.dictionary_page_header
    if (dh == null) throw error("dictionary page without dictionary_page_header")
    if (dh.num_values < 0) throw error(s"dictionary page has negative num_values ${dh.num_values}")
    dh
  }

  private def requireHeader(): Unit =
    if (prunedCurrent)
      throw new IllegalStateException(s"page $ordinal of the chunk was pruned by the page index and not read: " +
        s"it can only be skipped (internal error, $context)")
    else if (header == null || dataStart < 0) throw new IllegalStateException(s"no current page ($context)")

  /** The offset in the chunk of position `p`. */
  private def chunkOffset(p: Long): Long = p - chunkStart

  /** `nextPage` for a source of some pages: the dictionary region's pages (dictionary, index), then
    * every data page of the offset index, kept ones parsed and checked against it. */
  private def nextOfLayout(): Boolean = {
    if (dataPage < 0) {
      window.limit = layout.dictionaryLimit
      while (pos < layout.dictionaryLimit) {
        val h = parseHeader()
        h.getType match {
          case PageType.INDEX_PAGE =>
            pos = dataStart + h.compressed_page_size
            dataStart = -1
          case PageType.DICTIONARY_PAGE =>
            header = h
            ordinal += 1
            return true
          case t =>
            throw context.error(s"a $t page at chunk offset ${chunkOffset(headerStart)} lies before the first data " +
              s"page of the offset index (inconsistent page index; ${PrunedLayout.DisableHint})")
        }
      }
    }
    header = null
    dataPage += 1
    if (dataPage >= layout.locations.pages) return false
    ordinal += 1
    val start = layout.start(dataPage)
    if (start < 0) {
      prunedCurrent = true
      return true
    }
    pos = start
    window.limit = layout.segmentEnd(dataPage)
    val h = parseHeader()
    layout.check(dataPage, h, start, dataStart, context)
    header = h
    true
  }

  private def consumed(): Unit = {
    pos = dataStart + header.compressed_page_size
    dataStart = -1
    pages += 1
  }

  /** `page 3 of the chunk (DATA_PAGE at chunk offset 1234, file offset 5678)` for the current page. */
  private def describePage: String = if (describing != null) describing else {
    val at = chunkOffset(headerStart)
    val file = if (fileOffsetKnown) s", file offset $headerStart" else ""
    s"page $ordinal of the chunk (${header.getType} at chunk offset $at$file)"
  }

  /** Parses the header at `pos`; `pos` and `dataStart` move past it. */
  private def parseHeader(): PageHeader = {
    headerStart = pos
    // The ordinal this page will have (a pruned layout has already counted it).
    val h = headers.parse(pos, s"page ${if (layout != null && dataPage >= 0) ordinal else ordinal + 1} of the chunk")
    pos = headers.dataStart
    dataStart = pos
    h
  }
}

object PageSource {

  /** Largest array the JVM reliably allocates. */
  private val MaxArraySize: Long = Int.MaxValue - 16

  /** Most bytes a source reads from the file at once and holds (unless one page is larger): a few
    * MiB, so that one request serves many small pages, while a task holds at most this much per
    * column whatever the row group's size. */
  val DefaultWindowBytes: Int = 4 << 20

  /** Smallest window [[windowFor]] gives: small enough for very wide scans, large enough that one
    * request still serves several pages of the usual sizes. */
  val MinWindowBytes: Int = 256 << 10

  /** What a source keeps of its decompressed pages for the sources it reopens
    * ([[PageSource.keepDecompressed]]): more than one chunk of a struct field holds in the usual
    * layouts; pages past it are decompressed again. */
  val ReopenedPageBytes: Long = 16L << 20

  /** What one task's windows may hold together when a scan reads many columns at once. */
  val TaskWindowBudget: Long = 64L << 20

  /** The window for each of `columns` columns read side by side: the task's budget shared out,
    * between [[MinWindowBytes]] and [[DefaultWindowBytes]] (a page larger than the window is still
    * held whole). */
  def windowFor(columns: Int): Int =
    if (windowForTests > 0) windowForTests
    else math.max(MinWindowBytes.toLong, math.min(DefaultWindowBytes.toLong, TaskWindowBudget / math.max(1, columns))).toInt

  /** Tests only: when positive, the window [[windowFor]] gives every scan (to drive refills through
    * whole scans on small files). */
  @volatile private[lmspark] var windowForTests: Int = 0

  /** A page source over the chunk `[start, start + totalSize)` (start = dictionary page offset if
    * the chunk has one and it is > 0, else first data page offset, i.e.
    * `ColumnChunkMetaData.getStartingPos`), from `input.resumeAt` when that is set, read window by
    * window (the first window now). Counts bytes read. With `verifyChecksums`, pages that are read
    * and carry a CRC are checked. */
  def forChunk(input: ChunkInput): PageSource = {
    val (start, end) = range(input)
    val s = new PageSource(input.in, input.context, input.chunk.getCodec, decompressorFor(input), input.verifyChecksums,
      maxPageSize(input.chunk), start, end, fileOffsetKnown = true, null, input.windowBytes, input.resumeAt)
    s.prime()
    s
  }

  /** The file ranges the source for `input` reads: with `pages` = (the chunk's offset index, the
    * kept pages) what [[forPages]] reads (the dictionary region and the kept pages' coalesced
    * ranges), otherwise what [[forChunk]] reads (the chunk from where the walk starts). For fetching
    * them ahead; empty when the chunk's metadata is unusable (the source reports that itself). */
  def rangesOf(input: ChunkInput, pages: Option[(lmspark.selection.PageLocations, Array[Int])], maxGap: Long): Seq[ByteRange] = {
    val bounds = try Some(range(input)) catch { case _: RuntimeException => None }
    if (bounds.isEmpty) return Nil
    val (start, end) = bounds.get
    val from = if (input.resumeAt >= 0) input.resumeAt else start
    pages match {
      case None => Seq(ByteRange(from, end - from))
      case Some((locations, kept)) =>
        val firstData = if (locations.pages > 0) locations.byteOffset(0) else end
        if (firstData < start || firstData > end) return Nil
        val dictionary = if (firstData > from) Seq(ByteRange(from, firstData - from)) else Nil
        val r = lmspark.selection.ScanRanges.coalesce(locations, kept, maxGap)
        dictionary ++ (0 until r.size).map(i => ByteRange(r.start(i), r.end(i) - r.start(i))).filter(_.end <= end)
    }
  }

  /** A page source for reading a chunk's dictionary page alone: over the chunk's leading region
    * (its start to its first data page, read with one request) when the chunk's offsets place the
    * first data page after its start; otherwise (writers that leave the dictionary page offset at
    * 0) over the whole chunk with a window of one byte, so that the first page's header is read
    * byte by byte and then exactly its data, and nothing past the first page is read. */
  def forDictionary(input: ChunkInput): PageSource = {
    val (start, end) = range(input)
    val firstData = input.chunk.getFirstDataPageOffset
    val (until, window) =
      if (firstData > start && firstData <= end) (firstData, math.max(1, (firstData - start).toInt))
      else (end, 1)
    val s = new PageSource(input.in, input.context, input.chunk.getCodec, decompressorFor(input), input.verifyChecksums,
      maxPageSize(input.chunk), start, until, fileOffsetKnown = true, null, window, -1L)
    s.prime()
    s
  }

  /** The chunk's byte range, checked to be one an array can hold, and `resumeAt` checked to lie in it. */
  private def range(input: ChunkInput): (Long, Long) = {
    val start = input.chunk.getStartingPos
    val size = input.chunk.getTotalSize
    if (start < 0 || size < 0 || size > Int.MaxValue - 16)
      throw input.context.error(s"invalid column chunk range: start $start, size $size")
    if (input.resumeAt >= 0 && (input.resumeAt < start || input.resumeAt > start + size))
      throw new IllegalArgumentException(s"resume offset ${input.resumeAt} outside the chunk [$start, ${start + size}) " +
        s"(${input.context})")
    (start, start + size)
  }

  /** A page's uncompressed size cannot exceed the chunk's total (pages and headers); writers that
    * leave the total unset (<= 0) are bounded by what an array can hold. */
  private def maxPageSize(chunk: ColumnChunkMetaData): Long = {
    val total = chunk.getTotalUncompressedSize
    if (total > 0) math.min(total, MaxArraySize) else MaxArraySize
  }

  /** Like [[forChunk]], but reads only the dictionary region (chunk start, or `input.resumeAt`, up to
    * the first data page of `locations`) and the data pages `kept` (sorted, distinct indexes into `locations`, the
    * chunk's checked offset index), their byte ranges coalesced across gaps of at most `maxGap`
    * bytes ([[lmspark.selection.ScanRanges.coalesce]]): bytes of a pruned page are read only when
    * they lie in such a gap (and the window reaches them). The source yields every page in order;
    * pages not kept are pruned (`currentPageIsPruned`): their row count comes from `locations` and
    * they can only be skipped. `bytesRead` is what was read from the file. `flat`: the column has no
    * repetition, so a v1 page's `num_values` is its row count, checked against the offset index. */
  def forPages(input: ChunkInput, flat: Boolean, locations: lmspark.selection.PageLocations, kept: Array[Int],
      maxGap: Long): PageSource = {
    val (start, end) = range(input)
    val layout = PrunedLayout(input.context, locations, kept, maxGap, start, end, flat)
    val s = new PageSource(input.in, input.context, input.chunk.getCodec, decompressorFor(input), input.verifyChecksums,
      maxPageSize(input.chunk), start, end, fileOffsetKnown = true, layout, input.windowBytes, input.resumeAt)
    s.prime()
    s
  }

  /** A page source over chunk bytes already in memory (tests, and chunk regions read by the
    * caller). `maxUncompressedPageSize` bounds every page's uncompressed size; `chunkFileOffset`
    * (-1 when unknown) is where `bytes(offset)` sits in the file, for error messages. The array is
    * never written to. */
  def fromBytes(
      bytes: Array[Byte],
      offset: Int,
      length: Int,
      context: ChunkContext,
      codec: CompressionCodecName,
      verifyChecksums: Boolean = false,
      maxUncompressedPageSize: Long = MaxArraySize,
      chunkFileOffset: Long = -1L): PageSource = {
    val origin = math.max(chunkFileOffset, 0L)
    val s = new PageSource(null, context, codec, decompressorFor(codec, context), verifyChecksums,
      math.min(maxUncompressedPageSize, MaxArraySize), origin, origin + length, fileOffsetKnown = chunkFileOffset >= 0,
      null, math.max(length, 1), -1L)
    s.window.adopt(bytes, origin - offset, origin, origin + length)
    s.window.countRead(length)
    s
  }

  private def decompressorFor(input: ChunkInput): Decompressor = decompressorFor(input.chunk.getCodec, input.context)

  private def decompressorFor(codec: CompressionCodecName, context: ChunkContext): Decompressor =
    if (!Decompressors.supported.contains(codec)) throw context.error(s"compression codec $codec is not supported")
    else Decompressors.forCodec(codec).orNull
}
