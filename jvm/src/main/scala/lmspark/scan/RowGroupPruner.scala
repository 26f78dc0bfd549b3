package lmspark.scan

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData}
import org.apache.parquet.internal.column.columnindex.ColumnIndex
import org.apache.spark.sql.types.Decimal

import lmspark.column.{ChunkDictionary, SparkValues}
import lmspark.io.{ByteRange, ChunkContext, FetchingStream}
import lmspark.meta.{BloomFilters, MetadataCache, OpenFile, PageIndexes, RawPageIndex}
import lmspark.plan.ScanMetrics
import lmspark.predicate.{ColumnPages, ColumnStats, Guarantees, PageFilter, Predicate}
import lmspark.selection.{PageLocations, RowSelection, ScanRanges}

/** What the scan does with one row group. */
sealed trait RowGroupDecision
object RowGroupDecision {

  /** Nothing in the row group can pass the scan's predicate; `by` names the proof. */
  final case class Skip(by: PruneReason) extends RowGroupDecision

  /** Read the row group as planned. */
  final case class Read(plan: RowGroupPlan) extends RowGroupDecision
}

sealed trait PruneReason
object PruneReason {
  case object Statistics extends PruneReason
  case object Guarantee extends PruneReason
  case object Dictionary extends PruneReason
  case object BloomFilter extends PruneReason
  case object PageIndex extends PruneReason
  /** The table format marks every row of the row group deleted ([[RowMarks]]). */
  case object Deleted extends PruneReason
}

/** How one projected column of a row group is fetched: all of its chunk, or only the pages `kept`
  * (sorted indexes into `locations`, the chunk's checked offset index). */
final case class ColumnFetch(locations: PageLocations, kept: Array[Int]) {
  def pruned: Int = locations.pages - kept.length
}

/** One row group to read.
  * @param residual the scan's predicate simplified for this row group (what rows must still pass)
  * @param selection rows that may pass, from the page index; None: every row
  * @param fetches per requested column (by index), the pages to fetch; None: the whole chunk
  * @param dictionaries per requested column (by index), the chunk's dictionary page when pruning
  *   read and decoded it already: the column's readers start past it */
final case class RowGroupPlan(
    blockIndex: Int,
    rowCount: Long,
    residual: Predicate,
    selection: Option[RowSelection],
    fetches: Array[Option[ColumnFetch]],
    dictionaries: Map[Int, ChunkDictionary.Loaded] = Map.empty)

object RowGroupPlan {
  /** Every row of every column, with no predicate left to apply. */
  def whole(blockIndex: Int, rowCount: Long, columns: Int): RowGroupPlan =
    RowGroupPlan(blockIndex, rowCount, Predicate.True, None, Array.fill(columns)(None))
}

/** Decides, row group by row group of one file split, what metadata proves about the scan's
  * predicate, cheapest proof first: statistics (and the guarantee they give), then whole-chunk
  * dictionaries, then bloom filters, then page indexes. Every piece of metadata is converted and
  * checked by [[SparkValues]] / [[PageIndexes]] / [[BloomFilters]] before it is used; metadata that
  * fails a check is ignored (and counted), never trusted.
  *
  * Flags: statistics pruning skips a row group when the predicate simplified with its statistics
  * is `False`; guarantees make that simplified predicate the row group's residual (conjuncts proven
  * true dropped, IN lists shrunk), and prune on their own when statistics pruning is off;
  * dictionary, bloom filter and page-index steps work on the residual.
  *
  * Dictionary pages read for pruning are kept in the row group's plan (`dictionaries`), so the
  * row group's readers do not read or decode them again; so are those the executor's cache holds
  * from an earlier read of the row group. Errors and metadata are named by the
  * file's row-group index ([[ChunkSources.context]]).
  *
  * Rows the table format drops (`marks`, e.g. a deletion vector's; null: none) leave every row
 * group's selection last: a row group with no row kept is skipped, and in the others the pages
 * holding no kept row (by each column's offset index, when it has a usable one) are not fetched.
 * When the scan reads the format's mark column ([[ColumnPlan.RowMark]]) and the `auto` selection
 * policy walks selections of runs shorter than its threshold as masks, runs of fewer dropped rows
 * than that threshold stay in the selection: a mask would decode them anyway, and the mark column
 * flags them for the format's own filter above the scan, which is cheaper than copying the kept
 * rows out of every stretch. Longer runs (whole pages among them) are left out as before. With
 * `settings.flagAllMarked` (a top-k's reads), every dropped row stays, flagged.
 *
 * Invariant: a row group or page is skipped only when no row in it can make the predicate TRUE, or
 * no row in it is kept. */
final class RowGroupPruner(file: OpenFile, plan: FileReadPlan, predicate: Predicate, settings: ScanSettings,
    metrics: ScanMetrics, sources: ChunkSources, marks: RowMarks = null) {
  private[this] val proof = new StatisticsProof(plan, predicate, settings)

  /** The fewest dropped rows in a run the selection leaves out (see above). */
  private[this] val minDropped: Int = settings.policy match {
    case _ if settings.flagAllMarked =>
      require(marks == null || plan.columns.contains(ColumnPlan.RowMark), "internal error: marked rows flagged in no column")
      Int.MaxValue
    case lmspark.selection.SelectionPolicy.Auto(threshold) if plan.columns.contains(ColumnPlan.RowMark) =>
      math.max(1, threshold)
    case _ => 1
  }

  private def sparkValues(col: Int): Option[SparkValues] = proof.sparkValues(col)

  private def chunk(block: BlockMetaData, col: Int): Option[ColumnChunkMetaData] = plan.columns(col) match {
    case ColumnPlan.Present(descriptor, _, _) => Some(FileReadPlan.chunkOf(block, descriptor))
    case _ => None // missing, or nested (its leaves are columns of their own)
  }

  /** Where column `col`'s chunk metadata of the split's `blockIndex`-th row group is kept in the
    * executor's [[MetadataCache]] (by the file's row-group index and the leaf's path). */
  private def cachePart(col: Int, blockIndex: Int, part: (Int, Seq[String]) => MetadataCache.Part): MetadataCache.Part =
    plan.columns(col) match {
      case ColumnPlan.Present(d, _, _) => sources.cachePart(blockIndex, d, part)
      case _ => part(file.rowGroupIndex(blockIndex), Seq(settings.columns.name(col)))
    }

  private[this] val dictionaryCache = sources.dictionaryCache

  private def context(col: Int, blockIndex: Int): ChunkContext = plan.columns(col) match {
    case ColumnPlan.Present(d, _, _) => sources.context(blockIndex, d)
    case _ => new ChunkContext(file.path.toString, settings.columns.name(col), file.rowGroupIndex(blockIndex))
  }

  /** Dictionaries read while deciding the current row group, by requested column. */
  private[this] var loaded = Map.empty[Int, ChunkDictionary.Loaded]

  def decide(block: BlockMetaData, blockIndex: Int): RowGroupDecision = {
    loaded = Map.empty
    held.release()
    held = FetchingStream.Fetch.Empty
    decideWithProofs(block, blockIndex) match {
      case RowGroupDecision.Read(p) => withMarks(block, blockIndex, withDictionaries(block, blockIndex, p, loaded))
      case d => d
    }
  }

  /** `p` with the dictionaries its readers need not read: `decoded` (by this decision), and those the
    * executor's cache holds from an earlier read of the row group (by pruning, or by a column reader:
    * [[ChunkSources.open]] keeps them). */
  private def withDictionaries(block: BlockMetaData, blockIndex: Int, p: RowGroupPlan,
      decoded: Map[Int, ChunkDictionary.Loaded]): RowGroupPlan = {
    val cached =
      if (dictionaryCache.key.isEmpty) Map.empty[Int, ChunkDictionary.Loaded]
      else plan.columns.indices.iterator
        .filter(col => !decoded.contains(col) && chunk(block, col).exists(_.hasDictionaryPage))
        .flatMap { col =>
          dictionaryCache.get[Option[ChunkDictionary.Loaded]](cachePart(col, blockIndex, MetadataCache.Dictionary))
            .flatten.map(col -> _)
        }.toMap
    if (decoded.isEmpty && cached.isEmpty) p else p.copy(dictionaries = decoded ++ cached)
  }

  /** Plan `p` of `block` with the rows the table format drops left out of its selection, or Skip
    * when no row is left. */
  private def withMarks(block: BlockMetaData, blockIndex: Int, p: RowGroupPlan): RowGroupDecision =
    if (marks == null) RowGroupDecision.Read(p)
    else {
      metrics.rowsDeleted += marks.droppedWithin(file.firstRow(blockIndex), block.getRowCount)
      marks.keptWithin(file.firstRow(blockIndex), block.getRowCount, minDropped) match {
        case None => RowGroupDecision.Read(p)
        case Some(kept) =>
          val selection = p.selection.fold(kept)(_.intersection(kept))
          if (selection.selectedCount == 0) RowGroupDecision.Skip(PruneReason.Deleted)
          else RowGroupDecision.Read(p.copy(selection = Some(selection), fetches = plan.columns.indices.toArray.map { col =>
            p.fetches(col).map(_.locations).orElse(locations(block, blockIndex, col))
              .map(loc => ColumnFetch(loc, ScanRanges.selectedPages(selection, loc)))
          }))
      }
    }

  private def decideWithProofs(block: BlockMetaData, blockIndex: Int): RowGroupDecision = {
    val rowCount = block.getRowCount
    // Every row of the row group, filtered by what is left of the predicate (nothing when TRUE).
    def readAll(residual: Predicate): RowGroupDecision =
      RowGroupDecision.Read(RowGroupPlan.whole(blockIndex, rowCount, plan.columns.length).copy(residual = residual))
    if (predicate == Predicate.True) return readAll(predicate)

    // 1. Statistics and the guarantee they give.
    val stats = proof.stats(block, () => metrics.statisticsIgnored += 1)
    var residual = predicate
    if (settings.pruneStatistics || settings.pruneGuarantees) {
      val simplified = Guarantees.simplify(predicate, stats.get)
      if (simplified.predicate == Predicate.False)
        return RowGroupDecision.Skip(if (settings.pruneStatistics) PruneReason.Statistics else PruneReason.Guarantee)
      if (settings.pruneGuarantees) {
        residual = simplified.predicate
        metrics.conjunctsRemoved += simplified.conjunctsRemoved
      }
    }
    // Every conjunct proven by the statistics: the rows need no filtering at all.
    if (residual == Predicate.True) return readAll(residual)
    val residualColumns = Guarantees.columns(residual).toArray.sorted

    // 2 and 3. Whole-chunk dictionaries, then bloom filters. Their bytes (those of bloom filters
    // whose length the footer gives) come in one round trip with the split's page indexes when
    // step 4 will want them; nothing for what the metadata cache holds.
    // A chunk whose dictionary is fetched and whose data pages add at most VectoredGap bytes comes
    // whole, and stays held for the row group: its filter pass then needs no request of its own.
    // A column whose exact bounds already satisfy the residual cannot be excluded by its dictionary.
    val dictionaryColumns =
      if (settings.pruneDictionary) residualColumns.filter(c => !boundsCanMatch(c, residual, stats.get(c))) else Array.empty[Int]
    val dictionaries = dictionaryColumns.toSeq.flatMap(dictionaryRange(block, blockIndex, _))
    val (whole, dictionaryOnly) = dictionaries.partition(r => chunkAround(block, r).isDefined)
    val blooms = if (settings.pruneBloomFilter) residualColumns.toSeq.flatMap(bloomRange(block, blockIndex, _)) else Nil
    val indexes = if (settings.usePageIndex) indexRanges() else Nil
    val fetches = file.stream.fetchAll(Seq(dictionaryOnly ++ blooms, indexes, whole.flatMap(chunkAround(block, _))),
      settings.maxCoalesceGap)
    val fetched = fetches.head
    if (fetches(1).bytes > 0) indexesHeld = true
    held = fetches(2)
    try {
      if (settings.pruneDictionary) {
        val it = dictionaryColumns.iterator
        while (it.hasNext) {
          val col = it.next()
          if (dictionaryExcludes(block, blockIndex, col, residual, stats.get(col))) return RowGroupDecision.Skip(PruneReason.Dictionary)
        }
      }
      if (settings.pruneBloomFilter) {
        // The residual keeps what each bloom filter removed (values of `=` / `IN` it proves absent
        // from the chunk), so page pruning and the filter pass work on the narrowed lists.
        val it = residualColumns.iterator
        while (it.hasNext) {
          val col = it.next()
          bloomResidual(block, blockIndex, col, residual, stats.get(col)) match {
            case Some(Predicate.False) => return RowGroupDecision.Skip(PruneReason.BloomFilter)
            case Some(narrowed) => residual = narrowed
            case None =>
          }
        }
      }
    } finally fetched.release()
    if (residual == Predicate.True) return readAll(residual)

    // 4. Page indexes.
    if (!settings.usePageIndex) return readAll(residual)
    pagePlan(block, blockIndex, residual, Guarantees.columns(residual).toArray.sorted, stats) match {
      case Some(p) if p.selection.exists(_.selectedCount == 0) => RowGroupDecision.Skip(PruneReason.PageIndex)
      case Some(p) => RowGroupDecision.Read(p)
      case None => readAll(residual)
    }
  }

  /** Row groups of the split that statistics (or their guarantee) do not skip: when at most one,
    * the split reads at most one row group and nothing can overlap its fetch. */
  lazy val keptByStatistics: Int = {
    val blocks = file.footer.getBlocks
    (0 until blocks.size()).count(bi => proof.skip(blocks.get(bi)).isEmpty)
  }

  /** True when column `col`'s exact min or max, values its chunk holds and so its dictionary
    * holds, could pass `residual`: the dictionary cannot exclude the row group then, and is neither
    * fetched nor decoded for pruning. (A range lying between the bounds, `a < c < b`, still
    * consults it.) */
  private def boundsCanMatch(col: Int, residual: Predicate, stats: Option[ColumnStats]): Boolean =
    stats.exists { s =>
      val witnesses = (if (s.minExact) s.min.toList else Nil) ++ (if (s.maxExact) s.max.toList else Nil)
      witnesses.nonEmpty && Guarantees.canMatchValues(residual, col, witnesses.toIndexedSeq, mayBeNull = false)
    }

  /** The dictionary region of column `col`'s chunk (its start to its first data page), when
    * dictionary pruning will read it (and the cache does not hold it). */
  private def dictionaryRange(block: BlockMetaData, blockIndex: Int, col: Int): Option[ByteRange] =
    chunk(block, col).filter(c => ChunkDictionary.allPagesDictionaryEncoded(c) && sparkValues(col).isDefined &&
      c.getFirstDataPageOffset > c.getStartingPos && c.getStartingPos >= 0 &&
      !dictionaryCache.contains(cachePart(col, blockIndex, MetadataCache.Dictionary)))
      .map(c => ByteRange(c.getStartingPos, c.getFirstDataPageOffset - c.getStartingPos))

  /** The whole chunk that starts with the dictionary range `r`, when its data pages add at most
    * [[FetchingStream.VectoredGap]] bytes: reading them with the dictionary costs less than another
    * request in turn. */
  private def chunkAround(block: BlockMetaData, r: ByteRange): Option[ByteRange] =
    block.getColumns.asScala.find(c => c.getStartingPos == r.offset && c.getTotalSize >= 0)
      .filter(c => c.getTotalSize - r.length <= FetchingStream.VectoredGap)
      .map(c => ByteRange(c.getStartingPos, c.getTotalSize))

  /** Whole chunks the last decision fetched with their dictionaries ([[chunkAround]]), held for the
    * row group's read. */
  private[this] var held: FetchingStream.Fetch = FetchingStream.Fetch.Empty

  /** Hands over the whole chunks the last [[decide]] fetched (Empty if none): the caller releases
    * them when the row group is done, or at once when it is skipped. */
  def takeHeld(): FetchingStream.Fetch = { val h = held; held = FetchingStream.Fetch.Empty; h }

  /** The bytes of column `col`'s bloom filter, when the footer gives their length, the filter will
    * be read, and the cache does not hold it. */
  private def bloomRange(block: BlockMetaData, blockIndex: Int, col: Int): Option[ByteRange] =
    chunk(block, col).filter(c => c.getBloomFilterOffset >= 0 && sparkValues(col).isDefined &&
      !file.cache.contains(cachePart(col, blockIndex, MetadataCache.Bloom)))
      .flatMap { c =>
        val length = lmspark.shim.SparkLineApis.bloomFilterLength(c)
        if (length > 0 && length <= BloomFilters.MaxBytes) Some(ByteRange(c.getBloomFilterOffset, length)) else None
      }

  private[this] var indexesFetched = false

  /** Fetches, once per file and in one call, the page indexes of every column the scan reads in
    * every row group of the split that statistics do not skip: writers put them together before the
    * footer. They stay held
    * until the file is closed. References that cannot be right are left to [[PageIndexes.read]],
    * which reports them. */
  private def fetchIndexes(): Unit =
    if (file.stream.fetch(indexRanges(), settings.maxCoalesceGap).bytes > 0) indexesHeld = true

  /** Whether [[fetchIndexes]] fetched some page indexes (an object store's stream fetches ahead). */
  private[this] var indexesHeld = false

  /** The ranges [[fetchIndexes]] fetches the first time (but those of indexes the cache holds);
    * nothing afterwards. */
  private def indexRanges(): Seq[ByteRange] = if (indexesFetched) Nil else {
    indexesFetched = true
    val blocks = file.footer.getBlocks
    for {
      bi <- 0 until blocks.size()
      if proof.skip(blocks.get(bi)).isEmpty
      col <- plan.columns.indices
      c <- chunk(blocks.get(bi), col).toSeq
      if !file.cache.contains(cachePart(col, bi, MetadataCache.PageIndex))
      ref <- Seq(c.getColumnIndexReference, c.getOffsetIndexReference)
      if ref != null && ref.getOffset >= 0 && ref.getLength > 0 && ref.getLength <= PageIndexes.MaxIndexBytes
    } yield ByteRange(ref.getOffset, ref.getLength)
  }

  private def dictionaryExcludes(block: BlockMetaData, blockIndex: Int, col: Int, residual: Predicate,
      stats: Option[ColumnStats]): Boolean = {
    val c = chunk(block, col).orNull
    if (c == null || !ChunkDictionary.allPagesDictionaryEncoded(c)) return false
    val sv = sparkValues(col).orNull
    if (sv == null) return false
    val desc = plan.columns(col).asInstanceOf[ColumnPlan.Present].descriptor
    val read = dictionaryCache.getOrLoad(cachePart(col, blockIndex, MetadataCache.Dictionary)) {
      val (r, bytes) = ChunkDictionary.read(sources.input(block, blockIndex, desc), desc.getPrimitiveType)
      metrics.bytesRead += bytes
      (r, r.fold(0L)(_.dictionary.heapBytes))
    }
    read.foreach(d => loaded += col -> d)
    val dict = read.map(_.dictionary).orNull
    if (dict == null) return false
    sv.dictionary(dict) match {
      case Some(entries) =>
        val mayBeNull = !stats.exists(_.nullCount.contains(0L))
        // An entry that does not convert is unknown: it might pass, so nothing is excluded.
        try !Guarantees.canMatchValues(residual, col, entries, mayBeNull)
        catch { case _: SparkValues.Unconvertible => false }
      case None => false
    }
  }

  /** The residual with the values column `col`'s bloom filter proves absent removed; None when the
    * column has no usable bloom filter. */
  private def bloomResidual(block: BlockMetaData, blockIndex: Int, col: Int, residual: Predicate,
      stats: Option[ColumnStats]): Option[Predicate] = {
    val c = chunk(block, col).orNull
    if (c == null || c.getBloomFilterOffset < 0) return None
    val sv = sparkValues(col).orNull
    if (sv == null) return None
    val bitset = file.cache.getOrLoad(cachePart(col, blockIndex, MetadataCache.Bloom)) {
      val b = BloomFilters.readBitset(file.stream, c, context(col, blockIndex))
      (b, b match { case Some(Right(bits)) => bits.length.toLong; case Some(Left(_)) => -1L; case None => 0L })
    }
    bitset.map(_.map(BloomFilters.filter)) match {
      case None => None
      case Some(Left(_)) => metrics.bloomFiltersIgnored += 1; None
      case Some(Right(bloom)) =>
        // A bloom filter must contain every value of its chunk, so it must contain the chunk's exact
        // min and max; one that denies them is wrong and is not used.
        if (stats.exists(sv.bloomDeniesBounds(bloom, _))) { metrics.bloomFiltersIgnored += 1; None }
        else Some(Guarantees.withAbsentValues(residual, col, sv.absentByBloom(bloom, _)))
    }
  }

  /** The page-index plan of a row group, or None when no predicate column has a usable index.
    * Predicate columns' indexes are read first; the other columns' offset indexes only when the
    * selection leaves rows out. */
  private def pagePlan(block: BlockMetaData, blockIndex: Int, residual: Predicate, residualColumns: Array[Int],
      stats: Map[Int, ColumnStats]): Option[RowGroupPlan] = {
    val rowCount = block.getRowCount
    val locations = new Array[Option[PageLocations]](plan.columns.length)
    java.util.Arrays.fill(locations.asInstanceOf[Array[AnyRef]], None)
    val pageStats = mutable.Map.empty[Int, ColumnPages]

    def readIndex(col: Int, withColumnIndex: Boolean): Unit = chunk(block, col).foreach { c =>
      pageIndex(block, blockIndex, col, c).foreach { raw =>
        if (withColumnIndex && raw.columnIndexProblem.isDefined) metrics.pageIndexesIgnored += 1
        checkedLocations(raw, c, rowCount).foreach { loc =>
          locations(col) = Some(loc)
          if (withColumnIndex) for (ci <- raw.columnIndex; sv <- sparkValues(col)) {
            checkedPages(block, blockIndex, col, sv, ci, loc, stats.get(col)) match {
              case Right(p) => pageStats(col) = p
              case Left(_) => metrics.pageIndexesIgnored += 1
            }
          }
        }
      }
    }

    fetchIndexes()
    residualColumns.foreach(readIndex(_, withColumnIndex = true))
    if (pageStats.isEmpty) return None
    val ranges = PageFilter.candidateRows(residual, rowCount, pageStats.get)
    val selection = RowSelection.fromRowRanges(rowCount, ranges)
    if (indexesHeld && (selection.selectedCount == rowCount || selection.selectedCount == 0))
      // The other columns' indexes came with the predicate columns' and are not needed now, but a
      // later query's fetch asks again for those the metadata cache does not hold: cache them.
      plan.columns.indices.foreach(col => if (!residualColumns.contains(col)) chunk(block, col).foreach(cacheIndex(blockIndex, col, _)))
    if (selection.selectedCount == rowCount)
      return Some(RowGroupPlan(blockIndex, rowCount, residual, None, Array.fill(plan.columns.length)(None)))
    if (selection.selectedCount == 0)
      return Some(RowGroupPlan(blockIndex, rowCount, residual, Some(selection), Array.fill(plan.columns.length)(None)))
    plan.columns.indices.foreach { col => if (!residualColumns.contains(col)) readIndex(col, withColumnIndex = false) }
    val fetches: Array[Option[ColumnFetch]] = locations.map(_.map { loc =>
      ColumnFetch(loc, ScanRanges.selectedPages(selection, loc))
    })
    Some(RowGroupPlan(blockIndex, rowCount, residual, Some(selection), fetches))
  }

  /** Column `col`'s page statistics in `block` ([[SparkValues.pages]]), checked and converted once
    * and kept in the metadata cache, so a repeated query neither converts nor checks them again.
    * Besides the file they depend on the leaf's type, the Spark type and options it is read with, and
    * the chunk statistics they are checked against (which the conf can change: parquet-java keeps
    * old writers' binary bounds only under `parquet.strings.signed-min-max.enabled`), so all of
    * these are the key; binary bounds by content, decimal bounds as Java `BigDecimal`s. */
  private def checkedPages(block: BlockMetaData, blockIndex: Int, col: Int, sv: SparkValues, ci: ColumnIndex,
      loc: PageLocations, chunkStats: Option[ColumnStats]): Either[String, ColumnPages] = {
    val ColumnPlan.Present(d, sparkType, options) = plan.columns(col): @unchecked
    def byContent(v: Option[Any]): Option[Any] = v.map {
      case b: Array[Byte] => b.toSeq
      // Hashing a Spark Decimal goes through Scala's BigDecimal.hashCode, which formats the value
      // as a Double string; Java's BigDecimal hashes its digits (and its equality, scale included,
      // is only stricter: a miss, never a wrong entry).
      case d: Decimal => d.toJavaBigDecimal
      case other => other
    }
    val checkedAgainst = chunkStats.map(s => s.copy(min = byContent(s.min), max = byContent(s.max)))
    val conversion = (d.getPrimitiveType, d.getMaxDefinitionLevel, sparkType, options, checkedAgainst)
    file.cache.getOrLoad(cachePart(col, blockIndex, MetadataCache.PageStats(_, _, conversion))) {
      val r = sv.pages(ci, loc, chunkStats)
      (r, r.fold(_ => 0L, p => ColumnPages.heapBytes(p)))
    }
  }

  /** Column `col`'s page indexes in `block` (chunk `c`), read once and kept in the metadata cache;
    * None, counted as ignored, when they cannot be read. */
  private def pageIndex(block: BlockMetaData, blockIndex: Int, col: Int, c: ColumnChunkMetaData): Option[RawPageIndex] =
    cacheIndex(blockIndex, col, c) match {
      case Left(_) => metrics.pageIndexesIgnored += 1; None
      case Right(raw) => Some(raw)
    }

  /** Column `col`'s page indexes in the `blockIndex`-th row group (chunk `c`), or why they cannot be
    * read, read once and kept in the metadata cache. */
  private def cacheIndex(blockIndex: Int, col: Int, c: ColumnChunkMetaData): Either[String, RawPageIndex] =
    file.cache.getOrLoad(cachePart(col, blockIndex, MetadataCache.PageIndex)) {
      val r = PageIndexes.read(file.stream, c, context(col, blockIndex))
      (r, r.fold(_ => -1L, _ => PageIndexes.heapBytes(c)))
    }

  /** The chunk's page locations from its offset index, once checked; None (counted when the index
    * is there but wrong) otherwise. */
  private def checkedLocations(raw: RawPageIndex, c: ColumnChunkMetaData, rowCount: Long): Option[PageLocations] =
    raw.offsetIndex.flatMap { oi =>
      PageIndexes.locations(oi, c, rowCount) match {
        case Left(_) => metrics.pageIndexesIgnored += 1; None
        case Right(loc) => Some(loc)
      }
    }

  /** `block` read for the rows of `selection` only (a top-k's rows, say): in every column whose
    * chunk has a usable offset index, the pages that hold none of them are neither fetched nor
    * decoded; the other columns' chunks are read whole and skipped through. */
  def selectRows(block: BlockMetaData, blockIndex: Int, selection: RowSelection): RowGroupPlan = {
    require(marks == null || minDropped == Int.MaxValue, "internal error: a read of wanted rows that would drop marked rows")
    val fetches = plan.columns.indices.toArray.map { col =>
      locations(block, blockIndex, col).map(loc => ColumnFetch(loc, ScanRanges.selectedPages(selection, loc)))
    }
    withDictionaries(block, blockIndex, RowGroupPlan(blockIndex, block.getRowCount, Predicate.True, Some(selection), fetches),
      Map.empty)
  }

  /** Column `col`'s page locations in `block` from its checked offset index, when page indexes are
    * used and it has a usable one (the split's indexes are fetched the first time). */
  private def locations(block: BlockMetaData, blockIndex: Int, col: Int): Option[PageLocations] =
    if (!settings.usePageIndex) None
    else {
      fetchIndexes()
      for {
        c <- chunk(block, col)
        raw <- pageIndex(block, blockIndex, col, c)
        loc <- checkedLocations(raw, c, block.getRowCount)
      } yield loc
    }
}
