package lmspark.scan

import java.io.{Closeable, IOException}

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.BlockMetaData
import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.vectorized.{ConstantColumnVector, OffHeapColumnVector, OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import lmspark.column.ColumnReaderFactory
import lmspark.io.{FetchingStream, PageSource}
import lmspark.meta.{FooterChecks, OpenFile}
import lmspark.plan.ScanMetrics
import lmspark.predicate.{Guarantees, Predicate}
import lmspark.selection.ScanRanges
import lmspark.shim.SparkInternals

/**
 * Reads one file split with lmspark's column readers, row group by row group, as a stream of
 * `ColumnarBatch`es of at most `batchSize` rows: the requested columns, then the partition
 * columns.
 *
 * A [[RowGroupPruner]] decides first what each row group's metadata proves: skipped row groups
 * are never read; a row group with a page-index selection yields only the selected rows (every
 * column walks one [[lmspark.selection.SelectionCursor]]: `read` the selected runs, `skip` the others), and pages
 * with no selected row are not fetched at all. Rows outside the selection provably fail the
 * predicate; rows inside it may too: Spark's `Filter` above the scan still applies.
 *
 * I/O goes by stages, each fetched ahead in one call ([[ChunkSources.fetch]]): for a row group read
 * filter-first, the filtered columns' chunks (or selected pages), then the other columns' pages
 * holding rows that passed; for a row group read whole, every column at once. While a row group
 * decodes, the next one is decided and its first stage fetched (within the prefetch bounds), so
 * its bytes arrive while this one's are decoded. A row group's fetched bytes are released when it
 * is done.
 *
 * Invariants: one batch and its vectors are reused for the whole file, so a batch is valid only
 * until the next call to `next()`; constant vectors (missing columns, partition values) are filled
 * once. The reader closes itself after the last batch; Spark's `FileScanRDD` closes it on early
 * termination (it is `Closeable`).
 */
final class FileBatchReader(
    file: OpenFile,
    plan: FileReadPlan,
    partitionValues: InternalRow,
    settings: ScanSettings,
    hadoopConf: Configuration,
    metrics: ScanMetrics) extends Iterator[ColumnarBatch] with Closeable {

  // The footer fields of the chunks this scan reads, before anything is allocated or read.
  FooterChecks.check(file, plan.leaves)

  private val capacity = settings.batchSize
  private val blocks = file.footer.getBlocks

  private val dataVectors: Array[WritableColumnVector] =
    if (settings.offHeapVectors) OffHeapColumnVector.allocateColumns(capacity, settings.requiredSchema).toArray
    else OnHeapColumnVector.allocateColumns(capacity, settings.requiredSchema).toArray

  /** Indexes (into the requested schema) of the columns this file has. */
  private val presentColumns: Array[Int] = plan.columns.indices.filter { i =>
    plan.columns(i) match {
      case ColumnPlan.Missing =>
        dataVectors(i).putNulls(0, capacity)
        dataVectors(i).setIsConstant()
        false
      case _ => true
    }
  }.toArray

  private val partitionVectors: Array[ConstantColumnVector] =
    settings.partitionSchema.fields.indices.map { i =>
      val v = new ConstantColumnVector(capacity, settings.partitionSchema.fields(i).dataType)
      SparkInternals.populateConstant(v, partitionValues, i)
      v
    }.toArray

  private val batch = new ColumnarBatch((dataVectors ++ partitionVectors).map(v => v: ColumnVector))

  /** Bytes each column's page source reads at once and holds (one larger page excepted): what the
    * task holds of chunk bytes follows the columns read, not the row group's size. */
  private val windowBytes = PageSource.windowFor(presentColumns.length)
  private val sources = new ChunkSources(file, settings, windowBytes)

  private val pruner: RowGroupPruner =
    if (settings.predicate == Predicate.True) null
    else new RowGroupPruner(file, plan, settings.predicate, settings, metrics, sources)

  /** Columns (requested-schema indexes) the scan's predicate reads. */
  private val filteredColumns: Set[Int] = Guarantees.columns(settings.predicate)
  /** Present columns projected without being filtered. */
  private val outputOnly: Int = presentColumns.count(i => !filteredColumns.contains(i))
  private val lm = new LateMaterialization(settings)
  private val cache = new PredicateCache(settings.predicateCacheMaxBytes, capacity, settings.preserveDictionary, metrics)
  private val pass = new FilterFirstPass(plan, settings, metrics, cache, lm, sources)
  /** Page sources the filter-first pass already fetched for the current row group, by requested column. */
  private var refetch: Map[Int, PageSource] = Map.empty
  /** The filter columns the pass cached for the current row group (handed to `fromCache`). */
  private var cachedColumns: Map[Int, PredicateCache.Column] = Map.empty
  /** The read loops of the current row group, over the present columns' vectors. */
  private val batches = new RowGroupBatches(capacity, presentColumns.map(dataVectors), metrics)

  private var nextBlock = 0
  /** Rows the current row group still yields (its selected rows, when it has a selection). */
  private var rowsLeftInGroup = 0L
  private var closed = false

  /** The task's SQL conf, made current (`withExistingConf`) around every call: each column vector
    * built reads the conf, and on an executor `SQLConf.get` otherwise builds it anew every time. */
  private[this] val sqlConf = SQLConf.get

  override def hasNext: Boolean = SQLConf.withExistingConf(sqlConf)(hasNextBatch())

  private def hasNextBatch(): Boolean = {
    if (closed) return false
    while (rowsLeftInGroup == 0 && nextBlock < blocks.size()) openNextRowGroup()
    if (rowsLeftInGroup == 0) { close(); false } else true
  }

  override def next(): ColumnarBatch = SQLConf.withExistingConf(sqlConf)(nextBatch())

  private def nextBatch(): ColumnarBatch = {
    if (!hasNextBatch()) throw new NoSuchElementException(s"no more batches in ${file.path}")
    val start = System.nanoTime()
    val n = guarded { batches.next(rowsLeftInGroup) }
    batch.setNumRows(n)
    rowsLeftInGroup -= n
    metrics.scanTimeNs += System.nanoTime() - start
    batch
  }

  /** The fetches of the current row group's stages, released when it is done. */
  private var stageFetches: List[FetchingStream.Fetch] = Nil
  /** Row groups (by split index) decided ahead, with the fetch of their first stage. */
  private val ahead = scala.collection.mutable.Map.empty[Int, (RowGroupDecision, FetchingStream.Fetch)]

  private def decide(block: BlockMetaData, blockIndex: Int): RowGroupDecision =
    if (pruner == null) RowGroupDecision.Read(RowGroupPlan.whole(blockIndex, block.getRowCount, plan.columns.length))
    else pruner.decide(block, blockIndex)

  /** `cols` (requested-column indexes) of `p` that the file has, with their leaf and fetch. */
  private def leaves(p: RowGroupPlan, cols: Iterable[Int]): Seq[(Int, ColumnDescriptor, Option[ColumnFetch])] =
    cols.toSeq.sorted.flatMap(i => plan.columns(i) match {
      case ColumnPlan.Present(d, _, _) => Some((i, d, p.fetches(i)))
      case ColumnPlan.Missing => None
    })

  /** The single-column filters of `p` when late materialization may read it filter-first. */
  private def filtersOf(p: RowGroupPlan): Map[Int, Predicate] =
    if (settings.lateMaterialization && p.residual != Predicate.True) pass.filtersOf(p.residual) else Map.empty

  /** The columns a row group's first fetch takes: all of them when it is decoded whole, or when
    * the page index left few candidate pages (`singleStageMaxBytes` over all columns: one round trip
    * instead of two, its requests [[spread]]); else the filtered columns. */
  private def firstStage(block: BlockMetaData, p: RowGroupPlan, filters: Map[Int, Predicate],
      whole: Boolean): Stage = {
    val all = leaves(p, presentColumns.toSeq)
    val few = p.selection.isDefined && sources.cost(block, p, all)._2 <= settings.singleStageMaxBytes
    if (filters.isEmpty || whole || few) new Stage(all, if (few) spread else FetchingStream.Spread.No)
    else new Stage(leaves(p, filters.keys), FetchingStream.Spread.No)
  }

  /** How a row group's few candidate pages are cut into parallel pieces: each its own call when
    * statistics leave the split at most one row group, so that its fetch is all the task waits for
    * (a point lookup); otherwise in one call, where the connector merges adjacent pieces back up to
    * its largest request (the next row group's fetch overlaps this one's decoding, and more pieces
    * would mostly add requests). */
  private lazy val spread: FetchingStream.Spread =
    if (pruner != null && pruner.keptByStatistics <= 1) FetchingStream.Spread.Apart else FetchingStream.Spread.Merged

  /** A fetch's columns (requested column, leaf, fetch), and how its requests are spread. */
  private final class Stage(val columns: Seq[(Int, ColumnDescriptor, Option[ColumnFetch])], cut: FetchingStream.Spread) {
    def fetch(block: BlockMetaData, p: RowGroupPlan): FetchingStream.Fetch = sources.fetch(block, p, columns, cut)
  }

  /** Fetches ahead while the current row group decodes: the next one decided and its first stage
    * ([[firstStage]], whole when the split's row groups have been decoded whole lately), within
    * `prefetchMaxRequests` requests and the bytes a task may hold. A failed decision is left for
    * its turn, which fails the same way. */
  private def prefetchNext(): Unit =
    if (settings.prefetchMaxRequests > 0 && file.stream.maxBytes > 0) { if (pruner == null) prefetchWhole() else prefetchOne() }

  /** Without a predicate every row group is read whole: the following row groups not fetched yet
    * are fetched together, in one call with their ranges merged, as many as the request and byte
    * bounds allow (so a full scan takes a few large reads, not one per row group); the bytes are
    * released when the last of them is done. */
  private def prefetchWhole(): Unit = {
    var j = nextBlock
    while (ahead.contains(j)) j += 1
    val room = file.stream.maxBytes - file.stream.bytesHeld
    val picked = scala.collection.mutable.ArrayBuffer.empty[(Int, RowGroupPlan, Seq[lmspark.io.ByteRange])]
    var requests = 0
    var bytes = 0L
    var more = true
    while (more && j < blocks.size()) {
      val block = blocks.get(j)
      if (block.getRowCount > 0) {
        val p = RowGroupPlan.whole(j, block.getRowCount, plan.columns.length)
        val cols = leaves(p, presentColumns.toSeq)
        val (r, b) = sources.cost(block, p, cols)
        if (requests + r <= settings.prefetchMaxRequests && bytes + b <= room) {
          picked += ((j, p, sources.ranges(block, p, cols)))
          requests += r
          bytes += b
        } else more = false
      }
      if (more) j += 1
    }
    if (picked.nonEmpty) {
      // One set of ranges, merged across row groups too; released with the last of them.
      val fetch = file.stream.fetch(picked.flatMap(_._3).toSeq, settings.maxCoalesceGap)
      val last = picked.last._1
      picked.foreach { case (i, p, _) => ahead(i) = (RowGroupDecision.Read(p), if (i == last) fetch else FetchingStream.Fetch.Empty) }
    }
  }

  /** The next row group, decided now, and its first stage fetched ([[firstStage]]). */
  private def prefetchOne(): Unit = {
    if (nextBlock >= blocks.size() || ahead.contains(nextBlock)) return
    val block = blocks.get(nextBlock)
    if (block.getRowCount == 0) return
    val decision = try decide(block, nextBlock) catch { case NonFatal(_) => return }
    val fetch = decision match {
      case RowGroupDecision.Read(p) =>
        val filters = filtersOf(p)
        val first = firstStage(block, p, filters, whole = filters.nonEmpty && lm.likelyWhole(filters.keys, outputOnly))
        val (requests, bytes) = sources.cost(block, p, first.columns)
        if (requests <= settings.prefetchMaxRequests && bytes <= file.stream.maxBytes - file.stream.bytesHeld)
          first.fetch(block, p)
        else FetchingStream.Fetch.Empty
      case _ => FetchingStream.Fetch.Empty
    }
    ahead(nextBlock) = (decision, fetch)
  }

  private def openNextRowGroup(): Unit = {
    closeReaders()
    val blockIndex = nextBlock
    val block = blocks.get(blockIndex)
    nextBlock += 1
    metrics.rowGroupsTotal += 1
    if (block.getRowCount == 0) return
    refetch = Map.empty
    var materializing = false
    val decision: RowGroupDecision = ahead.remove(blockIndex) match {
      case Some((d, f)) => stageFetches ::= f; d
      case None => guarded { decide(block, blockIndex) }
    }
    val rowGroup = decision match {
      case RowGroupDecision.Skip(reason) =>
        reason match {
          case PruneReason.Statistics => metrics.prunedByStatistics += 1
          case PruneReason.Guarantee => metrics.prunedByGuarantee += 1
          case PruneReason.Dictionary => metrics.prunedByDictionary += 1
          case PruneReason.BloomFilter => metrics.prunedByBloomFilter += 1
          case PruneReason.PageIndex => metrics.prunedByPageIndex += 1
        }
        return
      case RowGroupDecision.Read(p) =>
        val filters = filtersOf(p)
        if (filters.nonEmpty && lm.filterFirst(filters.keys, outputOnly)) {
          metrics.rowGroupsLate += 1
          stageFetches ::= firstStage(block, p, filters, whole = false).fetch(block, p)
          val o = guarded { pass.run(block, p, filters) }
          if (o.selection.selectedCount == 0) { metrics.prunedByPredicateColumns += 1; cache.clear(); return }
          lm.recordSelection(o.selection.selectedCount, math.max(1L, o.selection.runCount / 2))
          refetch = o.sources
          cachedColumns = o.cached
          materializing = outputOnly > 0
          p.copy(selection = Some(o.selection), fetches = p.fetches.map(_.map(f =>
            ColumnFetch(f.locations, ScanRanges.selectedPages(o.selection, f.locations)))))
        } else {
          if (filters.nonEmpty) metrics.rowGroupsWhole += 1
          p
        }
    }
    // The columns still to read, in one fetch (cached columns are copied, sources the pass opened reopen).
    val rest = leaves(rowGroup, presentColumns.filter(i => !cachedColumns.contains(i) && !refetch.contains(i)))
    val few = rowGroup.selection.isDefined && sources.cost(block, rowGroup, rest)._2 <= settings.singleStageMaxBytes
    stageFetches ::= sources.fetch(block, rowGroup, rest, if (few) spread else FetchingStream.Spread.No)
    val fromCache = presentColumns.map(i => cachedColumns.getOrElse(i, null))
    val readers = guarded {
      batches.prepare(presentColumns.length)
      presentColumns.indices.toArray.map { k =>
        val i = presentColumns(k)
        val ColumnPlan.Present(descriptor, sparkType, options) = plan.columns(i): @unchecked
        val fetch = rowGroup.fetches(i)
        metrics.pagesPruned += fetch.fold(0)(_.pruned)
        metrics.pagesTotal += fetch.fold(0)(_.locations.pages)
        if (fromCache(k) != null) null // copied from the predicate cache
        else {
          val pages = refetch.get(i).fold(sources.open(block, rowGroup, i, descriptor, fetch))(_.reopen())
          batches.opening(k, pages, fetch.isDefined)
          ColumnReaderFactory.create(descriptor, sparkType, pages, block.getRowCount,
            options.copy(preserveDictionary = settings.preserveDictionary), rowGroup.dictionaries.get(i).map(_.dictionary))
        }
      }
    }
    refetch = Map.empty
    cachedColumns = Map.empty
    rowsLeftInGroup = batches.start(readers, fromCache, rowGroup.selection, block.getRowCount, materializing)
    metrics.rowGroupsRead += 1
    prefetchNext()
  }

  /** Runs `body`, giving unexpected failures a message that names the file, the row group and,
    * when a column reader was running, the column and its current page. (Malformed input is a
    * [[lmspark.column.ParquetDecodeException]] from the readers already, which names all four.) */
  private def guarded[T](body: => T): T = {
    try body
    catch {
      case e: IOException => batches.clearRunning(); throw e
      case e: SparkThrowable => batches.clearRunning(); throw e
      case NonFatal(e) =>
        val rg = if (nextBlock > 0) file.rowGroupIndex(nextBlock - 1) else 0 // the file's index, as ChunkContext
        val column = batches.runningColumn
        val where =
          if (column < 0 || column >= presentColumns.length) ""
          else s", column ${settings.requiredSchema(presentColumns(column)).name}${batches.runningPage}"
        batches.clearRunning()
        throw new IOException(s"lmspark could not read ${file.path} (row group $rg$where): $e", e)
    }
  }

  private def closeReaders(): Unit = {
    batches.finish()
    stageFetches.foreach(_.release())
    stageFetches = Nil
    cache.clear()
  }

  override def close(): Unit = {
    if (!closed) {
      closed = true
      try {
        closeReaders()
        cache.close()
        val io = file.io
        metrics.ioRequests += io.requests
        metrics.ioRoundTrips += io.roundTrips
        metrics.ioBytesRequested += io.bytesRequested
        metrics.ioBytesUsed += io.bytesUsed
        metrics.ioWaitNs += io.waitNanos
        val cached = file.cache.stats
        metrics.metadataCacheHits += cached.hits
        metrics.metadataCacheMisses += cached.misses
        metrics.metadataCacheEvictions += cached.evictions
      }
      finally {
        try file.close()
        finally batch.close()
      }
    }
  }
}
