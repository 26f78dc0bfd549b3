package lmspark.predicate

import org.apache.spark.unsafe.types.UTF8String

import lmspark.predicate.Predicate._
import lmspark.shim.SparkLineApis

/** What [[ColumnStats]] allow a [[Term]]'s values to be, over the rows they cover.
  *
  * @param nulls some value may be NULL
  * @param nonNull some value may be non-NULL
  * @param lo a lower bound of the non-NULL values in the term's type (after its casts, which are
  *        monotone), `null` when unbounded
  * @param hi an upper bound likewise (`null`: unbounded, above even NaN)
  * @param point every non-NULL value is `lo` (bounds exact and equal) — or NaN, when `nan`
  * @param nan NaN may occur although the bounds exclude it (FLOAT / DOUBLE only)
  * Invariant: with neither `nulls` nor `nonNull` no row is covered. */
final case class Domain(nulls: Boolean, nonNull: Boolean, lo: Any, hi: Any, point: Boolean, nan: Boolean)

/** Three-valued evaluation of one leaf over a [[Domain]]: the set of outcomes (`Kleene` bits)
  * the leaf may take on the covered rows. Every answer over-approximates (an outcome left out is
  * impossible), so a leaf whose set lacks TRUE is never TRUE there, and one whose set is exactly
  * TRUE is TRUE on every covered row. */
object StatsEval {

  /** Everything possible. */
  val Unknown: Domain = Domain(nulls = true, nonNull = true, lo = null, hi = null, point = false, nan = false)

  /** The domain of `term` under `stats` (None: nothing known). `cast` is the term's casts
    * ([[Values.termCaster]]). */
  def domain(term: Term, stats: Option[ColumnStats], cast: Any => Any): Domain = stats match {
    case None => Unknown
    case Some(s) =>
      val rows = s.rowCount > 0
      val nulls = rows && s.nullCount.forall(_ > 0)
      val nonNull = rows && !s.allNull
      if (!nonNull) Domain(nulls, nonNull = false, lo = null, hi = null, point = false, nan = false)
      else {
        val colType = term.column.dataType
        val lo = s.min.map(cast).orNull
        val hi = s.max.map(cast).orNull
        val point = lo != null && hi != null && s.minExact && s.maxExact &&
          Values.ordering(colType).equiv(s.min.get, s.max.get)
        val nan = s.mayHaveNaN && Values.isFloating(colType) && Values.isFloating(term.dataType)
        Domain(nulls, nonNull, lo, hi, point, nan)
      }
  }

  /** The possible outcomes of `l` over `d`. */
  def outcomes(l: Leaf, d: Domain): Int = {
    var bits = 0
    if (d.nulls) bits |= nullOutcome(l)
    if (d.nonNull) bits |= nonNullOutcomes(l, d)
    bits
  }

  /** The leaf's result for a NULL term (as [[Evaluator.leafFn]] gives it). */
  def nullOutcome(l: Leaf): Int = l match {
    case Compare(_, CompareOp.NullSafeEq, _) => Kleene.F
    case IsNull(_) => Kleene.T
    case IsNotNull(_) => Kleene.F
    case _ => Kleene.N
  }

  private def nonNullOutcomes(l: Leaf, d: Domain): Int = {
    val dt = l.term.dataType
    if (d.point) {
      val f = Evaluator.leafFn(l)
      f(d.lo) | (if (d.nan) f(Values.nan(dt)) else 0)
    } else {
      val b = new Bounds(d, Values.ordering(dt))
      import Kleene._
      def bits(t: Boolean, f: Boolean): Int = (if (t) T else 0) | (if (f) F else 0)
      l match {
        case Compare(_, op, v) =>
          import CompareOp._
          op match {
            case Lt => bits(b.someBelow(v), b.someAtOrAbove(v))
            case Le => bits(b.someAtOrBelow(v), b.someAbove(v))
            case Gt => bits(b.someAbove(v), b.someAtOrBelow(v))
            case Ge => bits(b.someAtOrAbove(v), b.someBelow(v))
            case Eq | NullSafeEq => bits(b.mayContain(v), f = true)
          }
        case In(_, values, hasNull) =>
          (if (values.exists(b.mayContain)) T else 0) | (if (hasNull) N else F)
        case IsNull(_) => F
        case IsNotNull(_) => T
        case StartsWith(_, p) =>
          if (p.numBytes == 0) T
          else {
            val lo = d.lo.asInstanceOf[UTF8String]
            val hi = d.hi.asInstanceOf[UTF8String]
            // Strings starting with p form an interval of the byte order: [p, successor of p).
            val someWith = (hi == null || SparkLineApis.binaryCompare(hi, p) >= 0) &&
              (lo == null || SparkLineApis.binaryCompare(lo, p) < 0 || lo.startsWith(p))
            val allWith = lo != null && hi != null && lo.startsWith(p) && hi.startsWith(p)
            bits(someWith, !allWith)
          }
        case EndsWith(_, s) => if (s.numBytes == 0) T else T | F
        case Contains(_, s) => if (s.numBytes == 0) T else T | F
      }
    }
  }

  /** `l` with what `d` excludes removed: IN keeps only the values the domain may contain
    * (exact: a dropped value matches no covered row). The list may end up empty (then no value
    * matches); callers must not hand such an IN to Spark, whose `NULL IN ()` is FALSE. */
  def narrow(l: Leaf, d: Domain): Leaf = l match {
    case in @ In(_, values, _) if d.nonNull =>
      val keep =
        if (d.point) {
          val ord = Values.ordering(l.term.dataType)
          values.filter(v => ord.equiv(v, d.lo) || (d.nan && Values.isNaN(v)))
        } else {
          val b = new Bounds(d, Values.ordering(l.term.dataType))
          values.filter(b.mayContain)
        }
      if (keep.size == values.size) in else in.copy(values = keep)
    case other => other
  }

  /** Interval questions about the non-NULL values of a non-point domain. */
  private final class Bounds(d: Domain, ord: Ordering[Any]) {
    private val lo = d.lo
    private val hi = d.hi
    def someBelow(v: Any): Boolean = lo == null || ord.lt(lo, v)
    def someAtOrBelow(v: Any): Boolean = lo == null || ord.lteq(lo, v)
    // NaN (outside the bounds when d.nan) is above every value but NaN, and equal to NaN.
    def someAbove(v: Any): Boolean = hi == null || ord.gt(hi, v) || (d.nan && !Values.isNaN(v))
    def someAtOrAbove(v: Any): Boolean = hi == null || ord.gteq(hi, v) || d.nan
    def mayContain(v: Any): Boolean =
      ((lo == null || ord.lteq(lo, v)) && (hi == null || ord.lteq(v, hi))) || (d.nan && Values.isNaN(v))
  }
}
