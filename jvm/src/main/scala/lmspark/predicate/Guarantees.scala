package lmspark.predicate

import scala.collection.mutable

import org.apache.spark.sql.types.{DoubleType, FloatType}

import lmspark.predicate.Predicate._

/** A predicate simplified under a guarantee: `predicate` agrees with the original on every row the
  * guarantee covers (it is TRUE exactly where the original is TRUE); `conjunctsRemoved` top-level
  * conjuncts of the original were proven TRUE for all those rows and dropped. `False` means no
  * covered row can pass. */
final case class Simplified(predicate: Predicate, conjunctsRemoved: Int)

/** Simplification with a guarantee (after Arrow's `SimplifyWithGuarantee`): the guarantee is what
  * [[ColumnStats]] say of each column (`min <= c <= max`, null counts, NaN), over some rows.
  *
  * Method: the predicate is put in negation normal form (NOT only directly above leaves, exact in
  * three-valued logic). Above the leaves there are then only AND and OR, whose result is TRUE
  * exactly when their children's TRUE-ness says so; so a leaf (or negated leaf) that can never be
  * TRUE on the covered rows may become `False` (NULL and FALSE are alike to it), and one TRUE on
  * every covered row becomes `True`, without changing which rows pass. Each leaf's possible
  * outcomes come from [[StatsEval]], with Spark's ordering and NULL / NaN semantics. */
object Guarantees {

  /** Simplifies `p` for rows where `stats(column.index)` holds (None: nothing known). */
  def simplify(p: Predicate, stats: Int => Option[ColumnStats]): Simplified = {
    val domains = mutable.HashMap.empty[Term, Domain]
    def domainOf(t: Term): Domain =
      domains.getOrElseUpdate(t, StatsEval.domain(t, stats(t.column.index), Values.termCaster(t)))
    var removed = 0
    val parts = Predicate.conjuncts(p).map { c =>
      val s = simplifyNnf(Predicate.negationNormalForm(c), domainOf)
      if (s == True && c != True) removed += 1
      s
    }
    Simplified(Predicate.and(parts), removed)
  }

  /** Simplifies a predicate in negation normal form, leaf by leaf. */
  private def simplifyNnf(q: Predicate, domainOf: Term => Domain): Predicate = q match {
    case True | False => q
    case And(cs) => Predicate.and(cs.map(simplifyNnf(_, domainOf)))
    case Or(cs) => Predicate.or(cs.map(simplifyNnf(_, domainOf)))
    case Not(l: Leaf) =>
      val d = domainOf(l.term)
      decide(Kleene.negate(StatsEval.outcomes(l, d)), StatsEval.narrow(l, d) match {
        // No value can match: NOT IN is TRUE exactly for the non-NULL terms (an empty IN list
        // would not do: Spark gives FALSE, not NULL, for `NULL IN ()`).
        case In(t, vs, false) if vs.isEmpty => IsNotNull(t)
        case narrowed => Not(narrowed)
      })
    case l: Leaf =>
      val d = domainOf(l.term)
      decide(StatsEval.outcomes(l, d), StatsEval.narrow(l, d))
    case Not(other) => Predicate.not(simplifyNnf(other, domainOf)) // not reached in normal form
  }

  private def decide(outcomes: Int, kept: => Predicate): Predicate =
    if ((outcomes & Kleene.T) == 0) False
    else if (outcomes == Kleene.T) True
    else kept

  /** True iff some row whose value of column `column` is one of `values` (or NULL, when
    * `mayBeNull`) could pass `p`, other columns being unknown. Used with a chunk's whole
    * dictionary. The tree (in negation normal form) is compiled once, each leaf on `column` into
    * its [[Evaluator]] function (Spark's semantics) after its term's casts, leaves on other columns
    * into "maybe"; it is then asked value by value, in order, and the answer is the first value
    * that could make it TRUE. So `values` is read only up to that value: a lazily converted
    * dictionary ([[lmspark.column.SparkValues.dictionary]]) that can pass converts little. */
  def canMatchValues(p: Predicate, column: Int, values: IndexedSeq[Any], mayBeNull: Boolean): Boolean = {
    val size = values.size
    val n = size + (if (mayBeNull) 1 else 0)
    val casters = mutable.HashMap.empty[Term, Any => Any]
    // Whether value `i` (NULL when i == size) could give leaf `l` the result `want`.
    def leaf(l: Leaf, want: Int): Int => Boolean =
      if (l.term.column.index != column) _ => true
      else {
        val f = Evaluator.leafFn(l)
        val cast = casters.getOrElseUpdate(l.term, Values.termCaster(l.term))
        i => f(if (i < size) cast(values(i)) else null) == want
      }
    def compile(q: Predicate): Int => Boolean = q match {
      case True => _ => true
      case False => _ => false
      case l: Leaf => leaf(l, Kleene.T)
      case Not(l: Leaf) => leaf(l, Kleene.F)
      case And(cs) =>
        val fs = cs.map(compile).toArray
        i => fs.forall(_(i))
      case Or(cs) =>
        val fs = cs.map(compile).toArray
        i => fs.exists(_(i))
      case Not(other) => throw new IllegalStateException(s"not in negation normal form: NOT ($other)")
    }
    if (n == 0) return false
    val passes = compile(Predicate.negationNormalForm(p))
    var i = 0
    while (i < n) {
      if (passes(i)) return true
      i += 1
    }
    false
  }

  /** `p` with every `=` / `IN` / `<=>` leaf on `column` whose values are all proven absent
    * (`absent(value)`, e.g. by a bloom filter) replaced by `False`, then simplified. `absent(v)`
    * must mean that no value of the column equals `v` in Spark's sense; FLOAT / DOUBLE zeros and
    * NaN (which Spark equates across bit patterns) are never asked about. Leaves under NOT are
    * handled in negation normal form (`NOT c = v` with `v` absent is `c IS NOT NULL`). */
  def withAbsentValues(p: Predicate, column: Int, absent: Any => Boolean): Predicate = {
    def isAbsent(t: Term, v: Any): Boolean = {
      val risky = (t.dataType == FloatType || t.dataType == DoubleType) && (Values.isNaN(v) || v == 0.0f || v == 0.0d)
      !risky && absent(v)
    }
    def rewrite(l: Leaf, negated: Boolean): Predicate = {
      val kept: Predicate = if (negated) Not(l) else l
      l match {
        case Compare(t, CompareOp.Eq, v) if isAbsent(t, v) => if (negated) IsNotNull(t) else False
        case Compare(t, CompareOp.NullSafeEq, v) if isAbsent(t, v) => if (negated) True else False
        case in @ In(t, values, hasNull) =>
          val keep = values.filterNot(isAbsent(t, _))
          if (keep.size == values.size) kept
          else if (keep.nonEmpty) { val n = in.copy(values = keep); if (negated) Not(n) else n }
          else if (!negated) False
          else if (hasNull) False
          else IsNotNull(t)
        case _ => kept
      }
    }
    def applies(l: Leaf): Boolean = l.term.column.index == column && l.term.casts.isEmpty
    def go(q: Predicate): Predicate = q match {
      case And(cs) => Predicate.and(cs.map(go))
      case Or(cs) => Predicate.or(cs.map(go))
      case l: Leaf if applies(l) => rewrite(l, negated = false)
      case Not(l: Leaf) if applies(l) => rewrite(l, negated = true)
      case other => other
    }
    simplify(go(Predicate.negationNormalForm(p)), _ => None).predicate
  }

  /** The columns (`ColumnRef.index`) `p` reads. */
  def columns(p: Predicate): Set[Int] = Predicate.leaves(p).iterator.map(_.term.column.index).toSet
}
