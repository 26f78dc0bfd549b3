package lmspark.predicate

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Cast, Expression, GenericInternalRow, Literal}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import lmspark.predicate.Predicate._

/** Seeded random material for the predicate suites: Catalyst values of every supported type (with
  * the awkward ones: NaN, -0.0, infinities, extremes, empty / non-ASCII / prefix-sharing strings,
  * bytes >= 0x80), schemas, rows with NULLs, predicate trees with casts, their Catalyst form (the
  * oracle), and statistics of rows (exact, NaN-including, widened, truncated, missing). */
object PredicateGen {

  val DecimalTypes: Seq[DecimalType] =
    Seq(DecimalType(3, 0), DecimalType(5, 2), DecimalType(10, 0), DecimalType(12, 4), DecimalType(18, 2),
      DecimalType(25, 5), DecimalType(38, 10))

  val ColumnTypes: IndexedSeq[DataType] = IndexedSeq(BooleanType, ByteType, ShortType, IntegerType, LongType,
    FloatType, DoubleType, StringType, BinaryType, DateType, TimestampType, TimestampNTZType) ++ DecimalTypes

  /** Cast targets tried for terms (filtered by [[Values.isTermCast]]). */
  val CastTargets: Seq[DataType] = Seq(ShortType, IntegerType, LongType, FloatType, DoubleType, DecimalType(5, 0),
    DecimalType(10, 0), DecimalType(12, 2), DecimalType(20, 0), DecimalType(22, 3), DecimalType(30, 12),
    DecimalType(38, 0), DecimalType(38, 10), TimestampNTZType)

  private def pick[T](r: Random, xs: Seq[T]): T = xs(r.nextInt(xs.size))

  private val StringPieces = IndexedSeq("", "a", "ab", "abc", "abd", "b", "ba", "é", "éa", "日本", "日", "\u007f",
    "\u0080", "zz", "A", "😀", "a\u0000", "ÿ")
  private val Chars = IndexedSeq("a", "b", "é", "日", "😀", "\u0000", "z")
  private val BytePieces = IndexedSeq[Byte](0, 1, 0x7f, -128, -1, 0x41)

  private val Day = 86400L * 1000000L

  /** A non-null Catalyst value of `dt`, biased towards special and colliding values. */
  def value(dt: DataType, r: Random): Any = dt match {
    case BooleanType => r.nextBoolean()
    case ByteType => if (r.nextInt(6) == 0) pick(r, Seq(Byte.MinValue, Byte.MaxValue, 0.toByte)) else (r.nextInt(11) - 5).toByte
    case ShortType => if (r.nextInt(6) == 0) pick(r, Seq(Short.MinValue, Short.MaxValue, 0.toShort)) else (r.nextInt(11) - 5).toShort
    case IntegerType =>
      if (r.nextInt(6) == 0) pick(r, Seq(Int.MinValue, Int.MaxValue, 0, 16777217, -16777217)) else r.nextInt(11) - 5
    case LongType =>
      if (r.nextInt(5) == 0) pick(r, Seq(Long.MinValue, Long.MaxValue, 0L, (1L << 53) + 1, 1L << 53, (1L << 53) - 1,
        Long.MaxValue - 1, 16777217L))
      else (r.nextInt(11) - 5).toLong
    case FloatType =>
      if (r.nextInt(3) == 0) pick(r, Seq(Float.NaN, -0.0f, 0.0f, Float.PositiveInfinity, Float.NegativeInfinity,
        Float.MinPositiveValue, Float.MaxValue, -Float.MaxValue, 1.5f, -1.5f))
      else (r.nextInt(11) - 5) / 2.0f
    case DoubleType =>
      if (r.nextInt(3) == 0) pick(r, Seq(Double.NaN, -0.0d, 0.0d, Double.PositiveInfinity, Double.NegativeInfinity,
        Double.MinPositiveValue, Double.MaxValue, -Double.MaxValue, 1.5d, -1.5d, 9.007199254740993e15))
      else (r.nextInt(11) - 5) / 2.0d
    case d: DecimalType =>
      val maxUnscaled = BigInt(10).pow(d.precision) - 1
      val unscaled =
        if (r.nextInt(6) == 0) pick(r, Seq(maxUnscaled, -maxUnscaled, BigInt(0)))
        else BigInt(r.nextInt(21) - 10) * BigInt(10).pow(r.nextInt(d.scale + 1)) min maxUnscaled max -maxUnscaled
      org.apache.spark.sql.types.Decimal(BigDecimal(unscaled, d.scale), d.precision, d.scale)
    case StringType =>
      val s =
        if (r.nextInt(3) > 0) pick(r, StringPieces)
        else (0 until r.nextInt(4)).map(_ => pick(r, Chars)).mkString
      UTF8String.fromString(s)
    case BinaryType => Array.fill[Byte](r.nextInt(4))(pick(r, BytePieces))
    case DateType =>
      if (r.nextInt(6) == 0) pick(r, Seq(-719162, 2932896, 0, -1)) else 18000 + r.nextInt(7) - 3
    case TimestampType | TimestampNTZType =>
      if (r.nextInt(6) == 0) pick(r, Seq(-62135596800000000L, 253402300799999999L, 0L, -1L))
      else (18000L + r.nextInt(7) - 3) * Day + pick(r, Seq(0L, 0L, 1L, -1L, 3600L * 1000000L, Day / 2))
    case other => throw new IllegalArgumentException(s"no generator for $other")
  }

  /** A few values of `dt` that data and literals share (so predicates hit data). */
  def pool(dt: DataType, r: Random): IndexedSeq[Any] = IndexedSeq.fill(2 + r.nextInt(5))(value(dt, r))

  /** A column's values for `n` rows: NULLs with a column-specific rate (sometimes all NULL). */
  def columnValues(dt: DataType, pool: IndexedSeq[Any], n: Int, r: Random): Array[Any] = {
    val nullRate = pick(r, Seq(0.0, 0.0, 0.1, 0.3, 1.0))
    Array.fill[Any](n)(
      if (r.nextDouble() < nullRate) null
      else if (r.nextInt(5) > 0) pick(r, pool)
      else value(dt, r))
  }

  final case class Schema(columns: IndexedSeq[ColumnRef], pools: IndexedSeq[IndexedSeq[Any]])

  def schema(r: Random, maxColumns: Int = 3): Schema = {
    val cols = (0 until 1 + r.nextInt(maxColumns)).map(i => ColumnRef(i, s"c$i", pick(r, ColumnTypes)))
    Schema(cols, cols.map(c => pool(c.dataType, r)))
  }

  /** Rows (column-major: `values(column)(row)`). */
  def data(s: Schema, n: Int, r: Random): IndexedSeq[Array[Any]] =
    s.columns.map(c => columnValues(c.dataType, s.pools(c.index), n, r))

  /** A term on column `c`: the column, or a chain of up to two order-preserving casts. */
  def term(c: ColumnRef, r: Random): Term = {
    var t = Term(c)
    var k = if (r.nextInt(3) == 0) 1 + r.nextInt(2) else 0
    while (k > 0) {
      val targets = CastTargets.filter(Values.isTermCast(t.dataType, _))
      if (targets.isEmpty) k = 0
      else { t = t.copy(casts = t.casts :+ pick(r, targets)); k -= 1 }
    }
    t
  }

  /** A literal for term `t`: a pool value through the term's casts, or a fresh value. */
  def literal(t: Term, pool: IndexedSeq[Any], r: Random): Any =
    if (r.nextInt(4) > 0) Values.termCaster(t)(pick(r, pool)) else value(t.dataType, r)

  def leaf(s: Schema, r: Random): Leaf = {
    val c = pick(r, s.columns)
    val t = term(c, r)
    val pool = s.pools(c.index)
    val isString = Values.isString(t.dataType)
    r.nextInt(if (isString) 9 else 6) match {
      case 0 | 1 => Compare(t, pick(r, Seq(CompareOp.Eq, CompareOp.NullSafeEq, CompareOp.Lt, CompareOp.Le,
        CompareOp.Gt, CompareOp.Ge)), literal(t, pool, r))
      case 2 | 3 =>
        val ord = Values.ordering(t.dataType)
        val vs = Seq.fill(1 + r.nextInt(4))(literal(t, pool, r))
          .foldLeft(Vector.empty[Any])((acc, x) => if (acc.exists(ord.equiv(_, x))) acc else acc :+ x)
        In(t, vs, r.nextInt(4) == 0)
      case 4 => IsNull(t)
      case 5 => IsNotNull(t)
      case k =>
        val base = literal(t, pool, r).asInstanceOf[UTF8String]
        val bytes = base.getBytes
        val pattern = r.nextInt(3) match {
          case 0 => UTF8String.fromBytes(bytes.take(r.nextInt(bytes.length + 1)))
          case 1 => UTF8String.fromBytes(bytes.drop(r.nextInt(bytes.length + 1)))
          case _ => base
        }
        k match {
          case 6 => StartsWith(t, pattern)
          case 7 => EndsWith(t, pattern)
          case _ => Contains(t, pattern)
        }
    }
  }

  def predicate(s: Schema, r: Random, depth: Int = 3): Predicate =
    if (depth == 0 || r.nextInt(3) == 0) {
      if (r.nextInt(25) == 0) pick(r, Seq(True, False)) else leaf(s, r)
    } else r.nextInt(5) match {
      case 0 | 1 => And(Seq.fill(2 + r.nextInt(2))(predicate(s, r, depth - 1)))
      case 2 | 3 => Or(Seq.fill(2 + r.nextInt(2))(predicate(s, r, depth - 1)))
      case _ => Not(predicate(s, r, depth - 1))
    }

  // ---- Catalyst form: the oracle ----

  def termExpr(t: Term): Expression =
    t.casts.foldLeft(BoundReference(t.column.index, t.column.dataType, nullable = true): Expression)(
      (e, dt) => Cast(e, dt, None))

  /** `p` as a Catalyst expression over `BoundReference`s; IN becomes `In` or (`useInSet`) `InSet`. */
  def toCatalyst(p: Predicate, useInSet: Boolean = false): Expression = p match {
    case True => Literal(true)
    case False => Literal(false)
    case Compare(t, op, v) =>
      val l = termExpr(t)
      val rt = Literal(v, t.dataType)
      op match {
        case CompareOp.Eq => expressions.EqualTo(l, rt)
        case CompareOp.NullSafeEq => expressions.EqualNullSafe(l, rt)
        case CompareOp.Lt => expressions.LessThan(l, rt)
        case CompareOp.Le => expressions.LessThanOrEqual(l, rt)
        case CompareOp.Gt => expressions.GreaterThan(l, rt)
        case CompareOp.Ge => expressions.GreaterThanOrEqual(l, rt)
      }
    case In(t, vs, hasNull) =>
      if (useInSet) expressions.InSet(termExpr(t), (vs ++ (if (hasNull) Seq(null) else Nil)).toSet)
      else expressions.In(termExpr(t), vs.map(Literal(_, t.dataType)) ++ (if (hasNull) Seq(Literal(null, t.dataType)) else Nil))
    case IsNull(t) => expressions.IsNull(termExpr(t))
    case IsNotNull(t) => expressions.IsNotNull(termExpr(t))
    case StartsWith(t, s) => expressions.StartsWith(termExpr(t), Literal(s, StringType))
    case EndsWith(t, s) => expressions.EndsWith(termExpr(t), Literal(s, StringType))
    case Contains(t, s) => expressions.Contains(termExpr(t), Literal(s, StringType))
    case And(cs) => cs.map(toCatalyst(_, useInSet)).reduceLeft(expressions.And(_, _))
    case Or(cs) => cs.map(toCatalyst(_, useInSet)).reduceLeft(expressions.Or(_, _))
    case Not(c) => expressions.Not(toCatalyst(c, useInSet))
  }

  /** Catalyst's three-valued result of `e` on a row. */
  def catalyst(e: Expression, row: InternalRow): Int = e.eval(row) match {
    case null => Kleene.N
    case true => Kleene.T
    case false => Kleene.F
    case other => throw new IllegalStateException(s"predicate gave $other")
  }

  def row(data: IndexedSeq[Array[Any]], i: Int): GenericInternalRow = new GenericInternalRow(data.map(_(i)).toArray)

  // ---- statistics of rows ----

  /** How statistics of some rows are written. */
  sealed trait StatsStyle
  object StatsStyle {
    /** Exact bounds over non-NaN values; `mayHaveNaN` exactly when a NaN is present. */
    case object Exact extends StatsStyle
    /** Exact bounds, `mayHaveNaN` always set for floating types. */
    case object ExactMaybeNaN extends StatsStyle
    /** Bounds over all values in Spark's order (NaN greatest, so it may be the max); no NaN flag. */
    case object NaNInBounds extends StatsStyle
    /** Bounds loosened (random values beyond them, truncated strings / binary), not exact. */
    case object Widened extends StatsStyle
    /** No bounds; null count maybe unknown. */
    case object NoBounds extends StatsStyle
    /** Exact bounds, null count unknown. */
    case object NoNullCount extends StatsStyle
    val All: IndexedSeq[StatsStyle] = IndexedSeq(Exact, ExactMaybeNaN, NaNInBounds, Widened, NoBounds, NoNullCount)
  }

  def stats(dt: DataType, values: Seq[Any], style: StatsStyle, r: Random): ColumnStats = {
    import StatsStyle._
    val ord = Values.ordering(dt)
    val nonNull = values.filter(_ != null)
    val nulls = values.size - nonNull.size
    val hasNaN = nonNull.exists(Values.isNaN)
    val floating = Values.isFloating(dt)
    val bounded = if (style == NaNInBounds) nonNull else nonNull.filterNot(Values.isNaN)
    val min = if (bounded.isEmpty) None else Some(bounded.min(ord))
    val max = if (bounded.isEmpty) None else Some(bounded.max(ord))
    val exact = ColumnStats(min, max, Some(nulls.toLong), values.size.toLong, minExact = min.isDefined,
      maxExact = max.isDefined, mayHaveNaN = hasNaN && style != NaNInBounds)
    style match {
      case Exact | NaNInBounds => exact
      case ExactMaybeNaN => exact.copy(mayHaveNaN = floating)
      case NoNullCount => exact.copy(nullCount = None)
      case NoBounds => exact.copy(min = None, max = None, minExact = false, maxExact = false,
        nullCount = if (r.nextBoolean()) None else exact.nullCount, mayHaveNaN = floating)
      case Widened =>
        def lower(v: Any): Any = {
          val cand = v match {
            case s: UTF8String => UTF8String.fromBytes(s.getBytes.take(r.nextInt(s.numBytes + 1)))
            case b: Array[Byte] => b.take(r.nextInt(b.length + 1))
            case _ => value(dt, r)
          }
          if (ord.lteq(cand, v)) cand else v
        }
        def upper(v: Any): Any = {
          val cand = v match {
            case s: UTF8String => UTF8String.fromBytes(increment(s.getBytes.take(1 + r.nextInt(s.numBytes + 1))))
            case b: Array[Byte] => increment(b.take(1 + r.nextInt(b.length + 1)))
            case _ => value(dt, r)
          }
          if (cand != null && ord.gteq(cand, v)) cand else v
        }
        exact.copy(min = min.map(lower), max = max.map(upper), minExact = false, maxExact = false,
          mayHaveNaN = floating && (hasNaN || r.nextBoolean()))
    }
  }

  /** The least byte string greater than every string starting with `b` (parquet-java's truncated
    * max), or `b` itself when there is none (all 0xFF, or empty). */
  private def increment(b: Array[Byte]): Array[Byte] = {
    var i = b.length - 1
    while (i >= 0 && b(i) == -1) i -= 1
    if (i < 0) b
    else { val out = b.take(i + 1); out(i) = (out(i) + 1).toByte; out }
  }

  def styleFor(r: Random): StatsStyle = pick(r, StatsStyle.All)
}
