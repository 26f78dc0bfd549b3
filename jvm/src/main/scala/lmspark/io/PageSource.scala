package lmspark.io

import java.io.{EOFException, InputStream}
import java.util.zip.CRC32

import scala.util.control.NonFatal

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.format.{PageHeader, PageType}
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, CompressionCodecName}
import org.apache.parquet.io.SeekableInputStream

/** Reads the pages of one column chunk. Owns the chunk bytes, page CRC checks and decompression
  * (through [[Decompressors]]).
  *
  * The chunk's bytes live in one heap array `bytes[base, limit)`; pages are cut from it in order.
  * Protocol: [[nextPage]] parses the next page header (INDEX_PAGEs are passed over) and then exactly
  * one of [[readDictionaryPage]], [[readDataPage]] or [[skipPage]] consumes that page. Skipping never
  * decompresses nor checks the CRC. `pagesRead` counts pages whose data was handed out
  * (decompressed); `bytesRead` counts bytes read from the file.
  *
  * With `verifyChecksums`, a page that is read and whose header has a `crc` is checked first: CRC32
  * over its `compressed_page_size` bytes as stored (for v2 pages levels included), as parquet-java
  * does. A page's uncompressed size is checked against `maxUncompressedPageSize` (the chunk's total
  * uncompressed size) before anything is allocated for it, and a page header is parsed with
  * thrift's message limit set to the bytes left in the chunk ([[PageSource.readHeader]]). Errors
  * name the page they concern (`page N of the chunk`, [[error]] for decoders' errors).
  *
  * A source made by [[PageSource.forPages]] holds only some data pages (`kept`, per the chunk's
  * checked offset index): it still yields every page in order, but a pruned page has no header
  * (`currentPageIsPruned`), its row count comes from the offset index, and it can only be skipped.
  * A kept page's header must agree with the offset index (rows, and header + data size), else
  * reading fails with an error that names the page and the flag that turns page indexes off.
  *
  * Invariants: `base <= pos <= limit`; a header is "current" between `nextPage() == true` and the
  * call that consumes it (`dataStart >= 0`, or `prunedCurrent` for a pruned page). Not thread-safe. */
final class PageSource private (
    bytes: Array[Byte],
    base: Int,
    limit: Int,
    val context: ChunkContext,
    val codec: CompressionCodecName,
    decompressor: Decompressor,
    fileBytesRead: Long,
    verifyChecksums: Boolean,
    maxUncompressedPageSize: Long,
    chunkFileOffset: Long,
    layout: PageSource.PrunedLayout) {

  private[this] var pos: Int = base
  private[this] var header: PageHeader = _
  private[this] var headerStart: Int = -1 // start of the current page's header
  private[this] var dataStart: Int = -1 // start of the current page's (compressed) data, -1 if none
  private[this] var ordinal: Int = -1 // of the current page among the chunk's non-index pages
  private[this] var pages: Int = 0
  private[this] var dataPagesDecompressed: Int = 0
  private[this] var regionLimit: Int = limit // header parsing stops here
  private[this] var dataPage: Int = -1 // pruned layouts: index of the current data page in the offset index
  private[this] var prunedCurrent: Boolean = false
  private[this] var decompressedBytes: Long = 0L
  private[this] val headerStream = new HeaderStream
  private[this] lazy val crc = new CRC32

  /** Pages whose data was read (decompressed) so far, dictionary page included. */
  def pagesRead: Int = pages

  /** Data pages whose data was read (decompressed) so far. */
  def dataPagesRead: Int = dataPagesDecompressed

  /** Bytes read from the file for this chunk. */
  def bytesRead: Long = fileBytesRead

  /** Decompressed bytes produced so far. */
  def bytesDecompressed: Long = decompressedBytes

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

  /** A fresh source over the same bytes, from the chunk's first page, sharing nothing mutable with
    * this one: the chunk is walked again without reading the file again (`bytesRead` is 0). */
  def reopen(): PageSource =
    new PageSource(bytes, base, limit, context, codec, decompressor, 0L, verifyChecksums, maxUncompressedPageSize,
      chunkFileOffset, layout)

  /** Parses the next page header, passing over index pages. False at the end of the chunk. For a
    * source of some pages only, the next page may be a pruned one (no header is parsed). */
  def nextPage(): Boolean = {
    if (dataStart >= 0 || prunedCurrent) skipPage()
    if (layout == null) {
      while (pos < limit) {
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
    if (prunedCurrent) return layoutRows(dataPage)
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

  /** Consumes the current page without decompressing it. */
  def skipPage(): Unit = {
    if (prunedCurrent) { prunedCurrent = false; return }
    requireHeader()
    pos = dataStart + header.compressed_page_size
    dataStart = -1
  }

  /** Decompresses and returns the current page, which must be a dictionary page. */
  def readDictionaryPage(): DictionaryPage = {
    requireHeader()
    if (header.getType != PageType.DICTIONARY_PAGE)
      throw error(s"expected a dictionary page, found ${header.getType}")
    val dh = header.dictionary_page_header
    if (dh == null) throw error("dictionary page without dictionary_page_header")
    if (dh.num_values < 0) throw error(s"dictionary page has negative num_values ${dh.num_values}")
    checkCrc()
    val out = decompress(dataStart, header.compressed_page_size, header.uncompressed_page_size)
    val page = new DictionaryPage(dh.num_values, dh.encoding, out, outOffset, outLength)
    consumed()
    page
  }

  /** Decompresses and returns the current page, which must be a data page (v1 or v2). */
  def readDataPage(): DataPage = {
    requireHeader()
    val page = header.getType match {
      case PageType.DATA_PAGE =>
        val dh = header.data_page_header
        if (dh == null) throw error("data page without data_page_header")
        if (dh.num_values < 0) throw error(s"data page has negative num_values ${dh.num_values}")
        checkCrc()
        val out = decompress(dataStart, header.compressed_page_size, header.uncompressed_page_size)
        new DataPageV1(dh.num_values, dh.encoding, dh.definition_level_encoding, dh.repetition_level_encoding,
          out, outOffset, outLength)
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
        checkCrc()
        val compressedValues = header.compressed_page_size - levels.toInt
        val uncompressedValues = header.uncompressed_page_size - levels.toInt
        val valueStart = dataStart + levels.toInt
        val out =
          if (dh.is_compressed) decompress(valueStart, compressedValues, uncompressedValues)
          else {
            outOffset = valueStart; outLength = compressedValues; bytes
          }
        new DataPageV2(dh.num_values, dh.num_nulls, dh.num_rows, dh.encoding, bytes, dataStart, rl, dl,
          out, outOffset, outLength)
      case t => throw error(s"expected a data page, found $t")
    }
    consumed()
    dataPagesDecompressed += 1
    page
  }

  /** Drops the current page. Decompressors hold no resources, so there is nothing to release. */
  def close(): Unit = { header = null; dataStart = -1; prunedCurrent = false }

  // ---- internals ----

  private[this] var outOffset: Int = 0
  private[this] var outLength: Int = 0

  private def requireHeader(): Unit =
    if (prunedCurrent)
      throw new IllegalStateException(s"page $ordinal of the chunk was pruned by the page index and not read: " +
        s"it can only be skipped (internal error, $context)")
    else if (header == null || dataStart < 0) throw new IllegalStateException(s"no current page ($context)")

  /** The offset in the chunk of position `p` of the buffer (the buffer holds only some ranges of
    * the chunk in a pruned layout; positions inside the current data page map through it). */
  private def chunkOffset(p: Int): Long =
    if (layout == null || dataPage < 0 || layout.bufferStart(dataPage) < 0) (p - base).toLong
    else layout.locations.byteOffset(dataPage) - chunkFileOffset + (p - layout.bufferStart(dataPage))

  /** Rows of data page `i` of the layout's offset index. */
  private def layoutRows(i: Int): Int = {
    val rows = layout.locations.endRow(i) - layout.locations.firstRow(i)
    if (rows > Int.MaxValue) throw context.error(s"page $i of the offset index holds $rows rows")
    rows.toInt
  }

  /** `nextPage` for a source of some pages: the dictionary region's pages (dictionary, index), then
    * every data page of the offset index, kept ones parsed and checked against it. */
  private def nextOfLayout(): Boolean = {
    val loc = layout.locations
    if (dataPage < 0) {
      regionLimit = layout.dictionaryLimit
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
              s"page of the offset index (inconsistent page index; ${PageSource.DisableHint})")
        }
      }
    }
    header = null
    dataPage += 1
    if (dataPage >= loc.pages) return false
    ordinal += 1
    val start = layout.bufferStart(dataPage)
    if (start < 0) {
      prunedCurrent = true
      return true
    }
    pos = start
    regionLimit = layout.segmentEnd(dataPage)
    val h = parseHeader()
    val size = loc.byteEnd(dataPage) - loc.byteOffset(dataPage)
    def mismatch(what: String) =
      context.error(s"data page $dataPage of the offset index (file offset ${loc.byteOffset(dataPage)}) $what " +
        s"(inconsistent page index; ${PageSource.DisableHint})")
    val rows = h.getType match {
      case PageType.DATA_PAGE => h.data_page_header.num_values
      case PageType.DATA_PAGE_V2 => h.data_page_header_v2.num_rows
      case t => throw mismatch(s"is a $t page")
    }
    val stored = (dataStart - start).toLong + h.compressed_page_size
    if (stored != size) throw mismatch(s"takes $stored bytes (header and data), the offset index says $size")
    if (layout.checkRows && rows != layoutRows(dataPage))
      throw mismatch(s"holds $rows rows per its header, the offset index says ${layoutRows(dataPage)}")
    header = h
    true
  }

  private def consumed(): Unit = {
    pos = dataStart + header.compressed_page_size
    dataStart = -1
    pages += 1
  }

  /** `page 3 of the chunk (DATA_PAGE at chunk offset 1234, file offset 5678)` for the current page. */
  private def describePage: String = {
    val at = chunkOffset(headerStart)
    val file = if (chunkFileOffset >= 0) s", file offset ${chunkFileOffset + at}" else ""
    s"page $ordinal of the chunk (${header.getType} at chunk offset $at$file)"
  }

  /** With `verifyChecksums`, checks the current page's CRC32 (when its header has one) over the
    * page's bytes as stored. */
  private def checkCrc(): Unit =
    if (verifyChecksums && header.isSetCrc) {
      crc.reset()
      crc.update(bytes, dataStart, header.compressed_page_size)
      val expected = header.crc & 0xffffffffL
      if (crc.getValue != expected)
        throw context.error(f"page CRC32 mismatch in $describePage: the header says 0x$expected%08x, " +
          f"the ${header.compressed_page_size} page bytes give 0x${crc.getValue}%08x (corrupt page)")
    }

  private def parseHeader(): PageHeader = {
    val at = pos
    headerStart = at
    // The ordinal this page will have (a pruned layout has already counted it).
    val page = s"page ${if (layout != null && dataPage >= 0) ordinal else ordinal + 1} of the chunk"
    headerStream.reset(at)
    val h =
      try PageSource.readHeader(headerStream, regionLimit - at)
      catch {
        case NonFatal(e) =>
          throw context.error(s"cannot read the page header of $page at chunk offset ${chunkOffset(at)} of ${chunkOffset(regionLimit)} " +
            s"(corrupt or truncated chunk): ${e.getMessage}", e)
      }
    val start = headerStream.position
    if (h.getType == null) throw context.error(s"page header of $page at chunk offset ${chunkOffset(at)} has no page type")
    val missing = h.getType match {
      case PageType.DATA_PAGE => h.data_page_header == null
      case PageType.DATA_PAGE_V2 => h.data_page_header_v2 == null
      case PageType.DICTIONARY_PAGE => h.dictionary_page_header == null
      case _ => false
    }
    if (missing) throw context.error(s"${h.getType} header of $page at chunk offset ${chunkOffset(at)} lacks its type-specific header")
    if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0)
      throw context.error(s"page header of $page at chunk offset ${chunkOffset(at)} has negative sizes " +
        s"(compressed ${h.compressed_page_size}, uncompressed ${h.uncompressed_page_size})")
    if (h.compressed_page_size.toLong > regionLimit - start)
      throw context.error(s"$page at chunk offset ${chunkOffset(at)} needs ${h.compressed_page_size} bytes but " +
        s"only ${regionLimit - start} remain in the chunk (truncated chunk?)")
    pos = start
    dataStart = start
    h
  }

  /** Decompresses `len` bytes at `off` into `uncompressedSize` bytes; sets outOffset/outLength.
    * Nothing larger than `maxUncompressedPageSize` is allocated. */
  private def decompress(off: Int, len: Int, uncompressedSize: Int): Array[Byte] = {
    if (decompressor == null) {
      outOffset = off; outLength = len
      decompressedBytes += len
      bytes
    } else {
      if (uncompressedSize < 0 || uncompressedSize > maxUncompressedPageSize)
        throw context.error(s"$describePage claims $uncompressedSize uncompressed bytes, more than the " +
          s"chunk's $maxUncompressedPageSize (corrupt page header or chunk metadata)")
      val out =
        try decompressor.decompress(bytes, off, len, uncompressedSize)
        catch {
          case NonFatal(e) =>
            throw context.error(s"cannot decompress $codec data of $describePage, $len bytes to " +
              s"$uncompressedSize bytes (corrupt page?): ${e.getMessage}", e)
        }
      if (out.length != uncompressedSize) // a Decompressor guarantees this; kept as a cheap invariant check
        throw context.error(s"$codec data of $describePage decompressed to ${out.length} bytes, " +
          s"the header says $uncompressedSize")
      outOffset = 0; outLength = out.length
      decompressedBytes += out.length
      out
    }
  }

  /** An InputStream over `bytes[pos, regionLimit)` that reports how far the thrift parser read. */
  private final class HeaderStream extends InputStream {
    private[this] var p = 0
    def reset(at: Int): Unit = p = at
    def position: Int = p
    override def read(): Int = if (p < regionLimit) { val b = bytes(p) & 0xff; p += 1; b } else -1
    override def read(b: Array[Byte], off: Int, len: Int): Int = {
      if (len == 0) return 0
      val n = math.min(len, regionLimit - p)
      if (n <= 0) return -1
      System.arraycopy(bytes, p, b, off, n)
      p += n
      n
    }
    override def available(): Int = regionLimit - p
  }
}

object PageSource {

  /** Parses a thrift page header from `in`, of which at most `available` bytes remain: thrift's
    * message size limit is set to them, so a corrupt length inside the header (e.g. of a
    * statistics value) fails before thrift allocates for it (parquet-java's `Util.readPageHeader`
    * bounds it only by thrift's default 100 MiB). */
  private[io] def readHeader(in: InputStream, available: Int): PageHeader = {
    val limit = math.max(available, 0)
    val config = new shaded.parquet.org.apache.thrift.TConfiguration(limit, limit,
      shaded.parquet.org.apache.thrift.TConfiguration.DEFAULT_RECURSION_DEPTH)
    val protocol = new shaded.parquet.org.apache.thrift.protocol.TCompactProtocol(
      new shaded.parquet.org.apache.thrift.transport.TIOStreamTransport(config, in), limit.toLong, limit.toLong)
    val h = new PageHeader()
    h.read(protocol)
    h
  }

  /** Largest array the JVM reliably allocates. */
  private val MaxArraySize: Long = Int.MaxValue - 16

  /** Reads the whole chunk [start, start+totalSize) from `in` (start = dictionary page offset if
    * the chunk has one and it is > 0, else first data page offset, i.e.
    * `ColumnChunkMetaData.getStartingPos`) and returns a page source over it. Counts bytes read.
    * With `verifyChecksums`, pages that are read and carry a CRC are checked. */
  def forChunk(
      in: SeekableInputStream,
      chunk: ColumnChunkMetaData,
      descriptor: ColumnDescriptor,
      filePath: String,
      verifyChecksums: Boolean = false): PageSource = {
    val context = new ChunkContext(filePath, descriptor.getPath.mkString("."), chunk.getRowGroupOrdinal)
    val start = chunk.getStartingPos
    val size = chunk.getTotalSize
    if (start < 0 || size < 0 || size > Int.MaxValue - 16)
      throw context.error(s"invalid column chunk range: start $start, size $size")
    val codec = chunk.getCodec
    val decompressor = decompressorFor(codec, context)
    val buf = new Array[Byte](size.toInt)
    try {
      in.seek(start)
      in.readFully(buf)
    } catch {
      case e: EOFException =>
        throw context.error(s"file ends inside column chunk [$start, ${start + size}) (truncated file?)", e)
      case NonFatal(e) =>
        throw context.error(s"cannot read column chunk [$start, ${start + size}): ${e.getMessage}", e)
    }
    // A page's uncompressed size cannot exceed the chunk's total (pages and headers); writers that
    // leave the total unset (<= 0) are bounded by what an array can hold.
    val total = chunk.getTotalUncompressedSize
    val maxPage = if (total > 0) math.min(total, MaxArraySize) else MaxArraySize
    new PageSource(buf, 0, buf.length, context, codec, decompressor, size, verifyChecksums, maxPage, start, null)
  }

  /** What to say when a page index is inconsistent with the pages it describes. */
  private[io] val DisableHint = "set spark.lmspark.pageIndex.enabled=false to read the file without page indexes"

  /** Where a source of some pages finds them: the dictionary region is `bytes[0, dictionaryLimit)`;
    * data page `i` of `locations` starts at `bufferStart(i)` (-1: pruned, not read) and its
    * coalesced read range ends at `segmentEnd(i)`. `checkRows`: the column is flat, so a v1 page's
    * num_values is its row count. */
  private[io] final class PrunedLayout(
      val locations: lmspark.selection.PageLocations,
      val dictionaryLimit: Int,
      val bufferStart: Array[Int],
      val segmentEnd: Array[Int],
      val checkRows: Boolean)

  /** Like [[forChunk]], but reads only the dictionary region (chunk start up to the first data page
    * of `locations`) and the data pages `kept` (sorted, distinct indexes into `locations`, the
    * chunk's checked offset index), their byte ranges coalesced across gaps of at most `maxGap`
    * bytes ([[lmspark.selection.ScanRanges.coalesce]]): bytes of a pruned page are read only when
    * they lie in such a gap. The source yields every page in order; pages not kept are pruned
    * (`currentPageIsPruned`): their row count comes from `locations` and they can only be skipped.
    * `bytesRead` is what was read from the file. */
  def forPages(
      in: SeekableInputStream,
      chunk: ColumnChunkMetaData,
      descriptor: ColumnDescriptor,
      filePath: String,
      verifyChecksums: Boolean,
      locations: lmspark.selection.PageLocations,
      kept: Array[Int],
      maxGap: Long): PageSource = {
    require(maxGap >= 0, s"negative coalescing gap $maxGap")
    var k = 0
    while (k < kept.length) {
      require(kept(k) >= 0 && kept(k) < locations.pages && (k == 0 || kept(k) > kept(k - 1)),
        s"kept pages must be sorted, distinct indexes into the ${locations.pages} pages: ${kept.mkString(", ")}")
      k += 1
    }
    val context = new ChunkContext(filePath, descriptor.getPath.mkString("."), chunk.getRowGroupOrdinal)
    val start = chunk.getStartingPos
    val size = chunk.getTotalSize
    if (start < 0 || size < 0 || size > Int.MaxValue - 16)
      throw context.error(s"invalid column chunk range: start $start, size $size")
    val end = start + size
    val firstData = if (locations.pages > 0) locations.byteOffset(0) else end
    if (firstData < start || (locations.pages > 0 && locations.byteEnd(locations.pages - 1) > end))
      throw context.error(s"the offset index's pages [$firstData, ${locations.byteEnd(locations.pages - 1)}) lie " +
        s"outside the column chunk [$start, $end) (inconsistent page index; $DisableHint)")
    val codec = chunk.getCodec
    val decompressor = decompressorFor(codec, context)
    val ranges = lmspark.selection.ScanRanges.coalesce(locations, kept, maxGap)
    val dictionaryBytes = (firstData - start).toInt
    val buf = new Array[Byte](dictionaryBytes + ranges.totalBytes.toInt) // both within the chunk's size
    val bufferStart = Array.fill(locations.pages)(-1)
    val segmentEnd = Array.fill(locations.pages)(-1)
    def readRange(from: Long, len: Int, at: Int): Unit =
      try {
        in.seek(from)
        in.readFully(buf, at, len)
      } catch {
        case e: EOFException =>
          throw context.error(s"file ends inside column chunk range [$from, ${from + len}) (truncated file?)", e)
        case NonFatal(e) =>
          throw context.error(s"cannot read column chunk range [$from, ${from + len}): ${e.getMessage}", e)
      }
    if (dictionaryBytes > 0) readRange(start, dictionaryBytes, 0)
    var at = dictionaryBytes
    var r = 0
    var next = 0 // index into kept
    while (r < ranges.size) {
      val len = (ranges.end(r) - ranges.start(r)).toInt
      readRange(ranges.start(r), len, at)
      while (next < kept.length && locations.byteOffset(kept(next)) < ranges.end(r)) {
        bufferStart(kept(next)) = at + (locations.byteOffset(kept(next)) - ranges.start(r)).toInt
        segmentEnd(kept(next)) = at + len
        next += 1
      }
      at += len
      r += 1
    }
    val total = chunk.getTotalUncompressedSize
    val maxPage = if (total > 0) math.min(total, MaxArraySize) else MaxArraySize
    val layout = new PrunedLayout(locations, dictionaryBytes, bufferStart, segmentEnd,
      checkRows = descriptor.getMaxRepetitionLevel == 0)
    new PageSource(buf, 0, buf.length, context, codec, decompressor, buf.length.toLong, verifyChecksums, maxPage,
      start, layout)
  }

  /** A page source over chunk bytes already in memory (tests, and future range-based reads).
    * `maxUncompressedPageSize` bounds every page's uncompressed size; `chunkFileOffset` (-1 when
    * unknown) is where `bytes(offset)` sits in the file, for error messages. */
  def fromBytes(
      bytes: Array[Byte],
      offset: Int,
      length: Int,
      context: ChunkContext,
      codec: CompressionCodecName,
      verifyChecksums: Boolean = false,
      maxUncompressedPageSize: Long = MaxArraySize,
      chunkFileOffset: Long = -1L): PageSource =
    new PageSource(bytes, offset, offset + length, context, codec, decompressorFor(codec, context), length.toLong,
      verifyChecksums, math.min(maxUncompressedPageSize, MaxArraySize), chunkFileOffset, null)

  private def decompressorFor(codec: CompressionCodecName, context: ChunkContext): Decompressor =
    if (!Decompressors.supported.contains(codec)) throw context.error(s"compression codec $codec is not supported")
    else Decompressors.forCodec(codec).orNull
}
