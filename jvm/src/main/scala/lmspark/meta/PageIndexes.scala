package lmspark.meta

import java.io.{ByteArrayInputStream, EOFException}

import scala.util.control.NonFatal

import org.apache.parquet.format.Util
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.internal.column.columnindex.{ColumnIndex, OffsetIndex}
import org.apache.parquet.internal.hadoop.metadata.IndexReference
import org.apache.parquet.io.SeekableInputStream

import lmspark.io.ChunkContext
import lmspark.selection.PageLocations

/** A chunk's page index as read from the file (either part may be absent). `columnIndexProblem`
  * says why a column index the chunk refers to is absent here (unreadable, or parquet-java gives
  * none for the column's order), so it can be counted as ignored while the offset index is used. */
final case class RawPageIndex(
    columnIndex: Option[ColumnIndex],
    offsetIndex: Option[OffsetIndex],
    columnIndexProblem: Option[String] = None)

/** Reads ColumnIndex / OffsetIndex structures with parquet-java (`Util.readColumnIndex` /
  * `readOffsetIndex`, then `ParquetMetadataConverter.fromParquet*Index`) after bounding their
  * references, and checks the offset index's structure against the chunk. Nothing here throws
  * for bad metadata: an unusable index is a `Left` with the reason. */
object PageIndexes {

  /** The largest index structure read (a column index of 100k pages with 64-byte bounds is ~13 MB). */
  val MaxIndexBytes: Int = 64 << 20

  /** What a chunk's page index, read and converted, takes on the heap (an estimate: a few times
    * the bytes its references point at). */
  def heapBytes(chunk: ColumnChunkMetaData): Long =
    Seq(chunk.getColumnIndexReference, chunk.getOffsetIndexReference).map(r => if (r == null) 0L else r.getLength * 4L).sum

  /** The chunk's page index; an unreadable one is absent (with the reason in `Left`). `Left` when
    * the offset index is referenced but unusable; a column index alone that is unusable gives
    * `Right` with `columnIndexProblem` set. */
  def read(in: SeekableInputStream, chunk: ColumnChunkMetaData, ctx: ChunkContext): Either[String, RawPageIndex] = {
    val offsetIndex: Either[String, Option[OffsetIndex]] = Option(chunk.getOffsetIndexReference) match {
      case None => Right(None)
      case Some(ref) =>
        readBytes(in, ref, chunk, "offset index").flatMap { b =>
          try Right(Some(ParquetMetadataConverter.fromParquetOffsetIndex(Util.readOffsetIndex(new ByteArrayInputStream(b)))))
          catch { case NonFatal(e) => Left(s"cannot parse the offset index: $e") }
        }
    }
    val columnIndex: Either[String, Option[ColumnIndex]] = Option(chunk.getColumnIndexReference) match {
      case None => Right(None)
      case Some(ref) =>
        readBytes(in, ref, chunk, "column index").flatMap { b =>
          try {
            val ci = ParquetMetadataConverter.fromParquetColumnIndex(chunk.getPrimitiveType,
              Util.readColumnIndex(new ByteArrayInputStream(b)))
            if (ci == null) Left(s"no min/max order for ${chunk.getPrimitiveType}") else Right(Some(ci))
          } catch { case NonFatal(e) => Left(s"cannot parse the column index: $e") }
        }
    }
    offsetIndex match {
      case Left(why) => Left(why)
      case Right(oi) => Right(RawPageIndex(columnIndex.toOption.flatten, oi, columnIndex.left.toOption))
    }
  }

  /** The bytes `ref` points at, after checking that they are a plausible structure: a positive
    * length of at most [[MaxIndexBytes]], a non-negative offset, outside the chunk's pages, and
    * inside the file. */
  private def readBytes(in: SeekableInputStream, ref: IndexReference, chunk: ColumnChunkMetaData,
      what: String): Either[String, Array[Byte]] = {
    val off = ref.getOffset
    val len = ref.getLength
    val chunkStart = chunk.getStartingPos
    val chunkEnd = chunkStart + chunk.getTotalSize
    if (off < 0 || len <= 0 || len > MaxIndexBytes) Left(s"$what reference [offset $off, length $len] is invalid")
    else if (off < chunkEnd && off + len > chunkStart)
      Left(s"$what [$off, ${off + len}) overlaps the column chunk [$chunkStart, $chunkEnd)")
    else {
      val b = new Array[Byte](len)
      try {
        in.seek(off)
        in.readFully(b)
        Right(b)
      } catch {
        case _: EOFException => Left(s"$what [$off, ${off + len}) reaches past the end of the file")
        case NonFatal(e) => Left(s"cannot read the $what [$off, ${off + len}): $e")
      }
    }
  }

  /** Whether `chunk` is one of those whose writer left `dictionary_page_offset` unset and pointed
    * `data_page_offset` at the dictionary page (parquet-mr 1.12 snapshots did, e.g. the corpus'
    * alltypes_tiny_pages.parquet): the chunk announces dictionary pages, starts at its "first data
    * page", and the offset index's first page (at `first`) lies after it. The bytes in between are
    * then read as the dictionary region, and [[lmspark.io.PageSource.forPages]] fails loudly if
    * they hold a data page. */
  private def dictionaryAtDataPageOffset(chunk: ColumnChunkMetaData, first: Long): Boolean = {
    val dictionaryOffset = chunk.getDictionaryPageOffset
    (dictionaryOffset <= 0 || dictionaryOffset >= chunk.getFirstDataPageOffset) &&
      chunk.getStartingPos == chunk.getFirstDataPageOffset && first > chunk.getFirstDataPageOffset &&
      chunk.hasDictionaryPage
  }

  /** The offset index as [[PageLocations]] when it is consistent with the chunk (first row 0, rows
    * and offsets increasing, pages contiguous and inside the chunk's byte range, the last one ending
    * at the chunk's end, the first one at the chunk's first data page offset, or after it when that
    * offset is where the dictionary page is, see `dictionaryAtDataPageOffset`); otherwise why it is
    * not. */
  def locations(oi: OffsetIndex, chunk: ColumnChunkMetaData, rowCount: Long): Either[String, PageLocations] = {
    if (oi == null) return Left("no offset index")
    val n =
      try oi.getPageCount
      catch { case NonFatal(e) => return Left(s"unreadable offset index: $e") }
    if (n == 0 && rowCount > 0) return Left(s"the offset index has no pages for $rowCount rows")
    val firstRows = new Array[Long](n)
    val offsets = new Array[Long](n)
    val sizes = new Array[Int](n)
    var i = 0
    while (i < n) {
      firstRows(i) = oi.getFirstRowIndex(i)
      offsets(i) = oi.getOffset(i)
      sizes(i) = oi.getCompressedPageSize(i)
      i += 1
    }
    val pages =
      try new PageLocations(rowCount, firstRows, offsets, sizes)
      catch { case e: IllegalArgumentException => return Left(s"inconsistent offset index: ${e.getMessage}") }
    val chunkStart = chunk.getStartingPos
    val chunkEnd = chunkStart + chunk.getTotalSize
    if (n > 0) {
      val first = pages.byteOffset(0)
      if (first < chunkStart || first >= chunkEnd)
        return Left(s"the first page at byte $first lies outside the chunk [$chunkStart, $chunkEnd)")
      if (first != chunk.getFirstDataPageOffset && !dictionaryAtDataPageOffset(chunk, first))
        return Left(s"the first page is at byte $first, the chunk's first data page at ${chunk.getFirstDataPageOffset}")
      i = 1
      while (i < n) {
        if (pages.byteOffset(i) != pages.byteEnd(i - 1))
          return Left(s"page $i starts at byte ${pages.byteOffset(i)}, page ${i - 1} ends at ${pages.byteEnd(i - 1)} " +
            "(pages are not contiguous)")
        i += 1
      }
      if (pages.byteEnd(n - 1) != chunkEnd)
        return Left(s"the last page ends at byte ${pages.byteEnd(n - 1)}, the chunk at $chunkEnd")
    }
    Right(pages)
  }
}
