package lmspark.predicate

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Cast, Literal}
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.types._

/** Catalyst values of the types predicates support: which types those are, Spark's ordering for
  * each, NaN, the order-preserving casts a [[Term]] may apply (and their evaluation, by Catalyst's
  * own `Cast`), and the EXPLAIN form of a value.
  *
  * Supported types: BOOLEAN, the integral types, FLOAT, DOUBLE, DECIMAL, STRING with the default
  * UTF8_BINARY collation (not CHAR / VARCHAR), BINARY, DATE, TIMESTAMP, TIMESTAMP_NTZ. */
object Values {

  /** Whether predicates may read a term of type `dt`. */
  def supported(dt: DataType): Boolean = dt match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType => true
    case _: DecimalType => true
    case st: StringType => binaryString(st)
    case BinaryType | DateType | TimestampType | TimestampNTZType => true
    case _ => false
  }

  /** A plain STRING compared as UTF-8 bytes (no collation, no CHAR/VARCHAR padding rules). */
  def binaryString(st: StringType): Boolean =
    st == StringType && !st.isInstanceOf[CharType] && !st.isInstanceOf[VarcharType]

  def isString(dt: DataType): Boolean = dt match {
    case st: StringType => binaryString(st)
    case _ => false
  }

  def isFloating(dt: DataType): Boolean = dt == FloatType || dt == DoubleType

  /** Spark's ordering for a supported type (NaN greatest, -0.0 == 0.0, unsigned bytes). */
  def ordering(dt: DataType): Ordering[Any] = TypeUtils.getInterpretedOrdering(dt)

  def isNaN(v: Any): Boolean = v match {
    case d: Double => java.lang.Double.isNaN(d)
    case f: Float => java.lang.Float.isNaN(f)
    case _ => false
  }

  /** NaN of a floating type. */
  def nan(dt: DataType): Any = if (dt == FloatType) Float.NaN else Double.NaN

  private def integralDigits(dt: DataType): Int = dt match {
    case ByteType => 3
    case ShortType => 5
    case IntegerType => 10
    case LongType => 20
    case _ => Int.MaxValue
  }

  private def integralRank(dt: DataType): Int = dt match {
    case ByteType => 1
    case ShortType => 2
    case IntegerType => 3
    case LongType => 4
    case _ => 0
  }

  /** Whether `CAST(x AS to)` for `x` of type `from` is a term cast: total (never NULL, never an
    * error, in any eval mode, for any non-null input), independent of the session time zone, and
    * monotone non-decreasing in Spark's orderings (so `cast(min) <= cast(x) <= cast(max)`):
    * integral widening, integral to FLOAT / DOUBLE (rounding is monotone), integral to a DECIMAL
    * with room for every value, FLOAT to DOUBLE, DECIMAL widening (no rounding, no overflow),
    * DATE to TIMESTAMP_NTZ. Nothing else (no string casts, narrowing, time-zone dependent casts). */
  def isTermCast(from: DataType, to: DataType): Boolean = (from, to) match {
    case (f, t) if integralRank(f) > 0 && integralRank(t) > 0 => integralRank(f) < integralRank(t)
    case (f, FloatType | DoubleType) if integralRank(f) > 0 => true
    case (f, d: DecimalType) if integralRank(f) > 0 => d.precision - d.scale >= integralDigits(f)
    case (FloatType, DoubleType) => true
    case (a: DecimalType, b: DecimalType) =>
      b.scale >= a.scale && b.precision - b.scale >= a.precision - a.scale
    case (DateType, TimestampNTZType) => true
    case _ => false
  }

  /** `CAST(_ AS to)` of a `from` value (a term cast) by Catalyst's `Cast`; NULL stays NULL. Not
    * thread-safe (one mutable input row per caster). */
  def caster(from: DataType, to: DataType): Any => Any = {
    require(isTermCast(from, to), s"not an order-preserving cast: $from -> $to")
    val cast = Cast(BoundReference(0, from, nullable = true), to, None)
    val row = new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(1)
    (v: Any) => if (v == null) null else { row.update(0, v); cast.eval(row: InternalRow) }
  }

  /** The term's casts as one function from a column value to the term's value. */
  def termCaster(term: Term): Any => Any = {
    var dt = term.column.dataType
    var f: Any => Any = identity
    term.casts.foreach { to =>
      val c = caster(dt, to)
      val g = f
      f = v => c(g(v))
      dt = to
    }
    f
  }

  /** A value in a form readable in EXPLAIN: strings quoted, dates and timestamps formatted. */
  def show(v: Any, dt: DataType): String = v match {
    case null => "NULL"
    case _ if isString(dt) => quote(v.toString)
    case b: Array[Byte] => b.map(x => f"${x & 0xff}%02X").mkString("X'", "", "'")
    case _ => Literal(v, dt).toString
  }

  def quote(s: String): String = "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"
}
