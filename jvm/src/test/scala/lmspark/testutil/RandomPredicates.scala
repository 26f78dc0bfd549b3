package lmspark.testutil

import java.nio.charset.StandardCharsets
import java.time.{Instant, LocalDate, LocalDateTime, ZoneOffset}
import java.time.format.DateTimeFormatter
import java.util.Arrays

import scala.util.Random

import org.apache.spark.sql.types._

/** A column random predicates may filter on: its values in file order (nulls included, as Spark's
  * external Row values with the Java 8 datetime API) and the rows where its file's pages start. */
final case class FilterColumn(name: String, dataType: DataType, values: IndexedSeq[Any], pageStarts: IndexedSeq[Int]) {
  val nonNull: IndexedSeq[Any] = values.filter(_ != null)
  /** The name as a SQL identifier. */
  def sql: String = "`" + name.replace("`", "``") + "`"
  lazy val min: Any = nonNull.min(RandomPredicates.ordering)
  lazy val max: Any = nonNull.max(RandomPredicates.ordering)
}

/** A narrow predicate's SQL and the values `[lo, hi]` it selects; `equality`: `column = lo`, else
  * `column BETWEEN lo AND hi`. */
final case class Selective(sql: String, lo: Any, hi: Any, equality: Boolean)

/**
 * Seeded random SQL filter predicates over [[FilterColumn]]s, for differential tests: comparisons
 * (either side literal), `<=>`, BETWEEN, IN / NOT IN with and without NULL, IS [NOT] NULL, string
 * prefix / suffix / infix tests and LIKE 'x%', casts of the column (order-preserving ones that
 * pruning may use, others it must leave alone, and implicit coercions), combined with AND / OR /
 * NOT. Literals come from the data: values at page boundaries and their neighbours, the column's
 * min and max, random rows, values just beside them, and the special floating values.
 *
 * Only SQL text is produced, so a failing case can be printed and rerun as is. The same `Random`
 * gives the same predicates.
 */
final class RandomPredicates(columns: IndexedSeq[FilterColumn], r: Random) {
  import RandomPredicates._

  private val usable = columns.filter(c => supported(c.dataType))
  require(usable.nonEmpty, "no column of a supported type")

  /** A random predicate tree of at most `depth` levels of AND / OR / NOT; `focus` (if any) is the
    * column leaves read half of the time. */
  def predicate(depth: Int = 2, focus: Option[String] = None): String = {
    if (depth == 0 || r.nextInt(10) < 4) leaf(pickColumn(focus))
    else r.nextInt(10) match {
      case n if n < 4 => s"(${predicate(depth - 1, focus)} AND ${predicate(depth - 1, focus)})"
      case n if n < 8 => s"(${predicate(depth - 1, focus)} OR ${predicate(depth - 1, focus)})"
      case _ => s"NOT (${predicate(depth - 1, focus)})"
    }
  }

  private def pickColumn(focus: Option[String]): FilterColumn = focus.flatMap(f => usable.find(_.name == f)) match {
    case Some(c) if r.nextBoolean() => c
    case _ => usable(r.nextInt(usable.size))
  }

  /** A narrow predicate on `column` (sorted in the file): equality with a value, or a range over a
    * few neighbouring rows. None when the column has no non-null value. */
  def selective(column: String): Option[String] = selectiveRange(column).map(_.sql)

  /** [[selective]] with the values it selects: `[lo, hi]` (`lo == hi` for an equality). */
  def selectiveRange(column: String): Option[Selective] = {
    val c = usable.find(_.name == column).getOrElse(throw new IllegalArgumentException(s"no usable column $column"))
    val rows = c.values.indices.filter(i => c.values(i) != null && !isNaN(c.values(i)))
    if (rows.isEmpty) None
    else {
      val i = rows(rows.size / 4 + r.nextInt(rows.size / 2 + 1))
      val step = 1 + r.nextInt(20)
      val j = rows.find(_ >= i + step).getOrElse(i)
      val (lo, hi) = if (ordering.lteq(c.values(i), c.values(j))) (c.values(i), c.values(j)) else (c.values(j), c.values(i))
      Some(
        if (r.nextBoolean()) Selective(s"${c.sql} = ${literal(c.dataType, c.values(i))}", c.values(i), c.values(i), equality = true)
        else Selective(s"${c.sql} BETWEEN ${literal(c.dataType, lo)} AND ${literal(c.dataType, hi)}", lo, hi, equality = false))
    }
  }

  private val compareOps = IndexedSeq("=", "<", "<=", ">", ">=", "!=")
  private val flipped = Map("=" -> "=", "<" -> ">", "<=" -> ">=", ">" -> "<", ">=" -> "<=", "!=" -> "!=")

  def leaf(c: FilterColumn): String = {
    val n = c.sql
    val dt = c.dataType
    def lit = literal(dt, value(c))
    if (c.nonNull.isEmpty) return Seq(s"$n IS NULL", s"$n IS NOT NULL", s"$n <=> NULL", s"NOT ($n IS NULL)")(r.nextInt(4))
    if (dt == BooleanType) return Seq(n, s"NOT $n", s"$n = true", s"$n = false", s"$n <=> false", s"$n IS NULL",
      s"$n IS NOT NULL", s"$n IN (true, NULL)")(r.nextInt(8))
    r.nextInt(100) match {
      case k if k < 30 =>
        val op = compareOps(r.nextInt(compareOps.size))
        if (r.nextInt(5) == 0) s"$lit ${flipped(op)} $n" else s"$n $op $lit"
      case k if k < 36 => s"$n <=> ${if (r.nextInt(5) == 0) "NULL" else lit}"
      case k if k < 46 =>
        val (a, b) = (value(c), value(c))
        val (lo, hi) = if (r.nextInt(4) == 0 || ordering.lteq(a, b)) (a, b) else (b, a)
        s"$n BETWEEN ${literal(dt, lo)} AND ${literal(dt, hi)}"
      case k if k < 60 =>
        val vs = Seq.fill(1 + r.nextInt(5))(lit) ++ (if (r.nextInt(4) == 0) Seq("NULL") else Nil)
        s"$n ${if (r.nextInt(5) == 0) "NOT IN" else "IN"} (${r.shuffle(vs).mkString(", ")})"
      case k if k < 68 => if (r.nextBoolean()) s"$n IS NULL" else s"$n IS NOT NULL"
      case k if k < 82 && dt == StringType => stringLeaf(c)
      case _ => castLeaf(c)
    }
  }

  private def codePoints(s: String): IndexedSeq[String] =
    s.codePoints().toArray.toIndexedSeq.map(cp => new String(Character.toChars(cp)))

  private def stringLeaf(c: FilterColumn): String = {
    val s = codePoints(value(c).asInstanceOf[String])
    val k = if (s.isEmpty) 0 else r.nextInt(s.size + 1)
    val prefix = s.take(k).mkString
    val suffix = s.takeRight(k).mkString
    val infix = s.slice(k / 2, k / 2 + 2).mkString
    r.nextInt(5) match {
      case 0 => s"startswith(${c.sql}, ${quote(prefix)})"
      case 1 => s"endswith(${c.sql}, ${quote(suffix)})"
      case 2 => s"contains(${c.sql}, ${quote(infix)})"
      case 3 if !prefix.exists(ch => ch == '%' || ch == '_' || ch == '\\') => s"${c.sql} LIKE ${quote(prefix + "%")}"
      case _ => s"NOT startswith(${c.sql}, ${quote(prefix)})"
    }
  }

  /** A comparison of a cast (or implicitly coerced) column with a literal of the cast's type. */
  private def castLeaf(c: FilterColumn): String = {
    val n = c.sql
    val op = compareOps(r.nextInt(compareOps.size))
    val v = value(c)
    c.dataType match {
      case ByteType | ShortType | IntegerType | LongType =>
        val x = BigDecimal(v.toString)
        r.nextInt(6) match {
          case 0 => s"CAST($n AS BIGINT) $op ${x}L"
          case 1 => s"CAST($n AS DOUBLE) $op CAST('${x + BigDecimal("0.5")}' AS DOUBLE)"
          case 2 => s"CAST($n AS DECIMAL(22,2)) $op CAST('${x + BigDecimal("0.25")}' AS DECIMAL(22,2))"
          case 3 => s"$n $op ${x + BigDecimal("0.5")}" // a decimal literal: the column is coerced
          case 4 => s"$n $op ${x}L"
          case _ => s"CAST($n AS STRING) = '${x}'" // not order-preserving
        }
      case FloatType =>
        val f = v.asInstanceOf[Float]
        if (r.nextBoolean()) s"CAST($n AS DOUBLE) $op ${literal(DoubleType, f.toDouble)}"
        else s"$n $op ${literal(DoubleType, f.toDouble + (if (r.nextBoolean()) 0.0 else 1e-9))}"
      case DoubleType =>
        val d = v.asInstanceOf[Double]
        if (r.nextBoolean()) s"CAST($n AS FLOAT) $op ${literal(FloatType, d.toFloat)}"
        else s"$n $op ${literal(FloatType, d.toFloat)}"
      case t: DecimalType =>
        val bd = v.asInstanceOf[java.math.BigDecimal]
        r.nextInt(3) match {
          case 0 =>
            // Wider on both sides of the point, as far as 38 digits allow (never fewer integer digits).
            val wider = DecimalType(math.min(38, t.precision + 6), t.scale + math.max(0, math.min(2, 38 - t.precision)))
            s"CAST($n AS DECIMAL(${wider.precision},${wider.scale})) $op ${literal(wider, bd.setScale(wider.scale))}"
          case 1 => s"CAST($n AS DOUBLE) $op ${literal(DoubleType, bd.doubleValue())}"
          case _ => s"$n $op ${bd.toPlainString}BD"
        }
      case DateType =>
        val d = v.asInstanceOf[LocalDate]
        r.nextInt(3) match {
          case 0 => s"CAST($n AS TIMESTAMP) $op ${literal(TimestampType, d.atStartOfDay(ZoneOffset.UTC).toInstant.plusSeconds(r.nextInt(2) * 3600))}"
          case 1 => s"$n $op ${literal(TimestampType, d.atStartOfDay(ZoneOffset.UTC).toInstant)}"
          case _ => s"$n $op '${d}'"
        }
      case TimestampType =>
        val i = v.asInstanceOf[Instant]
        if (r.nextBoolean()) s"CAST($n AS DATE) $op ${literal(DateType, LocalDateTime.ofInstant(i, ZoneOffset.UTC).toLocalDate)}"
        else s"$n $op ${literal(DateType, LocalDateTime.ofInstant(i, ZoneOffset.UTC).toLocalDate)}"
      case TimestampNTZType =>
        val t = v.asInstanceOf[LocalDateTime]
        s"CAST($n AS DATE) $op ${literal(DateType, t.toLocalDate)}"
      case StringType =>
        val s = v.asInstanceOf[String]
        if (r.nextBoolean()) s"length($n) $op ${s.length}" else s"upper($n) $op ${quote(s.toUpperCase)}"
      case _ => s"$n $op ${literal(c.dataType, v)}"
    }
  }

  /** A value for a literal: mostly from the data (page boundaries, min / max, random rows), some
    * just beside it, some special. */
  def value(c: FilterColumn): Any = {
    require(c.nonNull.nonEmpty, s"${c.name} is all null")
    val base = r.nextInt(10) match {
      case k if k < 4 && c.pageStarts.nonEmpty =>
        val p = c.pageStarts(r.nextInt(c.pageStarts.size)) + r.nextInt(3) - 1
        val v = if (p >= 0 && p < c.values.size) c.values(p) else null
        if (v == null) c.nonNull(r.nextInt(c.nonNull.size)) else v
      case k if k < 6 => if (r.nextBoolean()) c.min else c.max
      case _ => c.nonNull(r.nextInt(c.nonNull.size))
    }
    r.nextInt(10) match {
      case k if k < 3 => beside(c.dataType, base)
      case 3 => special(c.dataType).getOrElse(base)
      case _ => base
    }
  }

  private def special(dt: DataType): Option[Any] = dt match {
    case DoubleType => Some(Seq(Double.NaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity)(r.nextInt(5)))
    case FloatType => Some(Seq(Float.NaN, -0.0f, 0.0f, Float.PositiveInfinity, Float.NegativeInfinity)(r.nextInt(5)))
    case StringType => Some(Seq("", "a", "é", "\uFFFD", "zzzz")(r.nextInt(5)))
    case IntegerType => Some(Seq(Int.MinValue, Int.MaxValue, 0)(r.nextInt(3)))
    case LongType => Some(Seq(Long.MinValue, Long.MaxValue, 0L)(r.nextInt(3)))
    case _ => None
  }

  /** A value next to `v` in the column type's order (or `v` when there is none in range). */
  private def beside(dt: DataType, v: Any): Any = {
    val up = r.nextBoolean()
    (dt, v) match {
      case (ByteType, b: Byte) => if (up && b < Byte.MaxValue) (b + 1).toByte else if (!up && b > Byte.MinValue) (b - 1).toByte else b
      case (ShortType, s: Short) => if (up && s < Short.MaxValue) (s + 1).toShort else if (!up && s > Short.MinValue) (s - 1).toShort else s
      case (IntegerType, i: Int) => if (up && i < Int.MaxValue) i + 1 else if (!up && i > Int.MinValue) i - 1 else i
      case (LongType, l: Long) => if (up && l < Long.MaxValue) l + 1 else if (!up && l > Long.MinValue) l - 1 else l
      case (FloatType, f: Float) => r.nextInt(3) match {
        case 0 => if (up) Math.nextUp(f) else Math.nextDown(f)
        case 1 => f + (if (up) 0.5f else -0.5f)
        case _ => -f
      }
      case (DoubleType, d: Double) => r.nextInt(3) match {
        case 0 => if (up) Math.nextUp(d) else Math.nextDown(d)
        case 1 => d + (if (up) 0.5 else -0.5)
        case _ => -d
      }
      case (t: DecimalType, bd: java.math.BigDecimal) =>
        val ulp = java.math.BigDecimal.ONE.movePointLeft(t.scale)
        val next = if (up) bd.add(ulp) else bd.subtract(ulp)
        if (next.precision - next.scale > t.precision - t.scale) bd else next
      case (StringType, s: String) =>
        val cps = codePoints(s)
        r.nextInt(3) match {
          case 0 => s + "a"
          case 1 => cps.dropRight(1).mkString
          case _ => s + "\u00e9"
        }
      case (BinaryType, b: Array[Byte]) => if (up) b :+ 0.toByte else b.dropRight(1)
      case (DateType, d: LocalDate) => d.plusDays(if (up) 1 else -1)
      case (TimestampType, i: Instant) => i.plusNanos(if (up) 1000 else -1000)
      case (TimestampNTZType, t: LocalDateTime) => t.plusNanos(if (up) 1000 else -1000)
      case _ => v
    }
  }
}

object RandomPredicates {

  def supported(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | StringType | BinaryType |
         DateType | TimestampType | TimestampNTZType | BooleanType => true
    case _: DecimalType => true
    case _ => false
  }

  def isNaN(v: Any): Boolean = v match {
    case d: Double => d.isNaN
    case f: Float => f.isNaN
    case _ => false
  }

  /** Spark's order on non-null external values of one type (NaN greatest; strings and binary by
    * unsigned bytes). -0.0 sorts before 0.0 here, which only matters for picking literals. */
  val ordering: Ordering[Any] = new Ordering[Any] {
    def compare(a: Any, b: Any): Int = (a, b) match {
      case (x: Double, y: Double) => java.lang.Double.compare(x, y)
      case (x: Float, y: Float) => java.lang.Float.compare(x, y)
      case (x: String, y: String) =>
        Arrays.compareUnsigned(x.getBytes(StandardCharsets.UTF_8), y.getBytes(StandardCharsets.UTF_8))
      case (x: Array[Byte], y: Array[Byte]) => Arrays.compareUnsigned(x, y)
      case (x: Comparable[_], y) => x.asInstanceOf[Comparable[Any]].compareTo(y)
      case _ => throw new IllegalArgumentException(s"cannot compare $a and $b")
    }
  }

  def quote(s: String): String = "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"

  private val timestampFormat = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS")

  private def microsToLocal(micros: Long): LocalDateTime = LocalDateTime.ofEpochSecond(
    Math.floorDiv(micros, 1000000L), (Math.floorMod(micros, 1000000L) * 1000L).toInt, ZoneOffset.UTC)

  /** The range of timestamps Spark holds (microseconds since the epoch in a long). */
  private val (firstTimestamp, lastTimestamp) = (microsToLocal(Long.MinValue), microsToLocal(Long.MaxValue))

  /** `t`, or the nearest timestamp Spark holds when `t` lies outside them (a literal picked beside a
    * column's extreme value may): Spark's parser rejects such a literal. The literal is then another
    * value, which the case's reference evaluates as well: a random predicate either way. */
  private def parseable(t: LocalDateTime): LocalDateTime =
    if (t.isBefore(firstTimestamp)) firstTimestamp else if (t.isAfter(lastTimestamp)) lastTimestamp else t

  /** A SQL literal of type `dt` for the external value `v` (NULL for null). */
  def literal(dt: DataType, v: Any): String = (dt, v) match {
    case (_, null) => "NULL"
    case (ByteType, b) => s"CAST($b AS TINYINT)"
    case (ShortType, s) => s"CAST($s AS SMALLINT)"
    case (IntegerType, i) => s"$i"
    case (LongType, l) => s"${l}L"
    case (FloatType, f: Float) => s"CAST('${floating(f.toString, f.isNaN, f.isInfinite, f > 0)}' AS FLOAT)"
    case (DoubleType, d: Double) => s"CAST('${floating(d.toString, d.isNaN, d.isInfinite, d > 0)}' AS DOUBLE)"
    case (t: DecimalType, bd: java.math.BigDecimal) => s"CAST('${bd.toPlainString}' AS DECIMAL(${t.precision},${t.scale}))"
    case (StringType, s: String) => quote(s)
    case (BinaryType, b: Array[Byte]) => b.map("%02X".format(_)).mkString("X'", "", "'")
    case (DateType, d: LocalDate) => s"DATE'$d'"
    case (TimestampType, i: Instant) => s"TIMESTAMP'${timestampFormat.format(parseable(LocalDateTime.ofInstant(i, ZoneOffset.UTC)))}'"
    case (TimestampNTZType, t: LocalDateTime) => s"TIMESTAMP_NTZ'${timestampFormat.format(parseable(t))}'"
    case (BooleanType, b) => s"$b"
    case _ => throw new IllegalArgumentException(s"no literal for $v of $dt")
  }

  private def floating(text: String, nan: Boolean, inf: Boolean, positive: Boolean): String =
    if (nan) "NaN" else if (inf) (if (positive) "Infinity" else "-Infinity") else text
}
