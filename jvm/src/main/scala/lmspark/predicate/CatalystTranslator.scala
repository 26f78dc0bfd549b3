package lmspark.predicate

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.expressions
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Cast, Expression, GetStructField, Literal}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import lmspark.predicate.Predicate._

/** The scan's `dataFilters` split into conjuncts, each translated or left to Spark.
  * @param predicate the AND of the translated conjuncts (`True` when none)
  * @param translated the conjuncts that were translated (Catalyst form, for EXPLAIN)
  * @param untranslated the conjuncts that stay only in Spark's `Filter` above the scan */
final case class Translation(predicate: Predicate, translated: Seq[Expression], untranslated: Seq[Expression])

/** Translates Catalyst filter expressions into [[Predicate]]s over the requested schema.
  *
  * Each filter is split into its conjuncts; a conjunct is translated only when it is deterministic
  * and every part of it is supported (anything else — UDFs, subqueries, columns
  * outside the requested schema, fields below a list or map, collated strings, casts that are not [[Values.isTermCast]] —
  * leaves the whole conjunct untranslated), as are conjuncts on `generated` columns (a row index, a
  * table format's constant: no file chunk holds them). A translated conjunct is TRUE on exactly the rows
  * where Catalyst's is TRUE.
  *
  * Translation tracks polarity: under an even number of NOTs only TRUE-ness must be kept, under an
  * odd number only FALSE-ness (NOT turns one into the other; AND / OR keep each). That lets a part
  * that is never TRUE nor FALSE-but-NULL be written as a constant: `c = NULL` is `False` in
  * positive position and `True` in negative position (either way NULL). Everything else is
  * translated exactly in three-valued logic.
  *
  * Supported: `=`, `<=>`, `<`, `<=`, `>`, `>=` between a term and a literal (either side), IN /
  * INSET of literals, IS [NOT] NULL, AND, OR, NOT, a bare BOOLEAN column, STARTSWITH / ENDSWITH /
  * CONTAINS with a literal pattern on a STRING column, and terms `CAST(col AS t)` for the
  * order-preserving casts of [[Values.isTermCast]]. `CAST(date_col AS TIMESTAMP)` compared with a
  * timestamp is rewritten into a comparison of the date column with a date (the cast is strictly
  * increasing in the cast's time zone). */
object CatalystTranslator {

  def translate(dataFilters: Seq[Expression], requiredSchema: StructType, caseSensitive: Boolean,
      generated: Set[String] = Set.empty): Translation = {
    val resolver = new Resolver(requiredSchema, caseSensitive)
    val conjuncts = dataFilters.flatMap(splitConjuncts)
    val results = conjuncts.map { c =>
      val usable = c.deterministic && !c.references.exists(a => generated.contains(a.name))
      c -> (if (usable) (try resolver.predicate(c, positive = true) catch { case NonFatal(_) => None }) else None)
    }
    val translated = results.collect { case (c, Some(p)) => c -> p }
    Translation(
      Predicate.and(translated.map(_._2)),
      translated.map(_._1),
      results.collect { case (c, None) => c })
  }

  /** `splitConjunctivePredicates`: the operands of nested ANDs. */
  def splitConjuncts(e: Expression): Seq[Expression] = e match {
    case expressions.And(l, r) => splitConjuncts(l) ++ splitConjuncts(r)
    case other => Seq(other)
  }

  private final class Resolver(schema: StructType, caseSensitive: Boolean) {

    private val ids = new ScanColumns(schema)

    /** The requested column `a` names, if it is one of the schema's, uniquely, with the same type. */
    private def requested(a: AttributeReference): Option[Int] = {
      val matches = schema.fields.indices.filter { i =>
        if (caseSensitive) schema.fields(i).name == a.name else schema.fields(i).name.equalsIgnoreCase(a.name)
      }
      if (matches.size == 1 && schema.fields(matches.head).dataType == a.dataType) Some(matches.head) else None
    }

    /** The column `e` is: a requested column, or a struct field reached through structs only
      * (`s.a.b`, a [[ScanColumns]] id), of a type predicates support. */
    def column(e: Expression): Option[ColumnRef] = {
      val id = e match {
        case a: AttributeReference => requested(a)
        case g: GetStructField => structPath(g).flatMap { case (top, at) => ids.structFieldId(top, at) }
        case _ => None
      }
      id.filter(i => ids.dataType(i) == e.dataType && Values.supported(e.dataType))
        .map(i => ColumnRef(i, ids.name(i), ids.dataType(i)))
    }

    /** The requested column and field ordinals of a chain of `GetStructField`s over an attribute. */
    private def structPath(e: Expression): Option[(Int, Vector[Int])] = e match {
      case a: AttributeReference => requested(a).map(_ -> Vector.empty)
      case GetStructField(child, ordinal, _) => structPath(child).map { case (top, at) => (top, at :+ ordinal) }
      case _ => None
    }

    def term(e: Expression): Option[Term] = e match {
      case a @ (_: AttributeReference | _: GetStructField) => column(a).map(Term(_))
      case c: Cast =>
        term(c.child).filter(t => Values.isTermCast(t.dataType, c.dataType) && Values.supported(c.dataType))
          .map(t => t.copy(casts = t.casts :+ c.dataType))
      case _ => None
    }

    /** A never-TRUE, never-FALSE (always NULL) part, in the given polarity. */
    private def alwaysNull(positive: Boolean): Predicate = if (positive) False else True

    def predicate(e: Expression, positive: Boolean): Option[Predicate] = e match {
      case expressions.And(l, r) =>
        for (a <- predicate(l, positive); b <- predicate(r, positive)) yield Predicate.and(Seq(a, b))
      case expressions.Or(l, r) =>
        for (a <- predicate(l, positive); b <- predicate(r, positive)) yield Predicate.or(Seq(a, b))
      case expressions.Not(c) => predicate(c, !positive).map(Predicate.not)
      case Literal(v, BooleanType) =>
        Some(if (v == null) alwaysNull(positive) else if (v == true) True else False)
      case a @ (_: AttributeReference | _: GetStructField) if a.dataType == BooleanType =>
        term(a).map(Compare(_, CompareOp.Eq, true))

      case expressions.EqualTo(l, r) => compare(CompareOp.Eq, l, r, positive)
      case expressions.EqualNullSafe(l, r) => compare(CompareOp.NullSafeEq, l, r, positive)
      case expressions.LessThan(l, r) => compare(CompareOp.Lt, l, r, positive)
      case expressions.LessThanOrEqual(l, r) => compare(CompareOp.Le, l, r, positive)
      case expressions.GreaterThan(l, r) => compare(CompareOp.Gt, l, r, positive)
      case expressions.GreaterThanOrEqual(l, r) => compare(CompareOp.Ge, l, r, positive)

      case expressions.In(v, list) if list.nonEmpty && list.forall(_.isInstanceOf[Literal]) =>
        in(v, list.map(_.asInstanceOf[Literal]).map(l => (l.value, l.dataType)), positive)
      case expressions.InSet(v, hset) if hset.nonEmpty =>
        in(v, hset.toSeq.map(x => (x, v.dataType)), positive)

      case expressions.IsNull(c) => term(c).map(IsNull(_))
      case expressions.IsNotNull(c) => term(c).map(IsNotNull(_))

      case expressions.StartsWith(l, r) => stringPredicate(l, r, positive)(StartsWith(_, _))
      case expressions.EndsWith(l, r) => stringPredicate(l, r, positive)(EndsWith(_, _))
      case expressions.Contains(l, r) => stringPredicate(l, r, positive)(Contains(_, _))
      case _ => None
    }

    private def stringPredicate(l: Expression, r: Expression, positive: Boolean)(
        make: (Term, UTF8String) => Predicate): Option[Predicate] = (term(l), r) match {
      case (Some(t), Literal(v, rt)) if Values.isString(t.dataType) && Values.isString(rt) =>
        Some(if (v == null) alwaysNull(positive) else make(t, v.asInstanceOf[UTF8String]))
      case _ => None
    }

    private def flip(op: CompareOp): CompareOp = op match {
      case CompareOp.Lt => CompareOp.Gt
      case CompareOp.Le => CompareOp.Ge
      case CompareOp.Gt => CompareOp.Lt
      case CompareOp.Ge => CompareOp.Le
      case other => other
    }

    private def compare(op: CompareOp, l: Expression, r: Expression, positive: Boolean): Option[Predicate] =
      (l, r) match {
        case (_, lit: Literal) if !l.isInstanceOf[Literal] => compareTermLiteral(op, l, lit, positive)
        case (lit: Literal, _) if !r.isInstanceOf[Literal] => compareTermLiteral(flip(op), r, lit, positive)
        case _ => None
      }

    private def compareTermLiteral(op: CompareOp, e: Expression, lit: Literal, positive: Boolean): Option[Predicate] =
      e match {
        case DateToTimestamp(dateTerm, tz) if term(dateTerm).isDefined && lit.dataType == TimestampType =>
          val t = term(dateTerm).get
          if (t.dataType != DateType) None
          else if (lit.value == null) Some(nullCompare(op, t, positive))
          else dateFloor(lit.value.asInstanceOf[Long], tz).flatMap { case (d0, exact) =>
            import CompareOp._
            Some(op match {
              case Lt => Compare(t, if (exact) Lt else Le, d0)
              case Le => Compare(t, Le, d0)
              case Gt => Compare(t, Gt, d0)
              case Ge => Compare(t, if (exact) Ge else Gt, d0)
              case Eq => if (exact) Compare(t, Eq, d0) else if (positive) False else IsNull(t)
              case NullSafeEq => if (exact) Compare(t, NullSafeEq, d0) else False
            })
          }
        case _ =>
          term(e).flatMap { t =>
            if (lit.value == null) { if (sameType(lit.dataType, t.dataType)) Some(nullCompare(op, t, positive)) else None }
            else literalAs(lit.value, lit.dataType, t.dataType).map(Compare(t, op, _))
          }
      }

    /** `t op NULL`: NULL for every row, but for `<=>`, which is `t IS NULL`. */
    private def nullCompare(op: CompareOp, t: Term, positive: Boolean): Predicate =
      if (op == CompareOp.NullSafeEq) IsNull(t) else alwaysNull(positive)

    private def in(v: Expression, items: Seq[(Any, DataType)], positive: Boolean): Option[Predicate] = v match {
      case DateToTimestamp(dateTerm, tz) if term(dateTerm).exists(_.dataType == DateType) &&
          items.forall(_._2 == TimestampType) =>
        val t = term(dateTerm).get
        val hasNull = items.exists(_._1 == null)
        val floors = items.collect { case (x, _) if x != null => dateFloor(x.asInstanceOf[Long], tz) }
        if (floors.exists(_.isEmpty)) None
        else inOf(t, floors.flatten.collect { case (d, true) => d }, hasNull, positive)
      case _ =>
        term(v).flatMap { t =>
          val hasNull = items.exists(_._1 == null)
          val converted = items.collect { case (x, dt) if x != null => literalAs(x, dt, t.dataType) }
          if (converted.exists(_.isEmpty)) None else inOf(t, converted.flatten, hasNull, positive)
        }
    }

    /** `t IN (values [, NULL])` with the values deduplicated (Spark's equality). With no values
      * left, a row is NULL (its term is NULL, or the list has a NULL) or FALSE. */
    private def inOf(t: Term, values: Seq[Any], hasNull: Boolean, positive: Boolean): Option[Predicate] = {
      val ord = Values.ordering(t.dataType)
      val distinct = values.foldLeft(Vector.empty[Any])((acc, x) => if (acc.exists(ord.equiv(_, x))) acc else acc :+ x)
      if (distinct.nonEmpty) Some(In(t, distinct, hasNull))
      else if (hasNull || positive) Some(alwaysNull(positive)) // never TRUE; never FALSE when hasNull
      else Some(IsNull(t)) // negative position: FALSE exactly for non-NULL terms
    }

    private def sameType(a: DataType, b: DataType): Boolean = a == b

    /** A literal of type `from` as a value of `to`: itself when the types are the same; for
      * integral / decimal types, the value converted when the conversion is exact both ways. */
    private def literalAs(v: Any, from: DataType, to: DataType): Option[Any] =
      if (sameType(from, to)) Some(v)
      else if (exactNumeric(from) && exactNumeric(to)) {
        try {
          val c = Cast(Literal(v, from), to, None, expressions.EvalMode.TRY).eval()
          if (c == null) None
          else {
            val back = Cast(Literal(c, to), from, None, expressions.EvalMode.TRY).eval()
            if (back != null && Values.ordering(from).equiv(back, v)) Some(c) else None
          }
        } catch { case NonFatal(_) => None }
      } else None

    private def exactNumeric(dt: DataType): Boolean = dt match {
      case ByteType | ShortType | IntegerType | LongType => true
      case _: DecimalType => true
      case _ => false
    }

    /** `(d0, exact)`: the date `d0` whose start (in `tz`) is the latest at or before `ts`, and
      * whether it is exactly `ts`. None when Catalyst cannot say. */
    private def dateFloor(ts: Long, tz: String): Option[(Int, Boolean)] =
      try {
        val d0 = Cast(Literal(ts, TimestampType), DateType, Some(tz)).eval()
        if (d0 == null) None
        else {
          val back = Cast(Literal(d0, DateType), TimestampType, Some(tz)).eval()
          if (back == null) None
          else {
            val b = back.asInstanceOf[Long]
            val next = Cast(Literal(d0.asInstanceOf[Int] + 1, DateType), TimestampType, Some(tz)).eval()
            // f strictly increasing with f(d0) <= ts < f(d0 + 1): otherwise do not translate.
            if (b <= ts && (next == null || next.asInstanceOf[Long] > ts)) Some((d0.asInstanceOf[Int], b == ts)) else None
          }
        }
      } catch { case NonFatal(_) => None }
  }

  /** `CAST(date AS TIMESTAMP)` with its time zone. */
  private object DateToTimestamp {
    def unapply(e: Expression): Option[(Expression, String)] = e match {
      case c: Cast if c.dataType == TimestampType && c.child.dataType == DateType && c.timeZoneId.isDefined =>
        Some((c.child, c.timeZoneId.get))
      case _ => None
    }
  }
}
