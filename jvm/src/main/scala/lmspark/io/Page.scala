package lmspark.io

import org.apache.parquet.format.{Encoding, PageHeader}

/** A decompressed page of one column chunk. Its byte ranges point into a fresh decompressed array
  * or, for uncompressed data, into the chunk buffer itself; both are read-only. Decoders may use
  * them until they move to another page and must copy anything kept longer (dictionaries copy
  * their values). */
sealed abstract class Page {
  /** Number of values (levels) in the page, including nulls. */
  def numValues: Int
}

/** A dictionary page: `numValues` PLAIN-encoded values in `bytes[offset, offset + length)`. */
final class DictionaryPage(
    val numValues: Int,
    val encoding: Encoding,
    val bytes: Array[Byte],
    val offset: Int,
    val length: Int)
    extends Page

/** A dictionary page that a page walk passed without decompressing it
  * ([[PageSource.holdDictionaryPage]]): its header and stored bytes
  * `stored[storedOffset, storedOffset + header.compressed_page_size)`, which nothing overwrites (the
  * window holding them was marked shared), where its data starts in the file (`dataStart`), and its
  * description for errors. [[PageSource.readHeld]] decompresses it when a dictionary-encoded data
  * page first needs it; a chunk whose loaded pages are all plain-encoded never does. */
final class HeldDictionaryPage private[io] (
    private[io] val header: PageHeader,
    private[io] val stored: Array[Byte],
    private[io] val storedOffset: Int,
    private[io] val dataStart: Long,
    val description: String)

/** A data page, v1 or v2. For flat columns `numRows == numValues`. */
sealed abstract class DataPage extends Page {
  def numRows: Int
  def valueEncoding: Encoding
}

/** DATA_PAGE (v1): levels and values all in one decompressed buffer `bytes[offset, offset + length)`,
  * repetition levels first, then definition levels (each prefixed by a 4-byte length when RLE). */
final class DataPageV1(
    val numValues: Int,
    val valueEncoding: Encoding,
    val definitionLevelEncoding: Encoding,
    val repetitionLevelEncoding: Encoding,
    val bytes: Array[Byte],
    val offset: Int,
    val length: Int)
    extends DataPage {
  def numRows: Int = numValues
}

/** DATA_PAGE_V2: levels (RLE/bit-packed hybrid without length prefix, never compressed) in
  * `levelBytes`, repetition levels at `[levelOffset, levelOffset + repLevelsLength)`, then
  * definition levels of `defLevelsLength` bytes; values decompressed in
  * `valueBytes[valueOffset, valueOffset + valueLength)`. */
final class DataPageV2(
    val numValues: Int,
    val numNulls: Int,
    val numRows: Int,
    val valueEncoding: Encoding,
    val levelBytes: Array[Byte],
    val levelOffset: Int,
    val repLevelsLength: Int,
    val defLevelsLength: Int,
    val valueBytes: Array[Byte],
    val valueOffset: Int,
    val valueLength: Int)
    extends DataPage
