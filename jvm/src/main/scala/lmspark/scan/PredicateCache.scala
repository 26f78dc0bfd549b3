package lmspark.scan

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.execution.vectorized.{Dictionary => SparkVectorDictionary, OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.types.{BinaryType, DataType, StringType}

import lmspark.column.VectorCopier
import lmspark.plan.ScanMetrics
import lmspark.scan.PredicateCache.{Batch, Column}

/** One task's decoded filter-column values for the current row group, so that the output reuses
  * them instead of decoding those columns again ("a column both filtered and projected is decoded
  * once").
  *
  * The filter-first pass decodes a filter column batch by batch into vectors it takes from here
  * (`vector`) and offers each batch (`offer`) with the row-group positions of its rows. Offered
  * batches are pinned until the row group ends (`clear`); the output then copies the rows it emits out
  * of them (`Column.copyTo`), in row order. All columns share one bound of `maxBytes`: a batch that
  * would pass it evicts its whole column (the batches kept so far are released, later offers are
  * refused and the column is decoded again for the output), counted in `predicateCacheEvictions`.
  *
  * Invariants: a column's positions are strictly increasing across its batches; `bytes` is the sum
  * of the estimates of the batches kept; vectors handed out are either kept, returned with
  * `release`, or closed by `close`. */
final class PredicateCache(maxBytes: Long, capacity: Int, preserveDictionary: Boolean, metrics: ScanMetrics)
    extends AutoCloseable {

  private[this] val columns = ArrayBuffer.empty[Column]
  private[this] val free = scala.collection.mutable.HashMap.empty[DataType, List[WritableColumnVector]]
  private[this] var bytes = 0L

  /** Starts caching column `index`. */
  def column(index: Int, dataType: DataType): Column = {
    val c = new Column(index, dataType, metrics, preserveDictionary)
    if (maxBytes <= 0) c.evicted = true
    columns += c
    c
  }

  /** A reset vector of `capacity` rows of `dt`, to decode a batch into. */
  def vector(dt: DataType): WritableColumnVector = free.get(dt) match {
    case Some(v :: rest) =>
      free(dt) = rest
      v.reset()
      if (v.hasDictionary) v.setDictionary(null)
      v
    case _ => new OnHeapColumnVector(capacity, dt)
  }

  /** Returns a vector that is not kept. */
  def release(dt: DataType, v: WritableColumnVector): Unit = free(dt) = v :: free.getOrElse(dt, Nil)

  /** Keeps rows `[0, n)` of `v` (row-group rows `rows[0, n)`, copied) for `c` if the bound allows;
    * otherwise evicts `c`. Returns whether `v` was kept (if not, it is released). */
  def offer(c: Column, v: WritableColumnVector, dictionary: SparkVectorDictionary, rows: Array[Int], n: Int): Boolean = {
    if (c.evicted || n == 0) { release(c.dataType, v); return false }
    c.encoded(if (v.hasDictionary) dictionary else null)
    val size = estimate(v, n, c.dataType)
    if (bytes + size > maxBytes) {
      evict(c)
      release(c.dataType, v)
      false
    } else {
      val contiguous = rows(n - 1) - rows(0) == n - 1
      c.batches += new Batch(v, if (contiguous) null else java.util.Arrays.copyOf(rows, n), rows(0), n, size)
      bytes += size
      true
    }
  }

  private def evict(c: Column): Unit = {
    c.evicted = true
    c.batches.foreach { b => bytes -= b.bytes; release(c.dataType, b.vector) }
    c.batches.clear()
    metrics.cacheEvictions += 1
  }

  /** Bytes the kept rows take, roughly: ids for dictionary-encoded batches, values otherwise (the
    * bytes of each string), plus the positions. */
  private def estimate(v: WritableColumnVector, n: Int, dt: DataType): Long = {
    val values =
      if (v.hasDictionary) 4L * n
      else dt match {
        case _: StringType | BinaryType =>
          var s = 0L
          var i = 0
          while (i < n) { if (!v.isNullAt(i)) s += v.getArrayLength(i); i += 1 }
          s + 8L * n
        case _ => dt.defaultSize.toLong * n
      }
    values + 4L * n
  }

  /** Ends the row group: every kept vector goes back to the pool. */
  def clear(): Unit = {
    columns.foreach { c => c.batches.foreach(b => release(c.dataType, b.vector)); c.batches.clear() }
    columns.clear()
    bytes = 0
  }

  override def close(): Unit = {
    clear()
    free.values.foreach(_.foreach(_.close()))
    free.clear()
  }
}

object PredicateCache {

  /** One decoded batch: rows `[0, n)` of `vector` are row-group rows `first until first + n` when
    * `rows` is null (a contiguous batch, the common case), else `rows[0, n)` (increasing). */
  final class Batch(val vector: WritableColumnVector, rows: Array[Int], val first: Int, val n: Int, val bytes: Long) {
    /** The batch holds `n` consecutive rows. */
    val contiguous: Boolean = rows == null
    /** The last row-group row the batch holds. */
    val last: Int = if (contiguous) first + n - 1 else rows(n - 1)

    /** The position of row-group row `r` in the batch, searching from position `from`; -1 if absent. */
    def positionOf(r: Int, from: Int): Int =
      if (contiguous) { if (r >= first && r <= last) r - first else -1 }
      else {
        val p = java.util.Arrays.binarySearch(rows, from, n, r)
        if (p < 0) -1 else p
      }
  }

  /** One column's cached batches; `complete` until evicted. */
  final class Column private[PredicateCache] (val index: Int, val dataType: DataType, metrics: ScanMetrics,
      preserveDictionary: Boolean) {
    private[PredicateCache] val batches = ArrayBuffer.empty[Batch]
    private[PredicateCache] var evicted = false
    private[this] val copier = VectorCopier.forType(dataType).orNull
    private[this] var at = 0
    private[this] var pos = 0
    /** The dictionary of every batch so far, while all are dictionary-encoded with the same one. */
    private[PredicateCache] var dictionary: SparkVectorDictionary = _
    private[PredicateCache] var mixed = false

    /** Notes how the next offered batch is encoded (`d`: its dictionary, or null for values). */
    private[PredicateCache] def encoded(d: SparkVectorDictionary): Unit =
      if (!mixed) {
        if (d == null || (batches.nonEmpty && !(d eq dictionary))) { mixed = true; dictionary = null }
        else dictionary = d
      }

    def complete: Boolean = !evicted && copier != null

    /** Copies the cached values of row-group rows `rows[0, n)` (increasing, every one cached, each
      * after the rows of earlier calls) into rows `[0, n)` of `out`. */
    def copyTo(rows: Array[Int], n: Int, out: WritableColumnVector): Unit = {
      // Every batch holds ids of one dictionary: the output keeps them (dictionary-preserving).
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
        while (b.last < r) { at += 1; pos = 0; b = batches(at) }
        // Positions of a batch are increasing: contiguous ones index directly, others by search.
        pos = b.positionOf(r, pos)
        if (pos < 0) throw new IllegalStateException(s"internal error: row $r of column $index is not cached")
        if (ids != null) {
          if (b.vector.isNullAt(pos)) out.putNull(i) else ids.putInt(i, b.vector.getDictionaryIds.getInt(pos))
        } else copier.copy(b.vector, pos, out, i)
        i += 1
      }
      metrics.cacheHits += n
    }
  }
}
