package lmspark.predicate

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** [[CatalystTranslator]] on random Catalyst filters: every generated conjunct is labelled
  * translatable or not by the generator (from what it is built of), the translator must split and
  * sort them exactly so, and every translated conjunct must pass exactly the rows Catalyst's
  * passes (evaluated by [[Evaluator]], itself checked against Catalyst in the property suite). */
class CatalystTranslatorSuite extends AnyFunSuite with PropertyCases {
  import CatalystTranslatorSuite.{G, T}

  private def pick[A](r: Random, xs: Seq[A]): A = xs(r.nextInt(xs.size))

  private val TimeZones = Seq("UTC", "America/Los_Angeles", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Apia",
    "Europe/Berlin")

  /** A collated string type, where the line has collations (a plain string otherwise, never used in a term). */
  private val Lcase = lmspark.testutil.TestLineApis.collatedString.getOrElse(StringType)
  private val StructT = StructType(Seq(StructField("a", IntegerType)))


  private final class World(r: Random) {
    val tz: String = pick(r, TimeZones)
    val caseSensitive: Boolean = r.nextBoolean()
    val types: IndexedSeq[DataType] = IndexedSeq.fill(2 + r.nextInt(4))(pick(r, PredicateGen.ColumnTypes)) ++
      (if (r.nextBoolean()) Seq(DateType) else Nil)
    val names: IndexedSeq[String] = types.indices.map(i => s"c$i")
    /** Fields in the requested schema: the generated columns and some unsupported ones. */
    val fields: IndexedSeq[StructField] = (types.indices.map(i => StructField(names(i), types(i))) ++
      Seq(StructField("lc", Lcase), StructField("st", StructT), StructField("arr", ArrayType(IntegerType)),
        StructField("dup", IntegerType), StructField("DUP", IntegerType)))
    val schema: StructType = StructType(fields)
    /** Attribute names as the filters spell them (another case when resolution ignores it). */
    val attrs: IndexedSeq[AttributeReference] = fields.map { f =>
      val n = if (!caseSensitive && f.name.startsWith("c") && r.nextBoolean()) f.name.toUpperCase else f.name
      AttributeReference(n, f.dataType)()
    }
    val outside: AttributeReference = AttributeReference("outside", IntegerType)()
    val allAttrs: Seq[AttributeReference] = attrs :+ outside
    val pools: IndexedSeq[IndexedSeq[Any]] = types.map(PredicateGen.pool(_, r))

    def toTimestamp(d: Any): Long = Cast(Literal(d, DateType), TimestampType, Some(tz)).eval().asInstanceOf[Long]

    def rowValues(): Array[Any] = {
      val base: IndexedSeq[Any] = types.indices.map(i => PredicateGen.columnValues(types(i), pools(i), 1, r)(0))
      (base ++ Seq[Any](
        if (r.nextInt(4) == 0) null else UTF8String.fromString(pick(r, Seq("a", "A", "b", "ab"))),
        new GenericInternalRow(Array[Any](r.nextInt(3))),
        new GenericArrayData(Array[Any](1, 2)),
        r.nextInt(3), r.nextInt(3),
        r.nextInt(3))).toArray
    }

    private def supportedColumns: IndexedSeq[Int] = types.indices


    def goodTerm(): T = {
      val i = pick(r, supportedColumns)
      var e: Expression = attrs(i)
      var dt = types(i)
      var casts = Seq.empty[DataType]
      if (r.nextInt(3) == 0) {
        val targets = PredicateGen.CastTargets.filter(Values.isTermCast(dt, _))
        if (targets.nonEmpty) {
          val to = pick(r, targets)
          e = Cast(e, to, Some(tz)); dt = to; casts :+= to
        }
      }
      val t = Term(ColumnRef(i, names(i), types(i)), casts)
      T(e, dt, ok = true, () => PredicateGen.literal(t, pools(i), r))
    }

    def term(): T = r.nextInt(24) match {
      case 0 | 8 | 9 if types.contains(DateType) =>
        val i = types.indexOf(DateType)
        T(Cast(attrs(i), TimestampType, Some(tz)), TimestampType, ok = true,
          () => toTimestamp(pick(r, pools(i))) + pick(r, Seq(0L, 0L, 1L, -1L, 3600000000L, -86400000000L)),
          dateToTs = true)
      case 1 =>
        // not order preserving, or not total, or time-zone dependent
        val bad = Seq[(DataType, DataType)](IntegerType -> StringType, LongType -> IntegerType, DoubleType -> FloatType,
          TimestampType -> DateType, IntegerType -> DecimalType(5, 0), DecimalType(12, 4) -> DecimalType(5, 2),
          FloatType -> DecimalType(10, 2), StringType -> IntegerType, TimestampNTZType -> TimestampType,
          DoubleType -> LongType, BooleanType -> IntegerType)
        val options = bad.filter { case (from, _) => types.contains(from) }
        if (options.isEmpty) goodTerm()
        else {
          val (from, to) = pick(r, options)
          T(Cast(attrs(types.indexOf(from)), to, Some(tz)), to, ok = false, () => PredicateGen.value(to, r))
        }
      case 2 if types.contains(IntegerType) =>
        T(Add(attrs(types.indexOf(IntegerType)), Literal(1)), IntegerType, ok = false, () => PredicateGen.value(IntegerType, r))
      case 3 if types.contains(StringType) =>
        T(Upper(attrs(types.indexOf(StringType))), StringType, ok = false, () => PredicateGen.value(StringType, r))
      // A struct field: a column of its own (a ScanColumns id after the requested columns).
      case 4 => T(GetStructField(attrs(fields.indexWhere(_.name == "st")), 0), IntegerType, ok = true,
        () => PredicateGen.value(IntegerType, r))
      case 5 => T(outside, IntegerType, ok = false, () => PredicateGen.value(IntegerType, r))
      case 6 if lmspark.testutil.TestLineApis.collatedString.isDefined =>
        T(attrs(fields.indexWhere(_.name == "lc")), Lcase, ok = false,
        () => UTF8String.fromString(pick(r, Seq("a", "A", "b"))))
      case 7 => // ambiguous without case sensitivity
        T(attrs(fields.indexWhere(_.name == "dup")), IntegerType, ok = caseSensitive, () => PredicateGen.value(IntegerType, r))
      case _ => goodTerm()
    }

    def lit(t: T): Literal = if (r.nextInt(12) == 0) Literal(null, t.dt) else Literal(t.values(), t.dt)

    def leaf(): G = {
      val t = term()
      r.nextInt(14) match {
        case 0 | 1 | 2 =>
          val l = lit(t)
          val (a, b) = if (r.nextBoolean()) (t.e, l) else (l, t.e)
          G(pick(r, Seq[(Expression, Expression) => Expression](EqualTo(_, _), EqualNullSafe(_, _), LessThan(_, _),
            LessThanOrEqual(_, _), GreaterThan(_, _), GreaterThanOrEqual(_, _)))(a, b), t.ok)
        case 3 => G(EqualTo(t.e, t.e), ok = false) // no literal side
        case 4 | 5 =>
          val items = Seq.fill(1 + r.nextInt(4))(lit(t))
          if (r.nextBoolean()) G(expressions.In(t.e, items), t.ok)
          else G(InSet(t.e, items.map(_.value).toSet), t.ok)
        case 6 => G(expressions.In(t.e, Seq(lit(t), t.e)), ok = false) // a non-literal in the list
        case 7 => G(expressions.IsNull(t.e), t.ok && !t.dateToTs)
        case 8 => G(expressions.IsNotNull(t.e), t.ok && !t.dateToTs)
        case 9 | 10 if t.dt.isInstanceOf[StringType] =>
          val pattern = if (r.nextInt(10) == 0) Literal(null, t.dt)
            else {
              val b = t.values().asInstanceOf[UTF8String].getBytes
              Literal(UTF8String.fromBytes(b.take(r.nextInt(b.length + 1))), t.dt)
            }
          val stringOk = t.ok && t.dt == StringType
          G(pick(r, Seq[(Expression, Expression) => Expression](expressions.StartsWith(_, _), expressions.EndsWith(_, _),
            expressions.Contains(_, _)))(t.e, pattern), stringOk)
        case 11 if types.contains(BooleanType) => G(attrs(types.indexOf(BooleanType)), ok = true)
        case 12 => G(pick(r, Seq(Literal(true), Literal(false), Literal(null, BooleanType))), ok = true)
        case 13 => G(LessThan(Rand(Literal(r.nextLong())), Literal(0.5)), ok = false)
        case _ if types.contains(StringType) =>
          G(Like(attrs(types.indexOf(StringType)), Literal(UTF8String.fromString("a%b")), '\\'), ok = false)
        case _ => leaf()
      }
    }

    def filter(depth: Int): G =
      if (depth == 0 || r.nextInt(3) == 0) leaf()
      else r.nextInt(5) match {
        case 0 | 1 => val (a, b) = (filter(depth - 1), filter(depth - 1)); G(expressions.And(a.e, b.e), a.ok && b.ok)
        case 2 | 3 => val (a, b) = (filter(depth - 1), filter(depth - 1)); G(expressions.Or(a.e, b.e), a.ok && b.ok)
        case _ => val a = filter(depth - 1); G(expressions.Not(a.e), a.ok)
      }

    /** A filter that is not an AND at the top. */
    def conjunct(): G = r.nextInt(3) match {
      case 0 => val (a, b) = (filter(2), filter(2)); G(expressions.Or(a.e, b.e), a.ok && b.ok)
      case 1 => val a = filter(2); G(expressions.Not(a.e), a.ok)
      case _ => leaf()
    }
  }

  test("random filters: conjuncts translated exactly when supported, and translated ones pass exactly Catalyst's rows") {
    var translatedCount = 0
    var untranslatedCount = 0
    cases("translate", 3000) { r =>
      val w = new World(r)
      // Conjuncts (not ANDs themselves), grouped into random AND trees as the data filters.
      val conjuncts = Seq.fill(1 + r.nextInt(4))(w.conjunct())
      val filters = {
        var rest = conjuncts.map(_.e)
        val out = Seq.newBuilder[Expression]
        while (rest.nonEmpty) {
          val k = 1 + r.nextInt(rest.size)
          out += rest.take(k).reduceLeft(expressions.And(_, _))
          rest = rest.drop(k)
        }
        out.result()
      }
      val tr = CatalystTranslator.translate(filters, w.schema, w.caseSensitive)
      def ctx = s"filters ${filters.mkString(" ;; ")}\n  caseSensitive=${w.caseSensitive} tz=${w.tz}\n  " +
        s"translated ${tr.translated.mkString(" ;; ")}\n  untranslated ${tr.untranslated.mkString(" ;; ")}"
      assert(tr.translated == conjuncts.filter(_.ok).map(_.e), ctx)
      assert(tr.untranslated == conjuncts.filterNot(_.ok).map(_.e), ctx)
      translatedCount += tr.translated.size
      untranslatedCount += tr.untranslated.size

      val singles = tr.translated.map(c => c -> CatalystTranslator.translate(Seq(c), w.schema, w.caseSensitive).predicate)
      val bound = singles.map { case (c, p) => (c, BindReferences.bindReference(c, w.allAttrs), Evaluator.compile(p), p) }
      val all = Evaluator.compile(tr.predicate)
      val ids = new ScanColumns(w.schema)
      for (_ <- 0 until 30) {
        val row0 = w.rowValues()
        // Column ids past the requested columns are struct fields: their value is the field's.
        val values: Int => Any = i =>
          if (i < ids.requested) row0(i)
          else {
            val f = ids.structField(i)
            f.ordinals.foldLeft(row0(f.top)) { (v, o) => if (v == null) null else v.asInstanceOf[InternalRow].get(o, f.dataType) }
          }
        val row = new GenericInternalRow(row0)
        var allPass = true
        for ((c, e, f, p) <- bound) {
          val expected = PredicateGen.catalyst(e, row) == Kleene.T
          allPass &&= expected
          val got = f(values) == Kleene.T
          assert(got == expected, s"$c -> $p on ${row0.mkString("(", ", ", ")")}: Catalyst passes: $expected\n$ctx")
        }
        assert((all(values) == Kleene.T) == allPass, s"AND of translated on ${row0.mkString(", ")}\n$ctx")
      }
    }
    info(s"$translatedCount conjuncts translated, $untranslatedCount not")
  }
}

object CatalystTranslatorSuite {
  /** A generated filter part: its expression and whether every piece of it is supported. */
  final case class G(e: Expression, ok: Boolean)

  /** A generated term: its expression and type, whether it is supported, literals of its type, and
    * whether it is `CAST(date AS TIMESTAMP)` (supported only compared with timestamps). */
  final case class T(e: Expression, dt: DataType, ok: Boolean, values: () => Any, dateToTs: Boolean = false)
}
