package lmspark.column

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.Encoding
import org.apache.parquet.format.{Encoding => FormatEncoding, PageType}
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.schema.PrimitiveType

import lmspark.decode.{DecodeException, Dictionary}
import lmspark.io.{ChunkInput, DictionaryPage, HeldDictionaryPage, PageSource}

/** Dictionary pages: the one path by which lmspark decodes them ([[decode]], used by dictionary
  * pruning, and [[decodeHeld]], used by every column reader once a data page needs the
  * dictionary), a chunk's dictionary read on its own ([[read]]), and whether every data page of a
  * chunk is dictionary-encoded (only then does the dictionary hold every value of the chunk).
  *
  * [[read]] reads only the dictionary page, through a [[PageSource]] over the chunk's leading region
  * ([[PageSource.forDictionary]]: the same bounded header parsing, size checks, decompression and
  * CRC check as every page), and returns it decoded with the file offset just past it, so that the
  * row group's column reader can start there ([[ChunkInput.resumeAt]]) instead of reading and
  * decoding it again. Malformed pages raise a [[ParquetDecodeException]] naming the file, the
  * column, the row group and the page. */
object ChunkDictionary {

  /** A chunk's dictionary page, decoded, and the file offset just past it. */
  final case class Loaded(dictionary: Dictionary, end: Long)

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

  /** The chunk's dictionary page decoded, reading only its bytes (and any index page before it);
    * None when the chunk's first page is not a dictionary page. Also the bytes read from the file. */
  def read(input: ChunkInput, physical: PrimitiveType): (Option[Loaded], Long) = {
    val pages = PageSource.forDictionary(input)
    try {
      val loaded =
        if (pages.nextPage() && pages.currentPageType == PageType.DICTIONARY_PAGE)
          Some(Loaded(decode(pages, physical), pages.filePosition))
        else None
      (loaded, pages.bytesRead)
    } finally pages.close()
  }

  /** Decodes the source's current page, which must be a dictionary page, as values of `physical`:
    * its encoding must be PLAIN (or the old PLAIN_DICTIONARY), and its values must fit its bytes. */
  def decode(pages: PageSource, physical: PrimitiveType): Dictionary =
    decodePage(pages.readDictionaryPage(), physical, pages.error(_, _))

  /** [[decode]] for a dictionary page the walk passed without decompressing it
    * ([[PageSource.holdDictionaryPage]]): decompressed and decoded now, with errors naming that page
    * rather than the page where the walk stands. The source is told of it
    * ([[PageSource.decodedHeld]]: the scan may keep it for later reads of the chunk). */
  def decodeHeld(pages: PageSource, held: HeldDictionaryPage, physical: PrimitiveType): Dictionary = {
    val page = pages.readHeld(held)
    val dictionary = decodePage(page, physical, pages.errorIn(held, _, _))
    pages.decodedHeld(held, page, dictionary)
    dictionary
  }

  private def decodePage(page: DictionaryPage, physical: PrimitiveType,
      error: (String, Throwable) => ParquetDecodeException): Dictionary = {
    if (page.encoding != FormatEncoding.PLAIN && page.encoding != FormatEncoding.PLAIN_DICTIONARY)
      throw error(s"dictionary page encoding ${page.encoding} is not supported", null)
    try Dictionary.decodePlain(physical.getPrimitiveTypeName, physical.getTypeLength, page.numValues, page.bytes,
      page.offset, page.length)
    catch { case e: DecodeException => throw error(s"malformed dictionary page: ${e.getMessage}", e) }
  }
}
