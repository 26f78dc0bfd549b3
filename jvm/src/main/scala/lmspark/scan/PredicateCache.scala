package lmspark.scan

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.execution.vectorized.{Dictionary => SparkVectorDictionary, WritableColumnVector}
import org.apache.spark.sql.types.{BinaryType, DataType, StringType}

import lmspark.column.VectorCopier
import lmspark.plan.ScanMetrics
import lmspark.scan.PredicateCache.{Batch, Column}

/** One task's decoded filter-column values for the current row group, so that the output reuses
  * them instead of decoding those columns again ("a column both filtered and projected is decoded
  * once").
  *
  * The filter-first pass decodes a filter column batch by batch into a vector it takes from here
  * (`vector`), evaluates the column's conjuncts, and hands over the rows that passed (`keep`). When
  * few passed, their values are copied, compacted, into the column's own batches (dictionary ids
  * plus the dictionary when the decoded batch was dictionary-encoded, values otherwise), so the
  * cache holds passing rows only and one decode vector serves the whole column; when at least half
  * passed, the decoded vector itself is kept (a copy would cost more than the failing rows take). Kept rows stay until the row group ends
  * (`clear`); the output then copies the rows it emits out of them (`Column.copyTo`), in row order.
  * All columns share one bound of `maxBytes`: rows that would pass it evict their whole column (its
  * batches are released, later rows are refused and the column is decoded again for the output),
  * counted in `predicateCacheEvictions`. Vectors come from, and go back to, each column's
  * [[VectorPool.Pool]].
  *
  * Invariants: a column's kept rows are strictly increasing across its batches; every row the output
  * asks a complete column for was kept (the output emits a subset of the rows that passed every
  * filter column); `bytes` is the sum of the columns' kept bytes; vectors handed out are either
  * kept, or given back to their column's pool by the taker, `clear` or `close`. */
final class PredicateCache(maxBytes: Long, val capacity: Int, preserveDictionary: Boolean, metrics: ScanMetrics)
    extends AutoCloseable {

  private[this] val columns = ArrayBuffer.empty[Column]
  private[this] var bytes = 0L

  /** Starts caching column `index`. */
  def column(index: Int, dataType: DataType): Column = {
    val c = new Column(index, dataType, VectorPool.of(dataType, capacity), metrics, preserveDictionary)
    if (maxBytes <= 0) c.evicted = true
    columns += c
    c
  }

  /** Whether `keep(c, ...)` of `m` of `n` decoded rows would copy rows out (and so reads `positions`). */
  def copies(c: Column, m: Int, n: Int): Boolean = !c.evicted && m > 0 && c.complete && 2L * m < n

  /** Keeps, for `c`, rows `positions[0, m)` of the `n` decoded rows of `v` (increasing positions;
    * `rows(p)` is the row-group row of position `p`, or `rowBase + p` when `rowBase >= 0` (consecutive
    * rows, `rows` not read), and rows increase across calls), unless `c` is
    * evicted or the bound is passed, which evicts `c`. `dictionary` is `v`'s when it holds ids.
    *
    * When at least half the decoded rows are kept, `v` itself is kept whole (copying the rows out
    * would cost more than the rows that failed take) and `true` is returned: the caller no longer
    * owns `v`. Otherwise the kept rows are copied, compacted, into the column's batches, and the
    * caller keeps `v`. `positions` is read only when `copies(c, m, n)`. */
  def keep(c: Column, v: WritableColumnVector, dictionary: SparkVectorDictionary, rows: Array[Int], rowBase: Int,
      n: Int, positions: Array[Int], m: Int): Boolean = {
    if (c.evicted || m == 0 || !c.complete) return false
    val d = if (v.hasDictionary) dictionary else null
    val whole = 2L * m >= n
    val size = if (whole) estimate(v, d != null, null, n, c.dataType) else estimate(v, d != null, positions, m, c.dataType)
    if (bytes + size > maxBytes) { evict(c); return false }
    bytes += size
    c.bytes += size
    c.encoded(d)
    if (whole) {
      val kept = new Array[Int](n)
      if (rowBase < 0) System.arraycopy(rows, 0, kept, 0, n)
      else { var i = 0; while (i < n) { kept(i) = rowBase + i; i += 1 } }
      c.batches += Batch.whole(v, kept, d)
      true
    } else {
      var i = 0
      while (i < m) {
        val b = c.openBatch(d, this)
        val take = math.min(m - i, b.rows.length - b.n)
        b.append(v, rows, rowBase, positions, i, take, c.copier)
        i += take
      }
      false
    }
  }

  private def evict(c: Column): Unit = {
    c.evicted = true
    c.batches.foreach(b => c.pool.give(b.vector))
    c.batches.clear()
    bytes -= c.bytes
    c.bytes = 0
    metrics.cacheEvictions += 1
  }

  /** Bytes the kept rows take, roughly: ids when `ids`, values otherwise (the bytes of each string),
    * plus the positions. The rows are `positions[0, m)`, or `[0, m)` when `positions` is null. */
  private def estimate(v: WritableColumnVector, ids: Boolean, positions: Array[Int], m: Int, dt: DataType): Long = {
    val values =
      if (ids) 4L * m
      else dt match {
        case _: StringType | BinaryType =>
          var s = 0L
          var i = 0
          while (i < m) {
            val p = if (positions == null) i else positions(i)
            if (!v.isNullAt(p)) s += v.getArrayLength(p)
            i += 1
          }
          s + 8L * m
        case _ => dt.defaultSize.toLong * m
      }
    values + 4L * m
  }

  /** Ends the row group: every kept vector goes back to the pool. */
  def clear(): Unit = {
    columns.foreach { c => c.batches.foreach(b => c.pool.give(b.vector)); c.batches.clear() }
    columns.clear()
    bytes = 0
  }

  override def close(): Unit = clear()
}

object PredicateCache {

  /** Kept rows of one column: rows `[0, n)` of `vector` are row-group rows `rows[0, n)`
    * (increasing); they are dictionary ids of `dictionary` when it is not null, values otherwise. A
    * batch is full when `n == rows.length`; a decoded vector kept whole is full from the start. */
  final class Batch(val vector: WritableColumnVector, val rows: Array[Int], val dictionary: SparkVectorDictionary) {
    var n = 0
    private[this] val ids = if (dictionary == null) null else vector.getDictionaryIds

    /** Appends rows `positions[from, from + k)` of `src` (ids of `dictionary` when it is set); their
      * row-group rows are `srcRows(p)`, or `rowBase + p` when `rowBase >= 0`. */
    private[PredicateCache] def append(src: WritableColumnVector, srcRows: Array[Int], rowBase: Int,
        positions: Array[Int], from: Int, k: Int, copier: VectorCopier): Unit = {
      var j = 0
      if (ids != null) {
        val srcIds = src.getDictionaryIds
        while (j < k) {
          val p = positions(from + j)
          if (src.isNullAt(p)) vector.putNull(n + j) else ids.putInt(n + j, srcIds.getInt(p))
          rows(n + j) = if (rowBase >= 0) rowBase + p else srcRows(p)
          j += 1
        }
      } else {
        while (j < k) {
          val p = positions(from + j)
          copier.copy(src, p, vector, n + j)
          rows(n + j) = if (rowBase >= 0) rowBase + p else srcRows(p)
          j += 1
        }
      }
      n += k
    }
  }

  object Batch {
    /** Every row of a decoded vector: its rows are row-group rows `rows` (one per row of `v`). */
    def whole(v: WritableColumnVector, rows: Array[Int], dictionary: SparkVectorDictionary): Batch = {
      val b = new Batch(v, rows, dictionary)
      b.n = rows.length
      b
    }
  }

  /** One column's kept rows; `complete` until evicted. */
  final class Column private[PredicateCache] (val index: Int, val dataType: DataType,
      val pool: VectorPool.Pool, metrics: ScanMetrics, preserveDictionary: Boolean) {
    private[PredicateCache] val batches = ArrayBuffer.empty[Batch]
    private[PredicateCache] var evicted = false
    private[PredicateCache] var bytes = 0L
    private[PredicateCache] val copier = VectorCopier.forType(dataType).orNull
    private[this] var at = 0
    private[this] var pos = 0
    /** The dictionary of every kept row so far, while all are ids of the same one. */
    private[PredicateCache] var dictionary: SparkVectorDictionary = _
    private[PredicateCache] var mixed = false

    /** Notes how the next kept rows are encoded (`d`: their dictionary, or null for values). */
    private[PredicateCache] def encoded(d: SparkVectorDictionary): Unit =
      if (!mixed) {
        if (d == null || (batches.nonEmpty && !(d eq dictionary))) { mixed = true; dictionary = null }
        else dictionary = d
      }

    /** The batch to append rows encoded as `d` to: the last one if it has room and the same
      * encoding, else a new one. */
    private[PredicateCache] def openBatch(d: SparkVectorDictionary, cache: PredicateCache): Batch = {
      val last = if (batches.isEmpty) null else batches.last
      if (last != null && last.n < last.rows.length && (last.dictionary eq d)) last
      else {
        val v = pool.take()
        if (d != null) {
          v.reserveDictionaryIds(cache.capacity)
          v.setDictionary(d)
        }
        val b = new Batch(v, new Array[Int](cache.capacity), d)
        batches += b
        b
      }
    }

    def complete: Boolean = !evicted && copier != null

    /** Copies the kept values of row-group rows `rows[0, n)` (increasing, every one kept, each
      * after the rows of earlier calls) into rows `[0, n)` of `out`. */
    def copyTo(rows: Array[Int], n: Int, out: WritableColumnVector): Unit = {
      // Every kept row is an id of one dictionary: the output keeps them (dictionary-preserving).
      val ids =
        if (preserveDictionary && dictionary != null) {
          val v = out.reserveDictionaryIds(n)
          out.setDictionary(dictionary)
          v
        } else {
          if (out.hasDictionary) out.setDictionary(null)
          null
        }
      var i = 0
      while (i < n) {
        val r = rows(i)
        var b = batches(at)
        while (b.rows(b.n - 1) < r) { at += 1; pos = 0; b = batches(at) }
        // Kept rows and asked rows both increase: walk forward.
        val kept = b.rows
        while (kept(pos) < r) pos += 1
        if (kept(pos) != r) throw new IllegalStateException(s"internal error: row $r of column $index is not cached")
        if (ids != null) {
          if (b.vector.isNullAt(pos)) out.putNull(i) else ids.putInt(i, b.vector.getDictionaryIds.getInt(pos))
        } else copier.copy(b.vector, pos, out, i)
        i += 1
      }
      metrics.cacheHits += n
    }
  }
}
