package lmspark.scan

import org.apache.parquet.hadoop.metadata.BlockMetaData
import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import lmspark.column.{ColumnReader, ColumnReaderFactory}
import lmspark.io.PageSource
import lmspark.meta.OpenFile
import lmspark.plan.ScanMetrics
import lmspark.predicate.{Evaluator, Guarantees, Kleene, Predicate}
import lmspark.selection.{RowSelection, SelectionCursor, SelectionStrategy}

/** Narrows a row group's page-index selection to the rows that pass its residual predicate, by
  * decoding only the predicate columns, only on the selected rows, and evaluating the predicate
  * row by row (Spark's three-valued semantics, [[Evaluator]]). The other columns' pages are then
  * chosen from the exact selection, so a page is fetched only when it holds a passing row.
  *
  * Invariants: the result selects a subset of `selection`'s rows, and exactly the rows of that set
  * where the residual is TRUE. The predicate columns' fetched pages are handed back, so the output
  * walk reopens them instead of reading the file again; their values are decoded again (a predicate
  * cache would keep them). */
final class SelectionRefiner(file: OpenFile, plan: FileReadPlan, settings: ScanSettings, metrics: ScanMetrics) {

  /** `rowGroup`'s selection narrowed by its residual, and the page source of each present predicate
    * column by requested-column index (counts the pages and bytes it reads). */
  def refine(block: BlockMetaData, rowGroup: RowGroupPlan): (RowSelection, Map[Int, PageSource]) = {
    val selection = rowGroup.selection.get
    val rowCount = rowGroup.rowCount
    val columns = Guarantees.columns(rowGroup.residual).toArray.sorted
    val capacity = settings.batchSize
    val vectors = new Array[WritableColumnVector](columns.length)
    val readers = new Array[ColumnReader](columns.length)
    val sources = new Array[PageSource](columns.length)
    try {
      var k = 0
      while (k < columns.length) {
        val col = columns(k)
        val dt = settings.requiredSchema(col).dataType
        vectors(k) = new OnHeapColumnVector(capacity, dt)
        plan.columns(col) match {
          case ColumnPlan.Present(descriptor, sparkType, options) =>
            val chunk = FileReadPlan.chunkOf(block, descriptor)
            val pages = rowGroup.fetches(col) match {
              case Some(f) if f.pruned > 0 =>
                PageSource.forPages(file.stream, chunk, descriptor, file.path.toString, settings.verifyChecksums,
                  f.locations, f.kept, settings.maxCoalesceGap)
              case _ => PageSource.forChunk(file.stream, chunk, descriptor, file.path.toString, settings.verifyChecksums)
            }
            sources(k) = pages
            readers(k) = ColumnReaderFactory.create(descriptor, sparkType, pages, rowCount,
              options.copy(preserveDictionary = false))
          case ColumnPlan.Missing =>
            vectors(k).putNulls(0, capacity)
        }
        k += 1
      }
      val ordinal = new Array[Int](settings.requiredSchema.length)
      java.util.Arrays.fill(ordinal, -1)
      columns.indices.foreach(i => ordinal(columns(i)) = i)
      val batch = new ColumnarBatch(vectors.map(v => v: ColumnVector))
      val types = columns.map(c => settings.requiredSchema(c).dataType)
      val eval = Evaluator.compile(rowGroup.residual)
      // One accessor for all rows (no closure per row): column index -> value of the current row.
      var current: org.apache.spark.sql.catalyst.InternalRow = null
      val valueOf: Int => Any = { c =>
        val o = ordinal(c)
        if (current.isNullAt(o)) null else current.get(o, types(o))
      }
      val words = new Array[Long](((rowCount + 63) >>> 6).toInt)
      val rowOf = new Array[Long](capacity) // row-group row of each batch row
      val cursor = new SelectionCursor(selection, SelectionStrategy.Selectors, capacity)
      while (cursor.nextBatch()) {
        var out = 0
        var step = cursor.next()
        while (step != SelectionCursor.End) {
          var j = 0
          if (step == SelectionCursor.Read) {
            val n = cursor.stepRows.toInt
            while (j < readers.length) {
              if (readers(j) != null) {
                if (out == 0) vectors(j).reset()
                readers(j).read(n, vectors(j), out)
              }
              j += 1
            }
            var r = 0
            while (r < n) { rowOf(out + r) = cursor.stepStart + r; r += 1 }
            out += n
          } else {
            while (j < readers.length) { if (readers(j) != null) readers(j).skip(cursor.stepRows); j += 1 }
          }
          step = cursor.next()
        }
        var i = 0
        while (i < out) {
          current = batch.getRow(i)
          if (eval(valueOf) == Kleene.T) {
            val at = rowOf(i)
            words((at >>> 6).toInt) |= 1L << (at & 63)
          }
          i += 1
        }
      }
      sources.foreach { s =>
        if (s != null) { metrics.predicatePagesDecoded += s.dataPagesRead; metrics.bytesRead += s.bytesRead }
      }
      val fetched = columns.indices.collect { case k if sources(k) != null => columns(k) -> sources(k) }.toMap
      (RowSelection.fromMask(words, rowCount), fetched)
    } finally {
      readers.foreach(r => if (r != null) r.close())
      vectors.foreach(v => if (v != null) v.close())
    }
  }
}
