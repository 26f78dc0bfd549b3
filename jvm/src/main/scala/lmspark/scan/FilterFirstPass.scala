package lmspark.scan

import scala.collection.mutable

import org.apache.parquet.hadoop.metadata.BlockMetaData
import org.apache.spark.sql.types.DataType
import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}

import lmspark.column.{ColumnReader, ColumnReaderFactory, SparkDictionary}
import lmspark.io.PageSource
import lmspark.plan.ScanMetrics
import lmspark.predicate.{Guarantees, Predicate, VectorFilter}
import lmspark.selection.{Bits, RowSelection, ScanRanges, SelectionCursor, SelectionStrategy}

/** The filter-first half of late materialization for one row group: decodes the filtered columns
  * one after the other, each only on the rows that passed the columns before it, and narrows the
  * row selection after each.
  *
  * Per column (in the order [[LateMaterialization.order]] gives): the rows of the current selection
  * are decoded batch by batch (pages holding none of them are neither fetched nor decompressed,
  * where the offset index tells where pages are); the column's conjuncts are evaluated on each batch
  * by a [[VectorFilter]] (on a dictionary-encoded batch, once per dictionary entry and then by id);
  * the batch's results form a mask over the selected rows, and the selection becomes
  * `selection.andThen(mask)`. The rows that passed go to the [[PredicateCache]], so the output
  * copies them instead of decoding the column again.
  *
  * Only conjuncts over one column are evaluated here; conjuncts over several columns stay with
  * Spark's `Filter` above the scan (so the result may keep rows failing them, never drop a row
  * passing them).
  *
  * Invariants: the result selects a subset of the input selection's rows: exactly those where every
  * single-column conjunct of the residual is TRUE. Page sources are handed back by column, so a
  * column the cache could not keep is decoded again from the same source (`reopen`: the same bytes
  * when its window held the whole chunk, else read again window by window). A closed source keeps its
  * window only when that holds the whole chunk (at most `windowBytes`), so the pass holds one
  * window per filter column at most, whatever the row group's size. */
final class FilterFirstPass(plan: FileReadPlan, settings: ScanSettings, metrics: ScanMetrics,
    cache: PredicateCache, rule: LateMaterialization, sources: ChunkSources) {
  import FilterFirstPass.Outcome


  /** The residual's single-column conjuncts, ANDed per column (by requested-column index). */
  def filtersOf(residual: Predicate): Map[Int, Predicate] =
    Predicate.conjuncts(residual).flatMap { c =>
      val cols = Guarantees.columns(c)
      if (cols.size == 1) Some(cols.head -> c) else None
    }.groupBy(_._1).map { case (col, cs) => col -> Predicate.and(cs.map(_._2)) }

  def run(block: BlockMetaData, rowGroup: RowGroupPlan, filters: Map[Int, Predicate]): Outcome = {
    val rowCount = rowGroup.rowCount
    val initial = rowGroup.selection.getOrElse(RowSelection.all(rowCount))
    var selection = initial
    metrics.rowsScanned += selection.selectedCount
    val order = rule.order(filters.keys.toSeq, c => costPerRow(block, c))
    var opened = Map.empty[Int, PageSource]
    var cached = Map.empty[Int, PredicateCache.Column]
    val it = order.iterator
    while (it.hasNext && selection.selectedCount > 0) {
      val col = it.next()
      val name = settings.columns.name(col)
      val dataType = settings.columns.dataType(col)
      val filter = new VectorFilter(filters(col), lmspark.predicate.ColumnRef(col, name, dataType))
      val before = selection.selectedCount
      selection = plan.columns(col) match {
        case ColumnPlan.Missing =>
          if (filter.nullPasses) selection else RowSelection.none(rowCount)
        case _: ColumnPlan.Nested | ColumnPlan.RowIndex | ColumnPlan.RowMark =>
          throw new IllegalStateException(s"internal error: a filter on nested or generated column $name")
        case ColumnPlan.Present(descriptor, sparkType, options) =>
          // A selection the policy walks as a mask (by default: a scattered one, of short runs) is
          // not walked run by run: the column is decoded on every row of the row group's initial
          // selection, and rows already dropped simply fail.
          val scattered = (selection ne initial) && settings.policy.resolve(selection) == SelectionStrategy.Mask
          val walk = if (scattered) initial else selection
          val fetch = rowGroup.fetches(col).map(f => ColumnFetch(f.locations, ScanRanges.selectedPages(walk, f.locations)))
          val pages = sources.open(block, rowGroup, col, descriptor, fetch)
          // A struct field's chunk is read again for its struct's output: decompress its pages once.
          if (plan.nestedLeaves.contains(col)) pages.keepDecompressed(PageSource.ReopenedPageBytes)
          opened += col -> pages
          val reader = ColumnReaderFactory.create(descriptor, sparkType, pages, rowCount,
            options.copy(preserveDictionary = settings.dictionaryPredicates || settings.preserveDictionary),
            rowGroup.dictionaries.get(col).map(_.dictionary))
          val column = cache.column(col, dataType)
          try {
            val next = narrow(walk, if (scattered) selection.toMask.toWords else null, reader, filter, column)
            if (column.complete) cached += col -> column
            next
          } finally reader.close()
      }
      val after = selection.selectedCount
      rule.record(col, before, after)
      metrics.rowsPassing.get(name).foreach(_ += after)
    }
    opened.values.foreach { s =>
      metrics.predicatePagesDecoded += s.dataPagesRead
      metrics.bytesRead += s.bytesRead
      metrics.bytesDecompressed += s.bytesDecompressed
    }
    Outcome(selection, cached, opened)
  }

  /** Decoded bytes per row of the column's chunk: its cost in the ordering. */
  private def costPerRow(block: BlockMetaData, col: Int): Double = plan.columns(col) match {
    case ColumnPlan.Present(descriptor, _, _) =>
      FileReadPlan.chunkOf(block, descriptor).getTotalUncompressedSize.toDouble / math.max(1L, block.getRowCount)
    case _ => 0.0
  }

  /** The rows of `selection` where `filter` is TRUE and, when `alive` (mask words over the row
    * group) is given, whose bit in `alive` is set; decodes the column with `reader` on every row of
    * `selection`. */
  private def narrow(selection: RowSelection, aliveWords: Array[Long], reader: ColumnReader, filter: VectorFilter,
      column: PredicateCache.Column): RowSelection = {
    val capacity = settings.batchSize
    val selected = selection.selectedCount
    // Over every row of the row group, mask bit k is row k: `alive` is ANDed in word by word at the
    // end instead of row by row.
    val everyRow = selected == selection.rowCount
    val alive = if (everyRow) null else aliveWords
    val mask = new Array[Long](((selected + 63) >>> 6).toInt)
    val rows = new Array[Int](capacity)
    val ids = new Array[Byte](capacity)
    val positions = new Array[Int](capacity)
    var dictionary: SparkDictionary = null
    var passing: Array[Byte] = null
    var k = 0L // selected rows evaluated so far
    val cursor = new SelectionCursor(selection, SelectionStrategy.Selectors, capacity)
    // One vector decodes the batches: the cache copies out the rows it keeps, or keeps the vector
    // whole (and a fresh one decodes the next batch).
    var v = column.pool.take()
    while (cursor.nextBatch()) {
      val t0 = System.nanoTime()
      v.reset()
      if (v.hasDictionary) v.setDictionary(null)
      var out = 0
      // Row numbers are read by the alive test and by the cache (only while the column is complete).
      // While the batch's rows are consecutive, the cache is given the first (`base`) instead.
      val needRows = alive != null || column.complete
      var base = -1
      var step = cursor.next()
      while (step != SelectionCursor.End) {
        if (step == SelectionCursor.Read) {
          val n = cursor.stepRows.toInt
          reader.read(n, v, out)
          if (needRows) {
            val start = cursor.stepStart.toInt
            if (out == 0 && alive == null) base = start
            else if (base >= 0 && base + out != start) { fillRows(rows, 0, out, base); base = -1 }
            if (base < 0) fillRows(rows, out, n, start)
          }
          out += n
        } else reader.skip(cursor.stepRows)
        step = cursor.next()
      }
      val t1 = System.nanoTime()
      metrics.valuesDecoded += out
      // Mask bit k + i is set where the column's conjuncts are TRUE on batch row i (and, when
      // `alive` is given, row i is still selected).
      val byIds = v.hasDictionary && settings.dictionaryPredicates
      if (byIds) {
        val d = reader.vectorDictionary
        if (!(d eq dictionary)) {
          dictionary = d
          passing = filter.evaluateDictionary(entries(d, v), d.size)
        }
      }
      if (alive == null) {
        if (byIds) MaskFold.ids(v, v.getDictionaryIds, passing, filter.nullPasses, out, mask, k)
        else MaskFold.bytes(filter.evaluate(v, out), out, mask, k)
      } else {
        val pass = if (byIds) { filter.evaluateIds(v, v.getDictionaryIds, passing, out, ids); ids }
          else filter.evaluate(v, out)
        MaskFold.alive(pass, rows, alive, out, mask, k)
      }
      val m = Bits.count(mask, k, k + out).toInt
      // The cache copies passing rows out only when few passed: list their positions then.
      if (cache.copies(column, m, out)) Bits.listSet(mask, k, k + out, out, positions, k)
      k += out
      if (cache.keep(column, v, if (v.hasDictionary) reader.vectorDictionary else null, rows, base, out, positions, m))
        v = column.pool.take() // the cache kept the decoded vector itself
      val t2 = System.nanoTime()
      metrics.decodeTimeNs += t1 - t0
      metrics.predicateTimeNs += t2 - t1
    }
    column.pool.give(v)
    if (k != selected) throw new IllegalStateException(s"internal error: evaluated $k of $selected selected rows")
    if (everyRow && aliveWords != null) {
      var w = 0
      while (w < mask.length) { mask(w) &= aliveWords(w); w += 1 }
    }
    val passed = RowSelection.fromMask(mask, selected)
    // Over every row of the row group the mask is the selection itself (kept as a mask).
    if (selected == selection.rowCount) passed else selection.andThen(passed)
  }

  /** `rows[at, at + n)` = `first, first + 1, ...`. */
  private def fillRows(rows: Array[Int], at: Int, n: Int, first: Int): Unit = {
    var r = 0
    while (r < n) { rows(at + r) = first + r; r += 1 }
  }

  /** One vector per type, reused for every dictionary the pass evaluates (building a column vector
    * is not cheap: each construction reads the session conf). */
  private[this] val entryVectors = mutable.HashMap.empty[DataType, WritableColumnVector]

  /** The dictionary's entries as a vector of the column's type (lazily decoded by its getters):
    * row `i` is entry `i`. Valid until the next call for the same type. */
  private def entries(d: SparkDictionary, like: WritableColumnVector): WritableColumnVector = {
    val n = math.max(d.size, 1)
    val v = entryVectors.getOrElseUpdate(like.dataType(), new OnHeapColumnVector(n, like.dataType()))
    v.setDictionary(null)
    v.reset()
    v.reserve(n)
    val ids = v.reserveDictionaryIds(n)
    var i = 0
    while (i < d.size) { ids.putInt(i, i); i += 1 }
    v.setDictionary(d)
    v
  }
}

object FilterFirstPass {

  /** What the pass leaves for the output: the narrowed selection, the cached columns (complete ones),
    * and the page source each filtered column was read from (by requested-column index). */
  final case class Outcome(selection: RowSelection, cached: Map[Int, PredicateCache.Column], sources: Map[Int, PageSource])
}
