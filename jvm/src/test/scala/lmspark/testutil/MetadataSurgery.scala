package lmspark.testutil

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.parquet.format.{BloomFilterHeader, ColumnChunk, ColumnIndex, ColumnMetaData, FileMetaData, OffsetIndex, PageLocation, Statistics, Util}

/**
 * Rewrites the metadata of a copy of a valid Parquet file with parquet-java's thrift classes, to build
 * files whose metadata lies about their data.
 *
 * Open a file with [[MetadataSurgery.open]], edit the thrift objects it hands out (the footer, a
 * chunk's statistics, its column / offset index, its bloom filter header and bitset), then [[write]].
 *
 * Invariants of the written file: every byte before the original footer is copied unchanged (data
 * pages, dictionary pages and the original indexes and bloom filters stay byte-identical and at the
 * same offsets); each column index, offset index or bloom filter that was asked for is appended
 * after them, re-serialised from its (possibly edited) thrift object, and the chunk's offset / length
 * fields point at the appended copy; then the edited footer, its length and `PAR1`.
 */
final class MetadataSurgery private (val source: Path, original: Array[Byte], val footer: FileMetaData) {

  private val columnIndexes = mutable.LinkedHashMap.empty[(Int, Int), ColumnIndex]
  private val offsetIndexes = mutable.LinkedHashMap.empty[(Int, Int), OffsetIndex]
  private val blooms = mutable.LinkedHashMap.empty[(Int, Int), MetadataSurgery.Bloom]

  def rowGroups: Int = footer.getRow_groupsSize

  /** Column paths (dot-joined) in chunk order. */
  def columnNames: IndexedSeq[String] =
    footer.getRow_groups.get(0).getColumns.asScala.toIndexedSeq.map(_.getMeta_data.getPath_in_schema.asScala.mkString("."))

  def columnOrdinal(name: String): Int = {
    val i = columnNames.indexOf(name)
    require(i >= 0, s"no column $name in $source (columns: ${columnNames.mkString(", ")})")
    i
  }

  def rowCount(rg: Int): Long = footer.getRow_groups.get(rg).getNum_rows

  def chunk(rg: Int, column: String): ColumnChunk = footer.getRow_groups.get(rg).getColumns.get(columnOrdinal(column))

  def meta(rg: Int, column: String): ColumnMetaData = chunk(rg, column).getMeta_data

  /** The first page (dictionary or data) of a chunk, and the file offset its chunk starts at: the
    * page's header is at `start + page.start` in the file, its data at `start + page.dataStart`. */
  def firstPage(rg: Int, column: String): (Long, ChunkBytes.RawPage) = {
    val m = meta(rg, column)
    val start = if (m.isSetDictionary_page_offset) m.getDictionary_page_offset else m.getData_page_offset
    (start, ChunkBytes.pages(java.util.Arrays.copyOfRange(original, start.toInt, (start + m.getTotal_compressed_size).toInt)).head)
  }

  /** The chunk's statistics object (created empty when the chunk has none); edit it in place. */
  def statistics(rg: Int, column: String): Statistics = {
    val m = meta(rg, column)
    if (!m.isSetStatistics) m.setStatistics(new Statistics())
    m.getStatistics
  }

  def hasColumnIndex(rg: Int, column: String): Boolean = chunk(rg, column).isSetColumn_index_offset

  /** The chunk's column index, parsed from the source; edits are written out by [[write]]. */
  def columnIndex(rg: Int, column: String): ColumnIndex = {
    val c = chunk(rg, column)
    columnIndexes.getOrElseUpdate((rg, columnOrdinal(column)), {
      require(c.isSetColumn_index_offset, s"$column in row group $rg of $source has no column index")
      Util.readColumnIndex(slice(c.getColumn_index_offset, c.getColumn_index_length))
    })
  }

  /** The chunk's offset index, parsed from the source; edits are written out by [[write]]. */
  def offsetIndex(rg: Int, column: String): OffsetIndex = {
    val c = chunk(rg, column)
    offsetIndexes.getOrElseUpdate((rg, columnOrdinal(column)), {
      require(c.isSetOffset_index_offset, s"$column in row group $rg of $source has no offset index")
      Util.readOffsetIndex(slice(c.getOffset_index_offset, c.getOffset_index_length))
    })
  }

  /** Gives the chunk a column index (e.g. where the writer wrote none); written out by [[write]]. */
  def setColumnIndex(rg: Int, column: String, ci: ColumnIndex): Unit =
    columnIndexes((rg, columnOrdinal(column))) = ci

  /** The page locations of the chunk's offset index (the live thrift objects). */
  def pageLocations(rg: Int, column: String): IndexedSeq[PageLocation] =
    offsetIndex(rg, column).getPage_locations.asScala.toIndexedSeq

  /** The chunk's bloom filter (header and bitset), parsed from the source; edits (of the header
    * object, or a new `bitset`) are written out by [[write]]. */
  def bloom(rg: Int, column: String): MetadataSurgery.Bloom = {
    val m = meta(rg, column)
    blooms.getOrElseUpdate((rg, columnOrdinal(column)), {
      require(m.isSetBloom_filter_offset, s"$column in row group $rg of $source has no bloom filter")
      val in = new ByteArrayInputStream(original, m.getBloom_filter_offset.toInt, original.length - m.getBloom_filter_offset.toInt)
      val before = in.available()
      val header = Util.readBloomFilterHeader(in)
      val headerBytes = before - in.available()
      val start = m.getBloom_filter_offset.toInt + headerBytes
      new MetadataSurgery.Bloom(header, java.util.Arrays.copyOfRange(original, start, start + header.getNumBytes))
    })
  }

  private def slice(offset: Long, length: Int): ByteArrayInputStream = {
    require(offset >= 0 && length >= 0 && offset + length <= original.length, s"bad range $offset+$length in $source")
    new ByteArrayInputStream(original, offset.toInt, length)
  }

  /** Where the source's data ends (its footer starts). */
  def footerStart: Int = original.length - 8 - MetadataSurgery.footerLength(original)

  /** Writes the edited copy to `dest` and returns it. */
  def write(dest: Path): Path = {
    val out = new ByteArrayOutputStream(original.length + 4096)
    out.write(original, 0, footerStart)
    val rgs = footer.getRow_groups
    for (((rg, col), ci) <- columnIndexes) {
      val off = out.size()
      Util.writeColumnIndex(ci, out)
      rgs.get(rg).getColumns.get(col).setColumn_index_offset(off).setColumn_index_length(out.size() - off)
    }
    for (((rg, col), oi) <- offsetIndexes) {
      val off = out.size()
      Util.writeOffsetIndex(oi, out)
      rgs.get(rg).getColumns.get(col).setOffset_index_offset(off).setOffset_index_length(out.size() - off)
    }
    for (((rg, col), b) <- blooms) {
      val off = out.size()
      Util.writeBloomFilterHeader(b.header, out)
      out.write(b.bitset)
      val m = rgs.get(rg).getColumns.get(col).getMeta_data
      m.setBloom_filter_offset(off)
      for ((isSet, _, set) <- TestLineApis.bloomFilterLengthField(m)) b.length match {
        case Some(n) => set(n)
        case None => if (isSet()) set(out.size() - off)
      }
    }
    val footerOffset = out.size()
    Util.writeFileMetaData(footer, out)
    val len = out.size() - footerOffset
    out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(len).array())
    out.write(MetadataSurgery.Magic)
    Files.createDirectories(dest.getParent)
    Files.write(dest, out.toByteArray)
    dest
  }
}

object MetadataSurgery {
  private val Magic = "PAR1".getBytes(StandardCharsets.US_ASCII)

  /** A chunk's bloom filter: `header` and `bitset` as written; `length`, when set, is written as
    * the chunk's `bloom_filter_length` instead of the size actually written. */
  final class Bloom(val header: BloomFilterHeader, var bitset: Array[Byte]) {
    var length: Option[Int] = None
  }

  private def footerLength(bytes: Array[Byte]): Int = {
    require(bytes.length >= 12 && new String(bytes, bytes.length - 4, 4, StandardCharsets.US_ASCII) == "PAR1",
      "not a Parquet file")
    ByteBuffer.wrap(bytes, bytes.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
  }

  def open(source: Path): MetadataSurgery = {
    val bytes = Files.readAllBytes(source)
    val len = footerLength(bytes)
    val footer = Util.readFileMetaData(new ByteArrayInputStream(bytes, bytes.length - 8 - len, len))
    new MetadataSurgery(source, bytes, footer)
  }

  /** Copies `source` to `dest` with `edit` applied to its metadata. */
  def rewrite(source: Path, dest: Path)(edit: MetadataSurgery => Unit): Path = {
    val s = open(source)
    edit(s)
    s.write(dest)
  }

  /** The footer of a file, as thrift. */
  def footerOf(file: Path): FileMetaData = open(file).footer

  /** PLAIN encodings of statistics / index values. */
  object Plain {
    private def le(n: Int) = ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN)
    def int32(v: Int): Array[Byte] = le(4).putInt(v).array()
    def int64(v: Long): Array[Byte] = le(8).putLong(v).array()
    def float(v: Float): Array[Byte] = le(4).putFloat(v).array()
    def double(v: Double): Array[Byte] = le(8).putDouble(v).array()
    /** Raw bits, so that a NaN payload is kept. */
    def doubleBits(bits: Long): Array[Byte] = int64(bits)
    def utf8(s: String): Array[Byte] = s.getBytes(StandardCharsets.UTF_8)

    def readInt32(b: Array[Byte]): Int = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getInt
    def readInt64(b: Array[Byte]): Long = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong
    def readDouble(b: Array[Byte]): Double = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getDouble
    def readFloat(b: Array[Byte]): Float = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getFloat
  }

  /** A column index value list (`min_values` / `max_values`) from byte arrays. */
  def buffers(values: Seq[Array[Byte]]): java.util.List[ByteBuffer] =
    new java.util.ArrayList[ByteBuffer](values.map(ByteBuffer.wrap).asJava)

  /** The bytes of a column index value. */
  def bytes(b: ByteBuffer): Array[Byte] = {
    val d = b.duplicate()
    val a = new Array[Byte](d.remaining())
    d.get(a)
    a
  }
}
