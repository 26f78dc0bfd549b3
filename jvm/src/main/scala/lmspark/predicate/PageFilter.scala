package lmspark.predicate

import scala.collection.mutable

import lmspark.predicate.Predicate._
import lmspark.selection.RowRanges

/** One column's page index over a row group, converted and checked: page `i` covers rows
  * `[firstRow(i), endRow(i))` and `stats(i)` holds for them. */
final case class ColumnPages(firstRow: Array[Long], endRow: Array[Long], stats: IndexedSeq[ColumnStats])

object ColumnPages {
  /** About the bytes `p` takes on the heap (what a cache charges for keeping it): its row arrays,
    * and per page its statistics with their boxed bounds. */
  def heapBytes(p: ColumnPages): Long = {
    def bound(v: Option[Any]): Long = v match {
      case Some(u: org.apache.spark.unsafe.types.UTF8String) => 64L + u.numBytes
      case Some(b: Array[Byte]) => 32L + b.length
      case Some(_: org.apache.spark.sql.types.Decimal) => 96L
      case Some(_) => 32L
      case None => 0L
    }
    64L + 16L * p.firstRow.length + p.stats.iterator.map(s => 96L + bound(s.min) + bound(s.max)).sum
  }
}

/** Page-index filtering: the rows of a row group that may pass a predicate, from the page
  * statistics of the columns it reads (a leaf keeps the pages not proven never TRUE; AND
  * intersects, OR unions; a column without a page index keeps every row).
  *
  * The predicate is first put in negation normal form (so NOT only sits on leaves, and a negated
  * leaf is judged by whether the leaf can be FALSE); a page is judged with the same three-valued
  * evaluation as [[Guarantees.simplify]] ([[StatsEval]]). Sound: every row that passes is kept. */
object PageFilter {
  def candidateRows(p: Predicate, rowCount: Long, pages: Int => Option[ColumnPages]): RowRanges = {
    val allRows = RowRanges.single(0, rowCount)
    val pageCache = mutable.HashMap.empty[Int, Option[ColumnPages]]
    def pagesOf(c: Int) = pageCache.getOrElseUpdate(c, pages(c))

    def leafRows(l: Leaf, negated: Boolean): RowRanges = pagesOf(l.term.column.index) match {
      case None => allRows
      case Some(cp) =>
        val cast = Values.termCaster(l.term)
        val starts = mutable.ArrayBuilder.make[Long]
        val ends = mutable.ArrayBuilder.make[Long]
        var i = 0
        while (i < cp.stats.size) {
          val o = StatsEval.outcomes(l, StatsEval.domain(l.term, Some(cp.stats(i)), cast))
          val may = if (negated) Kleene.negate(o) else o
          if ((may & Kleene.T) != 0) { starts += cp.firstRow(i); ends += cp.endRow(i) }
          i += 1
        }
        intersect(RowRanges.of(starts.result(), ends.result()), allRows)
    }

    def go(q: Predicate): RowRanges = q match {
      case True => allRows
      case False => RowRanges.empty
      case l: Leaf => leafRows(l, negated = false)
      case Not(l: Leaf) => leafRows(l, negated = true)
      case And(cs) => cs.iterator.map(go).foldLeft(allRows)((a, b) => if (a.isEmpty) a else intersect(a, b))
      case Or(cs) => union(cs.map(go))
      case Not(other) => throw new IllegalStateException(s"not in negation normal form: NOT ($other)")
    }
    go(Predicate.negationNormalForm(p))
  }

  /** The rows in both `a` and `b`. */
  def intersect(a: RowRanges, b: RowRanges): RowRanges = {
    val starts = mutable.ArrayBuilder.make[Long]
    val ends = mutable.ArrayBuilder.make[Long]
    var i = 0
    var j = 0
    while (i < a.size && j < b.size) {
      val s = math.max(a.start(i), b.start(j))
      val e = math.min(a.end(i), b.end(j))
      if (s < e) { starts += s; ends += e }
      if (a.end(i) < b.end(j)) i += 1 else j += 1
    }
    RowRanges.of(starts.result(), ends.result())
  }

  /** The rows in any of `rs`. */
  def union(rs: Seq[RowRanges]): RowRanges = {
    val starts = mutable.ArrayBuilder.make[Long]
    val ends = mutable.ArrayBuilder.make[Long]
    rs.foreach(r => (0 until r.size).foreach { i => starts += r.start(i); ends += r.end(i) })
    RowRanges.of(starts.result(), ends.result())
  }
}
