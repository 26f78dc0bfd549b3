package lmspark.predicate

import org.apache.spark.sql.types.DataType

/** A column a predicate reads: `index` is its position in the scan's requested schema (and so in
  * `FileReadPlan.columns`), `dataType` its Spark type there. */
final case class ColumnRef(index: Int, name: String, dataType: DataType)

/** lmspark's own small predicate tree, translated from the scan's Catalyst `dataFilters`
  * ([[CatalystTranslator]]) and evaluated against metadata (statistics, dictionaries, bloom
  * filters, page indexes) by [[Guarantees]] and [[PageFilter]].
  *
  * Semantics are exactly Spark's for a `Filter`: a row passes when the predicate is TRUE, with SQL
  * three-valued logic (NULL is not TRUE); values are Catalyst internal values of the column's
  * Spark type (Int, Long, UTF8String, Decimal, Array[Byte], ...) compared with Spark's ordering
  * for that type (NaN greatest and equal to itself, -0.0 == 0.0, strings and binary by unsigned
  * bytes).
  *
  * A leaf reads one [[Term]]: a column, possibly under order-preserving casts. */
sealed trait Predicate

object Predicate {
  case object True extends Predicate
  case object False extends Predicate

  /** `term op value`; `value` is a non-null Catalyst value of `term.dataType`. */
  final case class Compare(term: Term, op: CompareOp, value: Any) extends Predicate

  /** `term IN (values)`; `values` non-null, distinct, of `term.dataType`; `hasNull`: the list also
    * held a NULL (so a non-matching row gives NULL, not FALSE; both fail a filter). */
  final case class In(term: Term, values: IndexedSeq[Any], hasNull: Boolean) extends Predicate

  final case class IsNull(term: Term) extends Predicate
  final case class IsNotNull(term: Term) extends Predicate

  /** String predicates on a STRING term (UTF-8 bytes). */
  final case class StartsWith(term: Term, prefix: org.apache.spark.unsafe.types.UTF8String) extends Predicate
  final case class EndsWith(term: Term, suffix: org.apache.spark.unsafe.types.UTF8String) extends Predicate
  final case class Contains(term: Term, infix: org.apache.spark.unsafe.types.UTF8String) extends Predicate

  final case class And(children: Seq[Predicate]) extends Predicate
  final case class Or(children: Seq[Predicate]) extends Predicate
  final case class Not(child: Predicate) extends Predicate
}

/** A column read under zero or more order-preserving (monotone non-decreasing) casts:
  * `casts` applied innermost first, `dataType` the type after the last one. */
final case class Term(column: ColumnRef, casts: Seq[DataType] = Nil) {
  def dataType: DataType = casts.lastOption.getOrElse(column.dataType)
}

sealed trait CompareOp
object CompareOp {
  case object Eq extends CompareOp
  /** `<=>`: null-safe equality (with a non-null value: TRUE iff equal, FALSE for NULL). */
  case object NullSafeEq extends CompareOp
  case object Lt extends CompareOp
  case object Le extends CompareOp
  case object Gt extends CompareOp
  case object Ge extends CompareOp
}
