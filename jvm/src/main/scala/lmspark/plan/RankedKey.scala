package lmspark.plan

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.PartitionedFile

import lmspark.predicate.{ColumnRef, ColumnStats, CompareOp, Predicate, Term, Values}
import lmspark.scan.SplitSlices

/**
 * A top-k's first sort key when it is a column its first pass reads ([[TopKRead]]): `column` is its
 * index (and type) in the pass's schema, `light` its index in the light rows, `descending` and
 * `nullsFirst` its order; `slicer` gives a task's split as row groups with that column's statistics.
 *
 * Invariant: [[notAfter]] holds for every row that sorts at or before a row whose first key is
 * `cut`, and [[before]] for every row whose first key sorts strictly before it, in Spark's
 * ordering for the column (NaN greatest, NULLs first or last as ordered): so a row group where
 * statistics prove either false holds no such row.
 */
final case class RankedKey(slicer: PartitionedFile => Option[SplitSlices], column: ColumnRef, light: Int,
    descending: Boolean, nullsFirst: Boolean) {
  require(Values.supported(column.dataType), s"no statistics order for ${column.dataType}")

  private def term = Term(column)

  /** The first key of a light row (NULL as null). */
  def valueOf(row: InternalRow): Any = if (row.isNullAt(light)) null else row.get(light, column.dataType)

  /** Rows whose first key sorts at or before `cut` (null: NULL): they may be kept (a later key may
    * decide). */
  def notAfter(cut: Any): Predicate =
    if (cut == null) { if (nullsFirst) Predicate.IsNull(term) else Predicate.True }
    else withNulls(Predicate.Compare(term, if (descending) CompareOp.Ge else CompareOp.Le, cut))

  /** Rows whose first key sorts strictly before `cut` (null: NULL). */
  def before(cut: Any): Predicate =
    if (cut == null) { if (nullsFirst) Predicate.False else Predicate.IsNotNull(term) }
    else withNulls(Predicate.Compare(term, if (descending) CompareOp.Gt else CompareOp.Lt, cut))

  private def withNulls(p: Predicate): Predicate = if (nullsFirst) Predicate.or(Seq(p, Predicate.IsNull(term))) else p

  /** A value that rows of a row group sort at or before, by its statistics `s` (its worst bound), with
    * how many: all its rows, or those not NULL when NULLs sort last; none while NaN sorting greatest
    * may be there. */
  def worst(s: ColumnStats): Option[(Long, Any)] = {
    val rows = if (nullsFirst) Some(s.rowCount) else s.nullCount.map(s.rowCount - _)
    val bound = if (descending) s.min else if (s.mayHaveNaN) None else s.max
    for (n <- rows; b <- bound) yield (n, b)
  }

  /** The one of two first keys (not NULL) that sorts later. */
  def worse(a: Any, b: Any): Any = if ((Values.ordering(column.dataType).compare(a, b) < 0) == descending) a else b

  /** Row-group indexes in the order their statistics promise the best rows: those that may hold a
    * NULL sorting first, or whose bound is unknown, then by their best bound, then those holding
    * only NULLs sorting last; ties in file order. */
  def bestFirst(stats: Seq[Option[ColumnStats]]): Seq[Int] = {
    val ordering = Values.ordering(column.dataType)
    def rank(i: Int): (Int, Option[Any]) = stats(i) match {
      case Some(s) if s.nullCount.contains(s.rowCount) => if (nullsFirst) (0, None) else (2, None)
      case Some(s) if nullsFirst && !s.nullCount.contains(0L) => (0, None)
      case Some(s) => (if (descending) s.max else s.min).fold((0, Option.empty[Any]))(b => (1, Some(b)))
      case None => (0, None)
    }
    val ranks = stats.indices.map(rank)
    stats.indices.sortWith { (a, b) =>
      val (ra, ba) = ranks(a)
      val (rb, bb) = ranks(b)
      if (ra != rb) ra < rb
      else if (ra == 1) { val c = ordering.compare(ba.get, bb.get); if (descending) c > 0 else c < 0 }
      else false
    }
  }
}
