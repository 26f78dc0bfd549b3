package lmspark.predicate

import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import lmspark.predicate.Predicate._

/** The pruning power the issue asks for, case by case: what statistics must prove (and what they
  * must not, with NULLs, NaN and inexact bounds). Soundness in general is the property suites' job. */
class GuaranteesEffectivenessSuite extends AnyFunSuite {

  private val i = Term(ColumnRef(0, "i", IntegerType))
  private val d = Term(ColumnRef(0, "d", DoubleType))
  private val s = Term(ColumnRef(0, "s", StringType))
  private def u(x: String) = UTF8String.fromString(x)

  private def stats(min: Any, max: Any, nulls: Option[Long] = Some(0L), rows: Long = 100, exact: Boolean = true,
      nan: Boolean = false) =
    ColumnStats(Option(min), Option(max), nulls, rows, minExact = exact, maxExact = exact, mayHaveNaN = nan)

  private def simplify(p: Predicate, st: ColumnStats): Simplified = Guarantees.simplify(p, _ => Some(st))

  test("comparisons outside the bounds are FALSE; inside for every row, TRUE (and the conjunct is counted)") {
    assert(simplify(Compare(i, CompareOp.Eq, 5), stats(6, 9)).predicate == False)
    assert(simplify(Compare(i, CompareOp.Gt, 0), stats(6, 9)) == Simplified(True, 1))
    assert(simplify(Compare(i, CompareOp.Lt, 6), stats(6, 9)).predicate == False)
    assert(simplify(Compare(i, CompareOp.Le, 6), stats(6, 9)).predicate == Compare(i, CompareOp.Le, 6))
    val both = And(Seq(Compare(i, CompareOp.Ge, 6), Compare(i, CompareOp.Lt, 8)))
    assert(simplify(both, stats(6, 9)) == Simplified(Compare(i, CompareOp.Lt, 8), 1))
  }

  test("NULLs: never TRUE on an all-NULL column; TRUE everywhere needs a zero null count") {
    assert(simplify(Compare(i, CompareOp.Gt, 0), stats(6, 9, nulls = None)).predicate == Compare(i, CompareOp.Gt, 0))
    assert(simplify(Compare(i, CompareOp.Gt, 0), stats(6, 9, nulls = Some(3))).predicate == Compare(i, CompareOp.Gt, 0))
    val allNull = ColumnStats(None, None, Some(100), 100)
    assert(simplify(Compare(i, CompareOp.Gt, 0), allNull).predicate == False)
    assert(simplify(Not(Compare(i, CompareOp.Eq, 0)), allNull).predicate == False)
    assert(simplify(IsNull(i), allNull) == Simplified(True, 1))
    assert(simplify(IsNull(i), stats(1, 2)).predicate == False)
    assert(simplify(IsNotNull(i), stats(1, 2)) == Simplified(True, 1))
    assert(simplify(Compare(i, CompareOp.NullSafeEq, 1), allNull).predicate == False)
    assert(simplify(Not(Compare(i, CompareOp.NullSafeEq, 1)), allNull).predicate == True)
  }

  test("IN keeps only the values inside the bounds") {
    assert(simplify(In(i, IndexedSeq(1, 7, 8, 20), hasNull = false), stats(6, 9)).predicate ==
      In(i, IndexedSeq(7, 8), hasNull = false))
    assert(simplify(In(i, IndexedSeq(1, 20), hasNull = true), stats(6, 9)).predicate == False)
    assert(simplify(In(i, IndexedSeq(6), hasNull = false), stats(6, 6)).predicate == True)
  }

  test("NaN may hide above the bounds: only what NaN cannot satisfy is pruned") {
    assert(simplify(Compare(d, CompareOp.Gt, 5.0), stats(1.0, 3.0, nan = true)).predicate == Compare(d, CompareOp.Gt, 5.0))
    assert(simplify(Compare(d, CompareOp.Gt, 5.0), stats(1.0, 3.0)).predicate == False)
    assert(simplify(Compare(d, CompareOp.Lt, 5.0), stats(6.0, 9.0, nan = true)).predicate == False)
    assert(simplify(Compare(d, CompareOp.Eq, Double.NaN), stats(1.0, 3.0)).predicate == False)
    assert(simplify(In(d, IndexedSeq(Double.NaN, 7.0), hasNull = false), stats(1.0, 3.0, nan = true)).predicate.toString ==
      "d IN (NaN)")
    // NOT (d < 5) is TRUE for NaN, as d >= 5 is.
    assert(simplify(Not(Compare(d, CompareOp.Lt, 5.0)), stats(1.0, 3.0, nan = true)).predicate == Compare(d, CompareOp.Ge, 5.0))
    // -0.0 and 0.0 are equal
    assert(simplify(Compare(d, CompareOp.Eq, 0.0), stats(-0.0, -0.0)) == Simplified(True, 1))
  }

  test("inexact bounds bound, but do not pin a value") {
    assert(simplify(Compare(i, CompareOp.Eq, 5), stats(5, 5, exact = false)).predicate == Compare(i, CompareOp.Eq, 5))
    assert(simplify(Compare(i, CompareOp.Eq, 5), stats(5, 5)) == Simplified(True, 1))
    assert(simplify(Compare(i, CompareOp.Lt, 5), stats(5, 9, exact = false)).predicate == False)
    assert(simplify(Not(Compare(i, CompareOp.Eq, 5)), stats(5, 5)).predicate == False)
  }

  test("casts: bounds go through the cast") {
    val widened = Term(ColumnRef(0, "i", IntegerType), Seq(LongType))
    assert(simplify(Compare(widened, CompareOp.Gt, 10L), stats(1, 9)).predicate == False)
    val asDouble = Term(ColumnRef(0, "l", LongType), Seq(DoubleType))
    assert(simplify(Compare(asDouble, CompareOp.Ge, 0.5), stats(1L, 9L)) == Simplified(True, 1))
  }

  test("string prefixes prune by range; suffix and infix only by NULLs") {
    assert(simplify(StartsWith(s, u("ab")), stats(u("ac"), u("b"))).predicate == False)
    assert(simplify(StartsWith(s, u("ab")), stats(u("aa"), u("aaz"))).predicate == False)
    assert(simplify(StartsWith(s, u("ab")), stats(u("aba"), u("abz"))) == Simplified(True, 1))
    assert(simplify(StartsWith(s, u("ab")), stats(u("ab"), u("ab\u00ff"), exact = false)) == Simplified(True, 1))
    assert(simplify(StartsWith(s, u("ab")), stats(u("a"), u("b"))).predicate == StartsWith(s, u("ab")))
    assert(simplify(EndsWith(s, u("x")), ColumnStats(None, None, Some(5), 5)).predicate == False)
    assert(simplify(Contains(s, u("x")), stats(u("a"), u("b"))).predicate == Contains(s, u("x")))
    assert(simplify(Contains(s, u("x")), stats(u("axb"), u("axb"))) == Simplified(True, 1))
  }

  test("a dictionary is read only up to the first entry that could pass") {
    // Entries read, in order: a dictionary converted lazily converts no further.
    final class Counted(values: IndexedSeq[Any]) extends IndexedSeq[Any] {
      val read = scala.collection.mutable.ArrayBuffer.empty[Int]
      override def length: Int = values.length
      override def apply(k: Int): Any = { read += k; values(k) }
    }
    val range = And(Seq(Compare(i, CompareOp.Ge, 10), Compare(i, CompareOp.Lt, 20)))
    val values = IndexedSeq[Any](30, 5, 12, 15, 40)
    val hit = new Counted(values)
    assert(Guarantees.canMatchValues(range, 0, hit, mayBeNull = true))
    assert(hit.read.distinct == Seq(0, 1, 2), hit.read)
    // None passes: every entry is read, and the trailing NULL is asked without reading one.
    val miss = new Counted(values)
    assert(!Guarantees.canMatchValues(Compare(i, CompareOp.Eq, 7), 0, miss, mayBeNull = true))
    assert(miss.read.distinct == values.indices, miss.read)
    // A leaf on another column is "maybe": the first entry passing the column's own leaf decides.
    val other = Term(ColumnRef(1, "j", IntegerType))
    val first = new Counted(values)
    assert(Guarantees.canMatchValues(And(Seq(Compare(i, CompareOp.Gt, 0), IsNotNull(other))), 0, first, mayBeNull = false))
    assert(first.read.distinct == Seq(0), first.read)
  }

  test("dictionaries and bloom filters") {
    val dict = IndexedSeq[Any](1, 2, 3)
    assert(!Guarantees.canMatchValues(Compare(i, CompareOp.Eq, 5), 0, dict, mayBeNull = true))
    assert(Guarantees.canMatchValues(Compare(i, CompareOp.Eq, 2), 0, dict, mayBeNull = false))
    assert(!Guarantees.canMatchValues(IsNull(i), 0, dict, mayBeNull = false))
    assert(Guarantees.canMatchValues(Not(In(i, IndexedSeq(1, 2), hasNull = false)), 0, dict, mayBeNull = false))
    assert(!Guarantees.canMatchValues(Not(In(i, IndexedSeq(1, 2, 3), hasNull = false)), 0, dict, mayBeNull = true))
    assert(Guarantees.withAbsentValues(Compare(i, CompareOp.Eq, 5), 0, _ == 5) == False)
    assert(Guarantees.withAbsentValues(In(i, IndexedSeq(5, 6), hasNull = false), 0, _ == 5) == In(i, IndexedSeq(6), hasNull = false))
    assert(Guarantees.withAbsentValues(Not(Compare(i, CompareOp.Eq, 5)), 0, _ == 5) == IsNotNull(i))
  }

  test("EXPLAIN strings") {
    val ship = Term(ColumnRef(3, "l_shipdate", DateType))
    val date = java.time.LocalDate.parse("1995-03-01").toEpochDay.toInt
    assert(Compare(ship, CompareOp.Ge, date).toString == "l_shipdate >= 1995-03-01")
    assert(In(s, IndexedSeq(u("a'b")), hasNull = true).toString == "s IN ('a\\'b', NULL)")
    assert(Not(And(Seq(IsNull(i), StartsWith(s, u("x"))))).toString == "NOT ((i IS NULL) AND (startswith(s, 'x')))")
    assert(Compare(Term(ColumnRef(0, "i", IntegerType), Seq(LongType)), CompareOp.Lt, 3L).toString == "cast(i as bigint) < 3")
  }
}
