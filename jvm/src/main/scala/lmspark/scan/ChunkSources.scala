package lmspark.scan

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.BlockMetaData

import lmspark.column.ChunkDictionary
import lmspark.io.{ByteRange, ChunkContext, ChunkInput, FetchingStream, PageSource}
import lmspark.meta.{FileCache, MetadataCache, OpenFile}

/** Opens the column chunks of one file split: the one place that says how a chunk is read. It
  * names every chunk by the file's row-group index ([[OpenFile.rowGroupIndex]]), and chooses each
  * page source: only some pages ([[PageSource.forPages]]) when a fetch leaves pages out, otherwise
  * the whole chunk; either way starting past the dictionary page when the row group's plan holds
  * that page decoded already (read for dictionary pruning), so no dictionary is read or decoded
  * twice for one reader. A dictionary a reader decodes goes to the executor's cache
  * ([[PageSource.keepDictionariesWith]]), where the next decision on the row group finds it
  * ([[RowGroupPruner]]). [[fetch]] fetches ahead, in one call, the bytes that opening some columns
 * will read ([[PageSource.rangesOf]]: the same ranges the sources read). */
final class ChunkSources(file: OpenFile, settings: ScanSettings, windowBytes: Int) {

  /** The context of leaf `descriptor`'s chunk in the split's `blockIndex`-th row group. */
  def context(blockIndex: Int, descriptor: ColumnDescriptor): ChunkContext =
    new ChunkContext(file.path.toString, descriptor.getPath.mkString("."), file.rowGroupIndex(blockIndex))

  /** How leaf `descriptor`'s chunk is read in the split's `blockIndex`-th row group, starting past
    * `dictionary` when it is given. */
  def input(block: BlockMetaData, blockIndex: Int, descriptor: ColumnDescriptor,
      dictionary: Option[ChunkDictionary.Loaded] = None): ChunkInput =
    ChunkInput(file.stream, FileReadPlan.chunkOf(block, descriptor), context(blockIndex, descriptor),
      settings.verifyChecksums, windowBytes, dictionary.fold(-1L)(_.end))

  /** The page source of requested column `col` (leaf `descriptor`) in `rowGroup`: the pages `fetch`
    * keeps when it leaves some out, else the whole chunk. */
  def open(block: BlockMetaData, rowGroup: RowGroupPlan, col: Int, descriptor: ColumnDescriptor,
      fetch: Option[ColumnFetch]): PageSource = {
    val in = input(block, rowGroup.blockIndex, descriptor, rowGroup.dictionaries.get(col))
    val pages = fetch match {
      case Some(f) if f.pruned > 0 =>
        PageSource.forPages(in, descriptor.getMaxRepetitionLevel == 0, f.locations, f.kept, settings.maxCoalesceGap)
      case _ => PageSource.forChunk(in)
    }
    if (dictionaryCache.key.isDefined) pages.keepDictionariesWith((d, end) => dictionaryCache.putIfAbsent(
      cachePart(rowGroup.blockIndex, descriptor, MetadataCache.Dictionary), Some(ChunkDictionary.Loaded(d, end)),
      d.heapBytes))
    pages
  }

  /** Where leaf `descriptor`'s chunk metadata of the split's `blockIndex`-th row group is kept in the
    * executor's [[MetadataCache]]: by the file's row-group index and the leaf's path. */
  def cachePart(blockIndex: Int, descriptor: ColumnDescriptor, part: (Int, Seq[String]) => MetadataCache.Part)
      : MetadataCache.Part =
    part(file.rowGroupIndex(blockIndex), descriptor.getPath.toSeq)

  /** The file's cache as far as decoded dictionaries go (`MetadataCache.Dictionary`, as
    * `Option[ChunkDictionary.Loaded]`), for pruning and the readers alike: off when their bound is 0
    * (a negative setting is a share of the heap, [[MetadataCache.dictionaryBound]]), and for a scan
    * that verifies page checksums (it checks every dictionary page it uses). */
  val dictionaryCache: FileCache =
    if (settings.verifyChecksums || settings.open.dictionaryCacheMaxBytes == 0) FileCache.Off else file.cache

  /** The file ranges [[open]] reads for requested column `col` (leaf `descriptor`) in `rowGroup`. */
  def ranges(block: BlockMetaData, rowGroup: RowGroupPlan, col: Int, descriptor: ColumnDescriptor,
      fetch: Option[ColumnFetch]): Seq[ByteRange] = {
    val in = input(block, rowGroup.blockIndex, descriptor, rowGroup.dictionaries.get(col))
    fetch match {
      case Some(f) if f.pruned > 0 => PageSource.rangesOf(in, Some(f.locations -> f.kept), settings.maxCoalesceGap)
      case _ => PageSource.rangesOf(in, None, settings.maxCoalesceGap)
    }
  }

  /** Fetches ahead, in one call, what opening `columns` (requested column, leaf, fetch) of
    * `rowGroup` reads, its requests cut as `spread` says. */
  def fetch(block: BlockMetaData, rowGroup: RowGroupPlan, columns: Seq[(Int, ColumnDescriptor, Option[ColumnFetch])],
      spread: FetchingStream.Spread = FetchingStream.Spread.No): FetchingStream.Fetch =
    file.stream.fetch(ranges(block, rowGroup, columns), settings.maxCoalesceGap, spread)

  /** The file ranges [[open]] reads for `columns` (requested column, leaf, fetch) of `rowGroup`. */
  def ranges(block: BlockMetaData, rowGroup: RowGroupPlan,
      columns: Seq[(Int, ColumnDescriptor, Option[ColumnFetch])]): Seq[ByteRange] =
    columns.flatMap { case (c, d, f) => ranges(block, rowGroup, c, d, f) }

  /** Fetches ahead, in one call, the whole chunks of `columns` (requested column, leaf, fetch) in
    * `block`, dictionary pages included: adjacent in the file, they go out as one request (or a few,
    * cut at `maxRequestBytes`), and every page any later stage opens of them is then held. */
  def fetchWhole(block: BlockMetaData, columns: Seq[(Int, ColumnDescriptor, Option[ColumnFetch])]): FetchingStream.Fetch =
    file.stream.fetch(columns.map { case (_, d, _) =>
      val c = FileReadPlan.chunkOf(block, d)
      ByteRange(c.getStartingPos, c.getTotalSize)
    }, settings.maxCoalesceGap)

  /** How many requests [[fetch]] would make for `columns`, and their bytes. */
  def cost(block: BlockMetaData, rowGroup: RowGroupPlan,
      columns: Seq[(Int, ColumnDescriptor, Option[ColumnFetch])]): (Int, Long) = {
    val merged = file.stream.plan(ranges(block, rowGroup, columns), settings.maxCoalesceGap)
    (merged.size, merged.iterator.map(_.length).sum)
  }
}
