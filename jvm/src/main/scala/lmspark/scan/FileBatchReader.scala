package lmspark.scan

import java.io.{Closeable, IOException}

import scala.util.control.NonFatal

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.BlockMetaData
import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.vectorized.{ConstantColumnVector, OffHeapColumnVector, OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import lmspark.column.{ColumnReaderFactory, NestedColumnReader, NestedShape, RowIndexReader, RowMarkReader}
import lmspark.io.{FetchingStream, PageSource}
import lmspark.meta.{FooterChecks, OpenFile}
import lmspark.plan.ScanMetrics
import lmspark.predicate.{Guarantees, Predicate}
import lmspark.selection.{RowRanges, ScanRanges}
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
 * Given `wanted` rows (a top-k's), it yields those rows only, with no predicate: row groups
 * holding none are not read, and in the others only the pages holding one are fetched, for all of
 * them in one call when it opens the first row group. Given `marks` (rows the table format drops,
 * such as a deletion vector's), it never yields, decodes or fetches for a dropped row what it would
 * not for a row outside a page-index selection ([[RowGroupPruner]]), except that, under the `auto`
 * selection policy, short runs of dropped rows are yielded flagged in the format's mark column, and
 * with `settings.flagAllMarked` (a top-k's reads, wanted rows or not) every dropped row is.
 *
 * Columns no chunk holds: the row index (`_metadata.row_index`, [[lmspark.column.RowIndexReader]])
 * and a table format's mark column ([[lmspark.column.RowMarkReader]]: 1 on a dropped row the
 * selection kept, for the format's filter above) walk the selection as a column does; a column the
 * file lacks reads as nulls.
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
    metrics: ScanMetrics,
    wanted: WantedRows = null,
    marks: RowMarks = null) extends Iterator[ColumnarBatch] with Closeable {
  require(wanted == null || marks == null || settings.flagAllMarked, "a read of wanted rows cannot drop marked rows")

  // The footer fields of the chunks this scan reads, before anything is allocated or read.
  FooterChecks.check(file, plan.leaves)

  private val capacity = settings.batchSize
  private val blocks = file.footer.getBlocks

  private val dataVectors: Array[WritableColumnVector] =
    if (settings.offHeapVectors) OffHeapColumnVector.allocateColumns(capacity, settings.requiredSchema).toArray
    else OnHeapColumnVector.allocateColumns(capacity, settings.requiredSchema).toArray

  /** Indexes (into the requested schema) of the columns this file has. */
  private val presentColumns: Array[Int] = settings.requiredSchema.indices.filter { i =>
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
    if (settings.predicate == Predicate.True && wanted == null && marks == null) null
    else new RowGroupPruner(file, plan, settings.predicate, settings, metrics, sources, marks)

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
  private val batches = new RowGroupBatches(capacity, presentColumns.map(dataVectors), metrics, settings.policy)

  private var nextBlock = 0
  /** The split ordinal of the next row group's first row ([[WantedRows]]). */
  private var nextBlockStart = 0L
  /** Rows the current row group still yields (its selected rows, when it has a selection). */
  private var rowsLeftInGroup = 0L
  /** Whether a read of wanted rows has fetched its row groups' pages ([[RowGroupStages.prefetchWanted]]). */
  private var wantedFetched = false
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

  /** The row groups' I/O stages and what is fetched ahead. */
  private val stages = new RowGroupStages(file, plan, settings, sources, pruner, presentColumns)

  /** The single-column filters of `p` when late materialization may read it filter-first. */
  private def filtersOf(p: RowGroupPlan): Map[Int, Predicate] =
    if (settings.lateMaterialization && p.residual != Predicate.True) pass.filtersOf(p.residual) else Map.empty

  private def openNextRowGroup(): Unit = {
    closeReaders()
    val blockIndex = nextBlock
    val block = blocks.get(blockIndex)
    nextBlock += 1
    metrics.rowGroupsTotal += 1
    val blockStart = nextBlockStart
    nextBlockStart += block.getRowCount
    if (block.getRowCount == 0) return
    refetch = Map.empty
    var materializing = false
    var afterPass = false
    val decision: RowGroupDecision =
      if (wanted != null) {
        if (!wantedFetched) { wantedFetched = true; stages.prefetchWanted(wanted) }
        wanted.within(blockStart, block.getRowCount) match {
          case None => return // no wanted row: the row group is not read
          case Some(rows) => stages.takeAhead(blockIndex)
            .getOrElse(RowGroupDecision.Read(guarded { pruner.selectRows(block, blockIndex, rows) }))
        }
      }
      else stages.takeAhead(blockIndex).getOrElse(guarded { stages.decide(block, blockIndex) })
    val rowGroup = decision match {
      case RowGroupDecision.Skip(reason) =>
        reason match {
          case PruneReason.Statistics => metrics.prunedByStatistics += 1
          case PruneReason.Guarantee => metrics.prunedByGuarantee += 1
          case PruneReason.Dictionary => metrics.prunedByDictionary += 1
          case PruneReason.BloomFilter => metrics.prunedByBloomFilter += 1
          case PruneReason.PageIndex => metrics.prunedByPageIndex += 1
          case PruneReason.Deleted => metrics.rowGroupsDeleted += 1
        }
        return
      case RowGroupDecision.Read(p) =>
        val filters = filtersOf(p)
        if (filters.nonEmpty && lm.filterFirst(filters.keys, outputOnly)) {
          metrics.rowGroupsLate += 1
          stages.fetchFirst(block, p, filters)
          val o = guarded { pass.run(block, p, filters) }
          if (o.selection.selectedCount == 0) {
            metrics.prunedByPredicateColumns += 1; cache.clear(); stages.nonePassed(); return
          }
          lm.recordSelection(o.selection.selectedCount, math.max(1L, o.selection.runCount / 2))
          refetch = o.sources
          cachedColumns = o.cached
          materializing = outputOnly > 0
          afterPass = true
          p.copy(selection = Some(o.selection), fetches = p.fetches.map(_.map(f =>
            ColumnFetch(f.locations, ScanRanges.selectedPages(o.selection, f.locations)))))
        } else {
          if (filters.nonEmpty) metrics.rowGroupsWhole += 1
          p
        }
    }
    // The leaf chunks still to read, in one fetch (cached columns are copied, sources the pass opened reopen).
    val fromCache = presentColumns.map(i => cachedColumns.getOrElse(i, null))
    stages.fetchRest(block, rowGroup, presentColumns.indices.filter(k => fromCache(k) == null)
      .flatMap(k => plan.readColumns(presentColumns(k))).filter(c => !refetch.contains(c)), afterPass)
    val readers = guarded {
      batches.prepare(presentColumns.length)
      presentColumns.indices.toArray.map { k =>
        val i = presentColumns(k)
        def pagesOf(c: Int, descriptor: ColumnDescriptor): PageSource = {
          val fetch = rowGroup.fetches(c)
          metrics.pagesPruned += fetch.fold(0)(_.pruned)
          metrics.pagesTotal += fetch.fold(0)(_.locations.pages)
          val pages = refetch.get(c).fold(sources.open(block, rowGroup, c, descriptor, fetch))(_.reopen())
          batches.opening(k, pages, fetch.isDefined, fetch.fold(RowRanges.empty)(f => f.locations.prunedRows(f.kept)))
          pages
        }
        plan.columns(i) match {
          case _ if fromCache(k) != null => // copied from the predicate cache
            val fetch = rowGroup.fetches(i)
            metrics.pagesPruned += fetch.fold(0)(_.pruned)
            metrics.pagesTotal += fetch.fold(0)(_.locations.pages)
            null
          case ColumnPlan.Present(descriptor, sparkType, options) =>
            ColumnReaderFactory.create(descriptor, sparkType, pagesOf(i, descriptor), block.getRowCount,
              options.copy(preserveDictionary = settings.preserveDictionary), rowGroup.dictionaries.get(i).map(_.dictionary))
          case ColumnPlan.Nested(shape) =>
            val leaves = NestedShape.leaves(shape).map { leaf =>
              val ColumnPlan.Present(descriptor, sparkType, options) = plan.columns(leaf.column): @unchecked
              ColumnReaderFactory.createNestedLeaf(descriptor, sparkType, pagesOf(leaf.column, descriptor),
                block.getRowCount, options, leaf.slotDef, leaf.repDefs,
                FileReadPlan.chunkOf(block, descriptor).getValueCount, rowGroup.dictionaries.get(leaf.column).map(_.dictionary))
            }
            new NestedColumnReader(shape, leaves.toArray, capacity)
          case ColumnPlan.RowIndex => new RowIndexReader(file.firstRow(blockIndex))
          case ColumnPlan.RowMark =>
            if (marks == null) new RowMarkReader(Array.emptyLongArray, keepMarked = false, file.firstRow(blockIndex))
            else marks.reader(file.firstRow(blockIndex))
          case ColumnPlan.Missing =>
            throw new IllegalStateException(s"internal error: column $i is not present")
        }
      }
    }
    refetch = Map.empty
    cachedColumns = Map.empty
    rowsLeftInGroup = batches.start(readers, fromCache, rowGroup.selection, block.getRowCount, materializing)
    metrics.rowGroupsRead += 1
    // A read of wanted rows fetched its row groups' pages together when it opened the first.
    if (wanted == null) stages.prefetchNext(nextBlock, filtersOf, filters => lm.likelyWhole(filters.keys, outputOnly))
  }

  /** Before the first batch is asked for: decides the first row group to read and starts fetching
    * its first stage ([[RowGroupStages.prefetchNext]]), so that the fetch overlaps whatever the
    * caller does meanwhile (on an object store; nothing on local disk, nor for a read of wanted
    * rows). A decision that fails here fails again in its turn, where it is reported. */
  def fetchAhead(): Unit = SQLConf.withExistingConf(sqlConf) {
    if (!closed && nextBlock == 0 && wanted == null)
      stages.prefetchNext(0, filtersOf, filters => lm.likelyWhole(filters.keys, outputOnly))
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
    stages.release()
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
