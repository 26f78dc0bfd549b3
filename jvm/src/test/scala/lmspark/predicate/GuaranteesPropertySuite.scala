package lmspark.predicate

import scala.util.Random

import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow}
import org.scalatest.funsuite.AnyFunSuite

import lmspark.predicate.PredicateGen._
import lmspark.predicate.Predicate._

/** [[Evaluator]], negation normal form, [[Guarantees.simplify]], [[Guarantees.canMatchValues]] and
  * [[Guarantees.withAbsentValues]] against Catalyst evaluating the same predicate on every row
  * (random schemas over all supported types, random data with NULLs / NaN / -0.0 / extremes, random
  * predicate trees with casts, statistics written every way metadata writes them). */
class GuaranteesPropertySuite extends AnyFunSuite with PropertyCases {
  import GuaranteesPropertySuite.Case

  private def passes(k: Int): Boolean = k == Kleene.T


  private def randomCase(r: Random): Case = {
    val s = schema(r)
    Case(s, predicate(s, r), IndexedSeq.fill(1 + r.nextInt(3))(data(s, pick(r, Seq(0, 1, 2, 5, 20, 40)), r)))
  }

  private def pick[T](r: Random, xs: Seq[T]): T = xs(r.nextInt(xs.size))

  private def rowCount(g: IndexedSeq[Array[Any]]): Int = if (g.isEmpty) 0 else g.head.length

  private def showRow(g: IndexedSeq[Array[Any]], i: Int): String =
    g.map(col => Option(col(i)).map {
      case b: Array[Byte] => b.mkString("[", ",", "]")
      case v => v.toString
    }.getOrElse("NULL")).mkString("(", ", ", ")")

  test("Evaluator agrees with Catalyst on every row; IN and INSET agree with each other") {
    cases("evaluator", 4000) { r =>
      val c = randomCase(r)
      val viaIn = toCatalyst(c.p)
      val compiled = Evaluator.compile(c.p)
      val inLeaves = Predicate.leaves(c.p).collect { case in: In =>
        (in, toCatalyst(in), toCatalyst(in, useInSet = true), termExpr(in.term)) }
      for (g <- c.groups; i <- 0 until rowCount(g)) {
        val row = PredicateGen.row(g, i)
        val expected = catalyst(viaIn, row)
        val got = compiled(j => g(j)(i))
        assert(got == expected, s"${c.p} on ${showRow(g, i)}: Catalyst ${Kleene.show(expected)}, ours ${Kleene.show(got)}")
        for ((in, a, b, t) <- inLeaves) {
          val x = catalyst(a, row)
          val y = catalyst(b, row)
          // Spark's interpreted InSet alone answers FALSE (not NULL) for a NaN missing from a list
          // with NULL; In and generated code answer NULL (see the next test). Nothing else differs.
          if (x != y) assert(x == Kleene.N && y == Kleene.F && in.hasNull && Values.isNaN(t.eval(row)),
            s"In ${Kleene.show(x)} vs InSet ${Kleene.show(y)} for $in on ${showRow(g, i)}")
        }
      }
    }
  }

  test("Spark's generated code gives NULL for a NaN missing from an IN / INSET list with NULL") {
    import org.apache.spark.sql.catalyst.expressions.{BoundReference => B, In => CIn, InSet => CInSet, Literal => L, UnsafeProjection}
    import org.apache.spark.sql.types.DoubleType
    val t = B(0, DoubleType, nullable = true)
    val exprs = Seq(CIn(t, Seq(L(0.0), L(null, DoubleType))), CInSet(t, Set[Any](0.0, null)))
    val projected = UnsafeProjection.create(exprs).apply(new GenericInternalRow(Array[Any](Double.NaN)))
    assert(projected.isNullAt(0) && projected.isNullAt(1))
    assert(Evaluator.eval(In(Term(ColumnRef(0, "d", DoubleType)), IndexedSeq(0.0), hasNull = true), _ => Double.NaN) == Kleene.N)
  }

  test("negation normal form and the folding constructors are exact in three-valued logic") {
    cases("nnf", 4000) { r =>
      val c = randomCase(r)
      val expr = toCatalyst(c.p)
      val nnf = Predicate.negationNormalForm(c.p)
      assertNnf(nnf)
      val nnfExpr = toCatalyst(nnf)
      for (g <- c.groups; i <- 0 until rowCount(g)) {
        val row = PredicateGen.row(g, i)
        assert(catalyst(nnfExpr, row) == catalyst(expr, row), s"${c.p} -> $nnf on ${showRow(g, i)}")
      }
    }
  }

  private def assertNnf(p: Predicate): Unit = p match {
    case Not(_: Compare | _: In | _: StartsWith | _: EndsWith | _: Contains) =>
    case Not(other) => fail(s"NOT above $other")
    case And(cs) => cs.foreach(assertNnf)
    case Or(cs) => cs.foreach(assertNnf)
    case _ =>
  }

  /** Statistics of one group: each column in a random style, or unknown. */
  private def groupStats(s: Schema, g: IndexedSeq[Array[Any]], r: Random): IndexedSeq[Option[ColumnStats]] =
    s.columns.map(col => if (r.nextInt(8) == 0) None else Some(stats(col.dataType, g(col.index).toSeq, styleFor(r), r)))

  test("simplify is sound: the simplified predicate passes exactly the rows the original passes") {
    var prunedGroups = 0
    var removedConjuncts = 0
    var groups = 0
    cases("simplify", 5000) { r =>
      val c = randomCase(r)
      val expr = toCatalyst(c.p)
      for (g <- c.groups) {
        groups += 1
        val st = groupStats(c.s, g, r)
        val simplified = Guarantees.simplify(c.p, st)
        val simplifiedExpr = toCatalyst(simplified.predicate)
        val ours = Evaluator.compile(simplified.predicate)
        if (simplified.predicate == False) prunedGroups += 1
        removedConjuncts += simplified.conjunctsRemoved
        def ctx = s"${c.p}\n  simplified: ${simplified.predicate}\n  stats: ${st.mkString("; ")}"
        for (i <- 0 until rowCount(g)) {
          val row = PredicateGen.row(g, i)
          val expected = passes(catalyst(expr, row))
          assert(passes(catalyst(simplifiedExpr, row)) == expected, s"Catalyst on ${showRow(g, i)}: $ctx")
          assert(passes(ours(j => g(j)(i))) == expected, s"ours on ${showRow(g, i)}: $ctx")
        }
        // Every removed conjunct is TRUE on every row.
        val alwaysTrue = Predicate.conjuncts(c.p).count { conj =>
          conj != True && {
            val e = toCatalyst(conj)
            (0 until rowCount(g)).forall(i => passes(catalyst(e, PredicateGen.row(g, i))))
          }
        }
        assert(simplified.conjunctsRemoved <= alwaysTrue, s"${simplified.conjunctsRemoved} removed: $ctx")
      }
    }
    info(s"$groups row groups: $prunedGroups pruned, $removedConjuncts conjuncts removed")
    assert(prunedGroups > 0 && removedConjuncts > 0)
  }

  test("simplify is exact for range comparisons and null tests under exact statistics") {
    var decided = 0
    cases("simplify-exact", 5000) { r =>
      val s = schema(r, maxColumns = 1)
      val col = s.columns.head
      val t = term(col, r)
      val base: Leaf = r.nextInt(6) match {
        case 4 => IsNull(t)
        case 5 => IsNotNull(t)
        case k => Compare(t, Seq(CompareOp.Lt, CompareOp.Le, CompareOp.Gt, CompareOp.Ge)(k % 4), literal(t, s.pools(0), r))
      }
      val p = if (r.nextBoolean()) Not(base) else base
      val g = data(s, pick(r, Seq(0, 1, 3, 10, 30)), r)
      val values = g(0).toSeq
      val allNaN = values.exists(_ != null) && values.forall(v => v == null || Values.isNaN(v))
      if (!allNaN) {
        val st = stats(col.dataType, values, StatsStyle.Exact, r)
        val got = Guarantees.simplify(p, _ => Some(st)).predicate
        val e = toCatalyst(p)
        val results = (0 until values.size).map(i => passes(catalyst(e, PredicateGen.row(g, i))))
        val expected = if (!results.contains(true)) False else if (!results.contains(false)) True else p
        if (expected != p) decided += 1
        assert(got == False == (expected == False) && got == True == (expected == True),
          s"$p over ${values.map(String.valueOf).mkString(", ")} ($st): got $got, expected $expected")
      }
    }
    info(s"$decided cases decided by statistics alone")
  }

  test("canMatchValues: false only when no row with those values passes; exact when only that column is read") {
    var falses = 0
    cases("dictionary", 5000) { r =>
      val c = randomCase(r)
      val col = pick(r, c.s.columns)
      val onlyCol = r.nextBoolean()
      val p = if (onlyCol) predicate(c.s.copy(columns = IndexedSeq(col)), r) else c.p
      val expr = toCatalyst(p)
      for (g <- c.groups) {
        val present = g(col.index).filter(_ != null).distinct.toIndexedSeq
        val extra = IndexedSeq.fill(r.nextInt(3))(PredicateGen.value(col.dataType, r))
        val dict = r.shuffle(present ++ extra)
        val hasNull = g(col.index).contains(null)
        val mayBeNull = hasNull || r.nextInt(4) == 0
        val can = Guarantees.canMatchValues(p, col.index, dict, mayBeNull)
        if (!can) {
          falses += 1
          for (i <- 0 until rowCount(g))
            assert(!passes(catalyst(expr, PredicateGen.row(g, i))), s"$p passes ${showRow(g, i)} but dictionary $dict pruned it")
        }
        if (onlyCol) {
          val candidates = dict ++ (if (mayBeNull) Seq(null) else Nil)
          val expected = candidates.exists { v =>
            val values = Array.fill[Any](c.s.columns.size)(null)
            values(col.index) = v
            passes(catalyst(expr, new GenericInternalRow(values)))
          }
          assert(can == expected, s"$p over $candidates: got $can")
        }
      }
    }
    info(s"$falses dictionaries pruned")
  }

  test("withAbsentValues keeps exactly the passing rows") {
    var changed = 0
    cases("absent", 5000) { r =>
      val c = randomCase(r)
      val col = pick(r, c.s.columns)
      val expr = toCatalyst(c.p)
      for (g <- c.groups) {
        val ord = Values.ordering(col.dataType)
        val present = g(col.index).filter(_ != null)
        // absent: truly absent values, sometimes not reported (a bloom filter only says "maybe").
        val absent = (v: Any) => !present.exists(ord.equiv(_, v)) && r.nextInt(4) > 0
        val q = Guarantees.withAbsentValues(c.p, col.index, absent)
        if (q != Guarantees.simplify(c.p, _ => None).predicate) changed += 1
        val qe = toCatalyst(q)
        for (i <- 0 until rowCount(g)) {
          val row = PredicateGen.row(g, i)
          assert(passes(catalyst(qe, row)) == passes(catalyst(expr, row)), s"${c.p} -> $q on ${showRow(g, i)}")
        }
      }
    }
    info(s"$changed predicates changed")
  }

  test("columns lists the columns read") {
    cases("columns", 1000) { r =>
      val c = randomCase(r)
      val expected = toCatalyst(c.p).collect { case b: BoundReference => b.ordinal }.toSet
      assert(Guarantees.columns(c.p) == expected, c.p)
    }
  }
}

object GuaranteesPropertySuite {
  /** Row groups of a random case: schema, a predicate, and the groups' column-major data. */
  final case class Case(s: Schema, p: Predicate, groups: IndexedSeq[IndexedSeq[Array[Any]]])
}
