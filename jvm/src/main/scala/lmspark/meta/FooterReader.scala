package lmspark.meta

import java.io.{ByteArrayInputStream, EOFException, FileNotFoundException, IOException}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.format.FileMetaData
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.metadata.ParquetMetadata
import org.apache.parquet.io.SeekableInputStream

import lmspark.column.ParquetDecodeException
import lmspark.io.{BoundedThrift, FetchingStream, IoStats}

/** An open Parquet file: its input stream, its length, where its data ends (the footer's first
  * byte), and the footer of the row groups of one split (`footer.getBlocks`, in file order).
  * `rowGroupIndex(i)` is the file's index of the split's `i`-th row group (its position in the
  * footer's row-group list): the one numbering every lmspark message uses. `firstRow(i)` is the
  * file's index of its first row (the rows of the row groups before it in the footer), as Spark
  * counts `_metadata.row_index`. */
final class OpenFile(val path: Path, val stream: FetchingStream, val footer: ParquetMetadata,
    val fileSize: Long, val dataEnd: Long, rowGroupIndexes: Array[Int], firstRows: Array[Long],
    val unknownLogicalTypes: Set[String] = Set.empty, val cache: FileCache = FileCache.Off) extends AutoCloseable {
  require(rowGroupIndexes.length == footer.getBlocks.size, "one file index per row group of the split")
  require(firstRows.length == rowGroupIndexes.length, "one first row per row group of the split")

  def rowGroupIndex(splitIndex: Int): Int = rowGroupIndexes(splitIndex)

  def firstRow(splitIndex: Int): Long = firstRows(splitIndex)

  // `cache`: the file's key in the [[MetadataCache]] (None when not cached) and this read's counts.
  // `unknownLogicalTypes`: names of schema fields whose logical type the line's parquet-java does
  // not know (e.g. FLOAT16 before 1.14); their annotation is dropped so that the footer converts,
  // and no column of that name is read by lmspark.

  /** What the file's reads have cost so far. */
  def io: IoStats = stream.stats

  override def close(): Unit = stream.close()
}

/** A whole file's footer ([[FooterReader.fileFooter]]): `footer` holds every row group with column
  * chunks; where the footer starts; the fields whose logical type was dropped; whether the metadata
  * cache held the footer; which of its row groups each split reads (`assignment`); the file row
  * index (`_metadata.row_index`) of each one's first row (`firstRows`, as [[OpenFile.firstRow]]). */
final class FileFooter private[meta] (val footer: ParquetMetadata, val assignment: RowGroupAssignment,
    val footerStart: Long, val unknownLogicalTypes: Set[String], val cached: Boolean, firstRows: Array[Long]) {
  /** The file's index of the footer's `i`-th row group. */
  def index(i: Int): Int = assignment.indexes(i)

  /** The file row index of the first row of the footer's `i`-th row group. */
  def firstRow(i: Int): Long = firstRows(i)
}

/** Which row groups of a file (positions in its whole-file footer, whose `i`-th row group is the
  * file's `indexes(i)`) each split reads: those whose midpoint lies in the split, as [[FooterReader.open]]
  * assigns them. Small and immutable: kept beside split-pruning proofs. */
final class RowGroupAssignment private[meta] (val indexes: Array[Int], extents: Array[RowGroupTable.Extent]) {
  private[this] val position: Map[Int, Int] = indexes.zipWithIndex.toMap

  def groupsOf(start: Long, length: Long): Array[Int] = RowGroupTable.inSplit(extents, start, start + length).map(position)

  /** The midpoint of the footer's `i`-th row group: a split `[midpoint, midpoint + 1)` reads that
    * row group, and any other whose midpoint is the same. */
  def midpointOf(i: Int): Long = extents(indexes(i)).midpoint

  /** Estimated heap bytes. */
  def heapBytes: Long = 64L * indexes.length + 128L
}

/** How a file is opened: vectored reads on or off, the most bytes fetched ahead at once
  * ([[FetchingStream]]), the tail read speculatively for the footer, the bound of the
  * executor's [[MetadataCache]] (0: nothing cached), the largest single request, and the bound of
  * the cache's dictionaries (0: none cached; negative: a tenth of the executor's heap,
  * [[MetadataCache.dictionaryBound]]; only with the cache on). */
final case class OpenOptions(vectored: Boolean = true, prefetchMaxBytes: Long = 64L << 20,
    footerTailBytes: Int = FooterReader.TailBytes, metadataCacheMaxBytes: Long = 0L,
    maxRequestBytes: Long = FetchingStream.MaxRequestBytes, dictionaryCacheMaxBytes: Long = 0L)

/** A file's entry in the [[MetadataCache]] (`key` None: this read caches nothing), with the counts
  * of one read's lookups. */
final case class FileCache(key: Option[FileKey], stats: CacheStats) {
  def getOrLoad[T <: AnyRef](part: MetadataCache.Part)(load: => (T, Long)): T =
    MetadataCache.getOrLoad(key, part, stats)(load)
  def contains(part: MetadataCache.Part): Boolean = MetadataCache.contains(key, part)
  /** The cached value of `part`, if any (a hit when found; no miss is counted). */
  def get[T <: AnyRef](part: MetadataCache.Part): Option[T] = MetadataCache.get(key, part, stats)
  /** Stores `value` as `part` unless the cache holds it already. */
  def putIfAbsent(part: MetadataCache.Part, value: AnyRef, weight: Long): Unit =
    MetadataCache.putIfAbsent(key, part, stats, value, weight)
}

object FileCache {
  def Off: FileCache = FileCache(None, new CacheStats)
}

/** A file's footer as parsed once for every split: the whole thrift `FileMetaData` (never changed
  * once built: each split converts a shallow copy holding its own row groups), where the footer
  * starts, the checked row-group table, and the fields whose logical type was dropped. */
private final case class ParsedFooter(meta: FileMetaData, footerStart: Long,
    extents: Array[RowGroupTable.Extent], unknownLogicalTypes: Set[String])

/**
 * Opens a file and reads its footer: the file's tail in one read (speculatively
 * `footerTailBytes`, which holds the whole footer of most files), then whatever of the footer lies
 * before it. The stream is opened with the file's status (so an object store needs no request to
 * learn its length) and asked for random and vectored reads. The
 * footer's thrift is parsed with a size limit of the footer's own length ([[BoundedThrift]]), and
 * its row-group table is checked for the whole file ([[RowGroupTable]]) before the row groups of
 * the split `[start, start + length)` (by midpoint, as Spark's reader) are converted with
 * parquet-java's `ParquetMetadataConverter`. With the [[MetadataCache]] on, the parsed and checked
 * footer is kept per file (path, length, modification time): a later split or query of the same
 * file reads no footer bytes. Files on the local file system are never fetched ahead (their
 * stream's prefetch budget is 0).
 *
 * Errors: a file too short or without the `PAR1` tail, a footer length outside the file, or an
 * unparsable footer is an `IOException` naming the file; a bad row-group table is a
 * [[ParquetDecodeException]] naming the file and the row group; a missing file stays a
 * `FileNotFoundException` (so that `ignoreMissingFiles` works). A file with an encrypted footer
 * (`PARE`) is refused: lmspark steps aside at planning whenever decryption is configured, and
 * without it Spark cannot read such a file either.
 */
object FooterReader {

  /** Bytes read from the end of a file at once: footers up to this size (most) take one read. */
  val TailBytes: Int = 256 << 10

  /** The footer length and the two `PAR1` after it. */
  private val Trailer = 8

  def open(conf: Configuration, path: Path, fileSize: Long, modificationTime: Long,
      start: Long, length: Long, options: OpenOptions = OpenOptions()): OpenFile = {
    val stream = openStream(conf, path, fileSize, modificationTime, options)
    val cache = cacheFor(path, fileSize, modificationTime, options)
    try {
      val parsed = cache.getOrLoad(MetadataCache.Footer)(parse(stream, path, fileSize, options.footerTailBytes))
      val (footer, mine) = splitFooter(conf, path, parsed, start, length)
      new OpenFile(path, stream, footer, fileSize, parsed.footerStart, mine, firstRowsOf(parsed.meta, mine),
        parsed.unknownLogicalTypes, cache)
    } catch {
      case e: Throwable => stream.close(); throw failure(path, e)
    }
  }

  /**
   * The footer of a whole file, every row group with column chunks in it, with the file's unknown
   * logical types and whether the [[MetadataCache]] held it; [[RowGroupAssignment.groupsOf]] names the
   * row groups a split reads (by midpoint, as [[open]] assigns them). The footer is read and parsed at
   * most once, through the cache; no other byte of the file is read, and no stream is opened when
   * the cache holds it. For planning, which decides from footers alone. Errors as [[open]]'s.
   */
  def fileFooter(conf: Configuration, path: Path, fileSize: Long, modificationTime: Long,
      options: OpenOptions): FileFooter = {
    val cache = cacheFor(path, fileSize, modificationTime, options)
    var stream: FetchingStream = null
    try {
      val parsed = cache.getOrLoad(MetadataCache.Footer) {
        stream = openStream(conf, path, fileSize, modificationTime, options)
        parse(stream, path, fileSize, options.footerTailBytes)
      }
      val (footer, all) = splitFooter(conf, path, parsed, 0L, Long.MaxValue)
      new FileFooter(footer, new RowGroupAssignment(all, parsed.extents), parsed.footerStart, parsed.unknownLogicalTypes,
        cached = cache.stats.hits > 0, firstRowsOf(parsed.meta, all))
    } catch {
      case e: Throwable => throw failure(path, e)
    } finally if (stream != null) stream.close()
  }

  /** The file's stream, opened with its status and asked for random and vectored reads. */
  private def openStream(conf: Configuration, path: Path, fileSize: Long, modificationTime: Long,
      options: OpenOptions): FetchingStream = {
    val status = new FileStatus(fileSize, false, 0, 0L, modificationTime, path)
    val fs = path.getFileSystem(conf)
    val opening = fs.openFile(path).withFileStatus(status)
      .opt("fs.option.openfile.read.policy", "vector, random, adaptive")
      .opt("fs.option.openfile.length", fileSize.toString)
      .build()
    val raw = try opening.get() catch {
      case e: java.util.concurrent.ExecutionException => throw (e.getCause match {
        case c: IOException => c
        case c: RuntimeException => c
        case c => new IOException(c)
      })
    }
    // The local file system has no request latency to hide: its reads go straight to the stream
    // (measured: fetching ahead there cost up to a fifth on the SF10 point lookup).
    val ahead = if (fs.getUri.getScheme == "file") 0L else options.prefetchMaxBytes
    new FetchingStream(raw, fileSize, new IoStats, options.vectored, ahead, options.maxRequestBytes)
  }

  private def cacheFor(path: Path, fileSize: Long, modificationTime: Long, options: OpenOptions): FileCache =
    if (options.metadataCacheMaxBytes <= 0) FileCache.Off
    else {
      MetadataCache.configure(options.metadataCacheMaxBytes, options.dictionaryCacheMaxBytes)
      FileCache(Some(FileKey(path.toString, fileSize, modificationTime)), new CacheStats)
    }

  /** The file index of the first row of each row group `mine` names: the rows of the row groups
    * before it in the footer (whose counts [[RowGroupTable]] checked are not negative). */
  private def firstRowsOf(meta: FileMetaData, mine: Array[Int]): Array[Long] = {
    val groups = meta.getRow_groups
    val starts = new Array[Long](groups.size + 1)
    var i = 0
    while (i < groups.size) { starts(i + 1) = starts(i) + groups.get(i).getNum_rows; i += 1 }
    mine.map(starts(_))
  }

  /** The footer of split `[start, start + length)` (its row groups by midpoint) and their file indexes. */
  private def splitFooter(conf: Configuration, path: Path, parsed: ParsedFooter, start: Long,
      length: Long): (ParquetMetadata, Array[Int]) = {
    val mine = RowGroupTable.inSplit(parsed.extents, start, start + length)
    val footer = new ParquetMetadataConverter(HadoopReadOptions.builder(conf, path).build())
      .fromParquetMetadata(splitOf(parsed.meta, mine))
    (footer, mine)
  }

  /** What a footer read that threw becomes: missing files and decode errors as they are, any other
    * exception an `IOException` naming the file. */
  private def failure(path: Path, e: Throwable): Throwable = e match {
    case _: FileNotFoundException | _: ParquetDecodeException => e
    case _: Exception => new IOException(s"Could not read the Parquet footer of $path: ${e.getMessage}", e)
    case _ => e
  }

  /** The footer read, parsed and its row-group table checked, with its estimated heap bytes. */
  private def parse(in: SeekableInputStream, path: Path, fileSize: Long, tailBytes: Int): (ParsedFooter, Long) = {
    val (bytes, footerStart) = footerBytes(in, path, fileSize, tailBytes)
    val meta =
      try BoundedThrift.fileMetaData(new ByteArrayInputStream(bytes), bytes.length)
      catch { case e: Exception => throw new IOException(s"cannot parse the footer: $e", e) }
    val extents = RowGroupTable.check(meta, path.toString, fileSize, footerStart)
    // A logical type newer than the line's parquet-java parses as a union with no field set,
    // which its converter cannot take: drop it, and remember the field.
    val unknown = meta.getSchema.asScala.collect {
      case e if e.isSetLogicalType && e.getLogicalType.getSetField == null => e.unsetLogicalType(); e.getName
    }.toSet
    // Parsed thrift objects take several times their encoded size.
    (ParsedFooter(meta, footerStart, extents, unknown), bytes.length * 8L)
  }

  /** A shallow copy of `all` holding only the row groups `mine` (by index), for one split. */
  private def splitOf(all: FileMetaData, mine: Array[Int]): FileMetaData = {
    val groups = all.getRow_groups
    val m = new FileMetaData(all.getVersion, all.getSchema, all.getNum_rows, mine.toSeq.map(groups.get).asJava)
    if (all.isSetKey_value_metadata) m.setKey_value_metadata(all.getKey_value_metadata)
    if (all.isSetCreated_by) m.setCreated_by(all.getCreated_by)
    if (all.isSetColumn_orders) m.setColumn_orders(all.getColumn_orders)
    if (all.isSetEncryption_algorithm) m.setEncryption_algorithm(all.getEncryption_algorithm)
    if (all.isSetFooter_signing_key_metadata) m.setFooter_signing_key_metadata(all.bufferForFooter_signing_key_metadata)
    m
  }

  /** The footer's bytes and the file offset where they start, after checking the tail magic and
    * that the footer lies between the leading magic and the trailer. */
  private def footerBytes(in: SeekableInputStream, path: Path, fileSize: Long, tailBytes: Int): (Array[Byte], Long) = {
    if (fileSize < 12) throw new IOException(s"$path is not a Parquet file: $fileSize bytes are too few")
    val tailLength = math.min(fileSize, math.max(Trailer.toLong, tailBytes.toLong)).toInt
    val tail = new Array[Byte](tailLength)
    readAt(in, fileSize - tailLength, tail, 0, tailLength, path)
    val magic = new String(tail, tailLength - 4, 4, StandardCharsets.US_ASCII)
    if (magic == "PARE")
      throw new IOException(s"$path has an encrypted footer, and no Parquet decryption is configured")
    if (magic != "PAR1")
      throw new IOException(s"$path is not a Parquet file: its last 4 bytes are not PAR1")
    val at = tailLength - Trailer
    val length = (tail(at) & 0xffL) | ((tail(at + 1) & 0xffL) << 8) | ((tail(at + 2) & 0xffL) << 16) |
      ((tail(at + 3) & 0xffL) << 24)
    val footerStart = fileSize - Trailer - length
    if (length <= 0 || footerStart < 4)
      throw new IOException(s"the footer length $length in $path does not fit its $fileSize bytes")
    val footer = new Array[Byte](length.toInt)
    val inTail = math.min(length, (tailLength - Trailer).toLong).toInt
    System.arraycopy(tail, at - inTail, footer, footer.length - inTail, inTail)
    if (inTail < footer.length) readAt(in, footerStart, footer, 0, footer.length - inTail, path)
    (footer, footerStart)
  }

  private def readAt(in: SeekableInputStream, at: Long, into: Array[Byte], off: Int, len: Int, path: Path): Unit =
    try { in.seek(at); in.readFully(into, off, len) }
    catch { case e: EOFException => throw new IOException(s"$path ends before its length says (truncated?)", e) }
}
