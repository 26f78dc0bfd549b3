package lmspark.column

import java.io.EOFException

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.format.{PageType, Util}
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.io.SeekableInputStream

import lmspark.decode.{DecodeException, Dictionary}
import lmspark.io.{ChunkContext, PageSource}

/** A chunk's dictionary read on its own (for dictionary pruning), and whether every data page of
  * the chunk is dictionary-encoded (only then does the dictionary hold every value of the chunk).
  *
  * `read` reads only the dictionary page: the bytes from the chunk start to its first data page
  * (the dictionary region), or, when the chunk's offsets put no region there (writers that leave
  * the dictionary page offset at 0), the first page's header and then its bytes. The page goes
  * through [[PageSource]] (decompression, CRC check) and [[Dictionary.decodePlain]], as in
  * [[FlatColumnReader]]. Malformed pages raise a [[ParquetDecodeException]] naming the chunk. */
object ChunkDictionary {

  /** True only when the chunk's metadata proves that every data page is dictionary-encoded, as
    * parquet-java's `DictionaryFilter` decides: with encoding statistics, no data page encoding
    * other than one dictionary encoding, and (beyond parquet-java) no encoding in the chunk's
    * encodings list that the statistics do not account for; without them, PLAIN_DICTIONARY among the encodings and
    * nothing else but level encodings (RLE_DICTIONARY alone cannot rule out a fallback). */
  def allPagesDictionaryEncoded(chunk: ColumnChunkMetaData): Boolean = {
    if (!chunk.hasDictionaryPage) return false
    val stats = chunk.getEncodingStats
    if (stats != null) {
      val data = stats.getDataEncodings.asScala.toSet
      // The chunk's encodings list is written apart from the statistics; an encoding it names that
      // the statistics account for neither as a data nor as a dictionary encoding (nor is a level
      // encoding) means the statistics hide pages, so they are not trusted.
      val unaccounted = chunk.getEncodings.asScala.toSet -- data -- stats.getDictionaryEncodings.asScala -
        Encoding.RLE - Encoding.BIT_PACKED
      data.size == 1 && (data.contains(Encoding.RLE_DICTIONARY) || data.contains(Encoding.PLAIN_DICTIONARY)) &&
        unaccounted.isEmpty
    } else {
      val encodings = chunk.getEncodings.asScala.toSet
      encodings.contains(Encoding.PLAIN_DICTIONARY) &&
        (encodings - Encoding.PLAIN_DICTIONARY - Encoding.RLE - Encoding.BIT_PACKED).isEmpty
    }
  }

  /** The decoded dictionary page, reading only its bytes; None when the chunk has none. */
  def read(in: SeekableInputStream, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor,
      filePath: String, verifyChecksums: Boolean): Option[Dictionary] =
    readCounted(in, chunk, descriptor, filePath, verifyChecksums)._1

  /** [[read]] and the bytes it read from the file. */
  def readCounted(in: SeekableInputStream, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor,
      filePath: String, verifyChecksums: Boolean): (Option[Dictionary], Long) = {
    val ctx = new ChunkContext(filePath, descriptor.getPath.mkString("."), chunk.getRowGroupOrdinal)
    val start = chunk.getStartingPos
    val size = chunk.getTotalSize
    if (start < 0 || size <= 0 || size > Int.MaxValue - 16)
      throw ctx.error(s"invalid column chunk range: start $start, size $size")
    val firstData = chunk.getFirstDataPageOffset
    val regionLength =
      if (firstData > start && firstData <= start + size) (firstData - start).toInt
      else firstPageLength(in, start, size, ctx)
    if (regionLength <= 0) return (None, 0L)
    val bytes = new Array[Byte](regionLength)
    try {
      in.seek(start)
      in.readFully(bytes)
    } catch {
      case e: EOFException => throw ctx.error(s"file ends inside column chunk [$start, ${start + size}) (truncated file?)", e)
      case NonFatal(e) => throw ctx.error(s"cannot read the dictionary page at $start: ${e.getMessage}", e)
    }
    val total = chunk.getTotalUncompressedSize
    val pages = PageSource.fromBytes(bytes, 0, bytes.length, ctx, chunk.getCodec, verifyChecksums,
      if (total > 0) total else Long.MaxValue, start)
    val dictionary =
      if (!pages.nextPage() || pages.currentPageType != PageType.DICTIONARY_PAGE) None
      else {
        val page = pages.readDictionaryPage()
        if (page.encoding != org.apache.parquet.format.Encoding.PLAIN &&
            page.encoding != org.apache.parquet.format.Encoding.PLAIN_DICTIONARY)
          throw ctx.error(s"dictionary page encoding ${page.encoding} is not supported")
        val t = descriptor.getPrimitiveType
        try Some(Dictionary.decodePlain(t.getPrimitiveTypeName, t.getTypeLength, page.numValues, page.bytes,
          page.offset, page.length))
        catch { case e: DecodeException => throw ctx.error(s"malformed dictionary page: ${e.getMessage}", e) }
      }
    (dictionary, bytes.length.toLong)
  }

  /** The length (header and data) of the chunk's first page, or 0 when it is not a dictionary
    * page; read from its header alone. */
  private def firstPageLength(in: SeekableInputStream, start: Long, size: Long, ctx: ChunkContext): Int = {
    val h =
      try {
        in.seek(start)
        Util.readPageHeader(in)
      } catch {
        case NonFatal(e) => throw ctx.error(s"cannot read the page header at $start: ${e.getMessage}", e)
      }
    val headerLength = in.getPos - start
    if (h.getType != PageType.DICTIONARY_PAGE) 0
    else {
      val length = headerLength + h.compressed_page_size
      if (h.compressed_page_size < 0 || length > size)
        throw ctx.error(s"dictionary page of ${h.compressed_page_size} bytes does not fit the chunk of $size bytes")
      length.toInt
    }
  }
}
