package lmspark.predicate

import org.apache.spark.sql.types.DataType
import org.apache.spark.unsafe.types.UTF8String

/** A column a predicate reads: `index` is its position in the scan's requested schema (and so in
  * `FileReadPlan.columns`), `dataType` its Spark type there. */
final case class ColumnRef(index: Int, name: String, dataType: DataType) {
  override def toString: String = name
}

/** lmspark's own small predicate tree, translated from the scan's Catalyst `dataFilters`
  * ([[CatalystTranslator]]) and evaluated against metadata (statistics, dictionaries, bloom
  * filters, page indexes) by [[Guarantees]] and [[PageFilter]], and against concrete values by
  * [[Evaluator]].
  *
  * Semantics are exactly Spark's for a `Filter`: a row passes when the predicate is TRUE, with SQL
  * three-valued logic (NULL is not TRUE); values are Catalyst internal values of the column's
  * Spark type (Int, Long, UTF8String, Decimal, Array[Byte], ...) compared with Spark's ordering
  * for that type (NaN greatest and equal to itself, -0.0 == 0.0, strings and binary by unsigned
  * bytes).
  *
  * A leaf reads one [[Term]]: a column, possibly under order-preserving casts.
  *
  * `toString` is the EXPLAIN form (`l_shipdate >= 1995-03-01`). */
sealed trait Predicate

object Predicate {
  case object True extends Predicate { override def toString: String = "true" }
  case object False extends Predicate { override def toString: String = "false" }

  /** A predicate reading one [[Term]] (everything but constants and connectives). */
  sealed trait Leaf extends Predicate { def term: Term }

  /** `term op value`; `value` is a non-null Catalyst value of `term.dataType`. */
  final case class Compare(term: Term, op: CompareOp, value: Any) extends Leaf {
    override def toString: String = s"$term $op ${Values.show(value, term.dataType)}"
  }

  /** `term IN (values)`; `values` non-null, distinct, non-empty, of `term.dataType`; `hasNull`: the
    * list also held a NULL (so a non-matching row gives NULL, not FALSE; both fail a filter).
    * A NULL term gives NULL (as Spark's `In`; Spark's interpreted `InSet` alone gives FALSE for a
    * NaN term missing from a list with NULL, where `In` and generated code give NULL). */
  final case class In(term: Term, values: IndexedSeq[Any], hasNull: Boolean) extends Leaf {
    override def toString: String = {
      val shown = values.map(Values.show(_, term.dataType)) ++ (if (hasNull) Seq("NULL") else Nil)
      s"$term IN (${shown.mkString(", ")})"
    }
  }

  final case class IsNull(term: Term) extends Leaf { override def toString: String = s"$term IS NULL" }
  final case class IsNotNull(term: Term) extends Leaf { override def toString: String = s"$term IS NOT NULL" }

  /** String predicates on a STRING term (UTF-8 bytes). */
  final case class StartsWith(term: Term, prefix: UTF8String) extends Leaf {
    override def toString: String = s"startswith($term, ${Values.quote(prefix.toString)})"
  }
  final case class EndsWith(term: Term, suffix: UTF8String) extends Leaf {
    override def toString: String = s"endswith($term, ${Values.quote(suffix.toString)})"
  }
  final case class Contains(term: Term, infix: UTF8String) extends Leaf {
    override def toString: String = s"contains($term, ${Values.quote(infix.toString)})"
  }

  final case class And(children: Seq[Predicate]) extends Predicate {
    override def toString: String = children.map(c => s"($c)").mkString(" AND ")
  }
  final case class Or(children: Seq[Predicate]) extends Predicate {
    override def toString: String = children.map(c => s"($c)").mkString(" OR ")
  }
  final case class Not(child: Predicate) extends Predicate {
    override def toString: String = s"NOT ($child)"
  }

  /** The AND of `ps`, folded: nested ANDs flattened, `True` dropped, `False` absorbing, a single
    * child returned as is, no children `True`. Exact in three-valued logic. */
  def and(ps: Seq[Predicate]): Predicate = {
    val b = Vector.newBuilder[Predicate]
    val it = ps.iterator
    while (it.hasNext) it.next() match {
      case True =>
      case False => return False
      case And(nested) => and(nested) match {
        case True =>
        case False => return False
        case And(flat) => b ++= flat
        case other => b += other
      }
      case other => b += other
    }
    val children = b.result()
    if (children.isEmpty) True else if (children.size == 1) children.head else And(children)
  }

  /** The OR of `ps`, folded like [[and]] (`True` absorbing, no children `False`). */
  def or(ps: Seq[Predicate]): Predicate = {
    val b = Vector.newBuilder[Predicate]
    val it = ps.iterator
    while (it.hasNext) it.next() match {
      case False =>
      case True => return True
      case Or(nested) => or(nested) match {
        case False =>
        case True => return True
        case Or(flat) => b ++= flat
        case other => b += other
      }
      case other => b += other
    }
    val children = b.result()
    if (children.isEmpty) False else if (children.size == 1) children.head else Or(children)
  }

  /** `NOT p`, folded (constants, double negation); exact in three-valued logic. */
  def not(p: Predicate): Predicate = p match {
    case True => False
    case False => True
    case Not(c) => c
    case other => Not(other)
  }

  /** The top-level conjuncts of `p` (its And children, or `p` itself). */
  def conjuncts(p: Predicate): Seq[Predicate] = p match {
    case And(cs) => cs
    case other => Seq(other)
  }

  /** `p` in negation normal form, equivalent in three-valued logic: NOT only directly above a leaf
    * that has no negated form (`=`, `<=>`, IN, string predicates); `NOT (t < v)` is `t >= v` (and
    * so on: exact for NULL, which stays NULL, and for NaN under Spark's total order, where NaN is
    * greatest), `NOT t IS NULL` is `t IS NOT NULL`; De Morgan for AND/OR (exact in Kleene logic);
    * constants folded. */
  def negationNormalForm(p: Predicate): Predicate = nnf(p, negate = false)

  private def nnf(p: Predicate, negate: Boolean): Predicate = p match {
    case True => if (negate) False else True
    case False => if (negate) True else False
    case And(cs) => if (negate) or(cs.map(nnf(_, negate = true))) else and(cs.map(nnf(_, negate = false)))
    case Or(cs) => if (negate) and(cs.map(nnf(_, negate = true))) else or(cs.map(nnf(_, negate = false)))
    case Not(c) => nnf(c, !negate)
    case l: Leaf => if (negate) negateLeaf(l) else l
  }

  /** `NOT leaf` as a leaf where an exact one exists, else `Not(leaf)`. */
  def negateLeaf(l: Leaf): Predicate = l match {
    case Compare(t, CompareOp.Lt, v) => Compare(t, CompareOp.Ge, v)
    case Compare(t, CompareOp.Le, v) => Compare(t, CompareOp.Gt, v)
    case Compare(t, CompareOp.Gt, v) => Compare(t, CompareOp.Le, v)
    case Compare(t, CompareOp.Ge, v) => Compare(t, CompareOp.Lt, v)
    case IsNull(t) => IsNotNull(t)
    case IsNotNull(t) => IsNull(t)
    case other => Not(other)
  }

  /** Every leaf of `p`. */
  def leaves(p: Predicate): Seq[Leaf] = p match {
    case l: Leaf => Seq(l)
    case And(cs) => cs.flatMap(leaves)
    case Or(cs) => cs.flatMap(leaves)
    case Not(c) => leaves(c)
    case True | False => Nil
  }
}

/** A column read under zero or more order-preserving (monotone non-decreasing) casts:
  * `casts` applied innermost first, `dataType` the type after the last one. */
final case class Term(column: ColumnRef, casts: Seq[DataType] = Nil) {
  def dataType: DataType = casts.lastOption.getOrElse(column.dataType)

  override def toString: String =
    casts.foldLeft(column.name)((inner, dt) => s"cast($inner as ${dt.simpleString})")
}

sealed trait CompareOp
object CompareOp {
  case object Eq extends CompareOp { override def toString: String = "=" }
  /** `<=>`: null-safe equality (with a non-null value: TRUE iff equal, FALSE for NULL). */
  case object NullSafeEq extends CompareOp { override def toString: String = "<=>" }
  case object Lt extends CompareOp { override def toString: String = "<" }
  case object Le extends CompareOp { override def toString: String = "<=" }
  case object Gt extends CompareOp { override def toString: String = ">" }
  case object Ge extends CompareOp { override def toString: String = ">=" }
}
