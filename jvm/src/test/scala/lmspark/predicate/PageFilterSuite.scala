package lmspark.predicate

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import lmspark.predicate.PredicateGen._
import lmspark.predicate.Predicate._
import lmspark.selection.RowRanges

/** [[PageFilter.candidateRows]] against Catalyst on every row: random row groups cut into pages
  * at different boundaries per column (some columns without a page index), page statistics in
  * every style. */
class PageFilterSuite extends AnyFunSuite with PropertyCases {

  private def pick[T](r: Random, xs: Seq[T]): T = xs(r.nextInt(xs.size))

  private def contains(rr: RowRanges, row: Long): Boolean = (0 until rr.size).exists(i => rr.start(i) <= row && row < rr.end(i))

  /** Random page boundaries over `n` rows and the pages' statistics. */
  private def pagesOf(dt: org.apache.spark.sql.types.DataType, values: Array[Any], r: Random,
      style: => StatsStyle): ColumnPages = {
    val n = values.length
    val firsts = scala.collection.mutable.ArrayBuffer.empty[Long]
    var at = 0
    while (at < n) { firsts += at; at += 1 + r.nextInt(pick(r, Seq(1, 4, 12))) }
    if (n == 0) firsts += 0
    val ends = firsts.drop(1) :+ n.toLong
    val st = firsts.indices.map(i => stats(dt, values.slice(firsts(i).toInt, ends(i).toInt).toSeq, style, r))
    ColumnPages(firsts.toArray, ends.toArray, st)
  }

  test("candidate rows contain every passing row") {
    var kept = 0L
    var total = 0L
    cases("pages", 4000) { r =>
      val s = schema(r)
      val p = predicate(s, r)
      val n = pick(r, Seq(0, 1, 7, 30, 80))
      val g = data(s, n, r)
      val pages = s.columns.map(c => if (r.nextInt(5) == 0) None else Some(pagesOf(c.dataType, g(c.index), r, styleFor(r))))
      val rr = PageFilter.candidateRows(p, n.toLong, pages)
      assert(rr.isEmpty || (rr.start(0) >= 0 && rr.end(rr.size - 1) <= n), rr)
      val expr = toCatalyst(p)
      for (i <- 0 until n) {
        if (catalyst(expr, PredicateGen.row(g, i)) == Kleene.T)
          assert(contains(rr, i.toLong), s"row $i passes $p but candidates are $rr; pages $pages")
      }
      kept += rr.rows
      total += n
    }
    info(s"$kept of $total rows kept")
    assert(kept < total)
  }

  test("a range comparison or null test keeps exactly the pages holding a passing row (exact statistics)") {
    cases("pages-exact", 3000) { r =>
      val s = schema(r, maxColumns = 1)
      val col = s.columns.head
      val t = term(col, r)
      val base: Leaf = r.nextInt(6) match {
        case 4 => IsNull(t)
        case 5 => IsNotNull(t)
        case k => Compare(t, Seq(CompareOp.Lt, CompareOp.Le, CompareOp.Gt, CompareOp.Ge)(k), literal(t, s.pools(0), r))
      }
      val p = if (r.nextBoolean()) Not(base) else base
      val n = pick(r, Seq(1, 7, 30, 80))
      val g = data(s, n, r)
      val cp = pagesOf(col.dataType, g(0), r, StatsStyle.Exact)
      val allNaNPage = cp.firstRow.indices.exists { i =>
        val vs = g(0).slice(cp.firstRow(i).toInt, cp.endRow(i).toInt)
        vs.exists(_ != null) && vs.forall(v => v == null || Values.isNaN(v))
      }
      if (!allNaNPage) {
        val expr = toCatalyst(p)
        val passing = (0 until n).filter(i => catalyst(expr, PredicateGen.row(g, i)) == Kleene.T)
        val pagesWithPassing = cp.firstRow.indices.filter(i => passing.exists(x => cp.firstRow(i) <= x && x < cp.endRow(i)))
        val expected = RowRanges.of(pagesWithPassing.map(cp.firstRow).toArray, pagesWithPassing.map(cp.endRow).toArray)
        val got = PageFilter.candidateRows(p, n.toLong, _ => Some(cp))
        assert(got.toString == expected.toString, s"$p over ${g(0).map(String.valueOf).mkString(", ")}")
      }
    }
  }

  test("intersect and union of row ranges against sets of rows") {
    cases("ranges", 3000) { r =>
      def ranges(): RowRanges = {
        val k = r.nextInt(5)
        val s = Array.fill(k)(r.nextInt(40).toLong)
        RowRanges.of(s, s.map(_ + r.nextInt(10)))
      }
      def rows(rr: RowRanges): Set[Long] = (0 until rr.size).flatMap(i => rr.start(i) until rr.end(i)).toSet
      val a = ranges()
      val b = ranges()
      val c = ranges()
      assert(rows(PageFilter.intersect(a, b)) == (rows(a) intersect rows(b)), s"$a & $b")
      assert(rows(PageFilter.union(Seq(a, b, c))) == (rows(a) ++ rows(b) ++ rows(c)), s"$a | $b | $c")
    }
  }
}
