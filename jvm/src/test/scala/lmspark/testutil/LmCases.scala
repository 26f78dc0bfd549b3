package lmspark.testutil

import scala.util.Random

import org.apache.spark.sql.types._

/** What a case selects: some of the file's columns (in file order), or `count(*)`. */
sealed trait Projection {
  /** The SELECT list of the query alone. */
  def sql: String
}
object Projection {
  final case class Columns(columns: IndexedSeq[FilterColumn]) extends Projection {
    require(columns.nonEmpty)
    def sql: String = columns.map(_.sql).mkString(", ")
  }
  case object CountStar extends Projection {
    def sql: String = "count(*)"
  }
}

/** One differential case: a filter over 1-3 columns (`filtered`) and a projection of a file. */
final case class LmCase(number: Int, where: String, filtered: IndexedSeq[String], projection: Projection) {
  /** The query alone, against `source` (a table name or parquet.`path`). */
  def sql(source: String): String = s"SELECT ${projection.sql} FROM $source WHERE $where"
}

/**
 * Seeded random cases for the late-materialization differential suite: a predicate over 1-3 columns of a
 * file (the leaves of [[RandomPredicates]]: comparisons, =, <=>, BETWEEN, IN / NOT IN with and without NULL,
 * IS [NOT] NULL, casts, prefix / suffix / infix tests; plus LIKE 'x%' / '%x' / '%x%', selective point
 * predicates, unselective ones that every non-null row passes, comparisons of two columns, and
 * expressions lmspark cannot translate (arithmetic, functions), nested in AND / OR / NOT) and a
 * projection (every column, a subset, only columns that are not filtered, one column, `count(*)`).
 *
 * Only SQL text is produced. The case is a function of `(columns, caseSeed)` alone, so a case can be
 * rebuilt by its number.
 */
object LmCases {

  def generate(number: Int, columns: IndexedSeq[FilterColumn], caseSeed: Long): LmCase = {
    val r = new Random(caseSeed)
    val usable = columns.filter(c => RandomPredicates.supported(c.dataType))
    val k = math.min(usable.size, Seq(1, 1, 2, 2, 3)(r.nextInt(5)))
    val filtered = r.shuffle(usable).take(k)
    val gen = new Gen(filtered, r)
    val where = r.nextInt(10) match {
      case 0 if filtered.size >= 2 => s"(${gen.leaf(filtered(0))} OR ${gen.leaf(filtered(1))})"
      case _ => gen.tree(r.nextInt(4))
    }
    LmCase(number, where, filtered.map(_.name), projection(columns, filtered, r))
  }

  private def projection(columns: IndexedSeq[FilterColumn], filtered: IndexedSeq[FilterColumn], r: Random): Projection = {
    def inFileOrder(cs: Seq[FilterColumn]): Projection.Columns =
      Projection.Columns(columns.filter(c => cs.exists(_.name == c.name)))
    val others = columns.filterNot(c => filtered.exists(_.name == c.name))
    r.nextInt(100) match {
      case k if k < 20 => Projection.Columns(columns)
      case k if k < 35 => Projection.CountStar
      case k if k < 60 && others.nonEmpty => inFileOrder(r.shuffle(others).take(1 + r.nextInt(others.size)))
      case k if k < 85 =>
        inFileOrder(r.shuffle(filtered).take(1 + r.nextInt(filtered.size)) ++ r.shuffle(others).take(r.nextInt(others.size + 1)))
      case _ => Projection.Columns(IndexedSeq(columns(r.nextInt(columns.size))))
    }
  }

  private def numeric(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | _: DecimalType => true
    case _ => false
  }

  /** Leaves and trees over `filtered` (non-empty). */
  private final class Gen(filtered: IndexedSeq[FilterColumn], r: Random) {
    private val base = new RandomPredicates(filtered, r)

    def tree(depth: Int): String =
      if (depth == 0 || r.nextInt(10) < 3) leaf(filtered(r.nextInt(filtered.size)))
      else r.nextInt(10) match {
        case n if n < 4 => s"(${tree(depth - 1)} AND ${tree(depth - 1)})"
        case n if n < 8 => s"(${tree(depth - 1)} OR ${tree(depth - 1)})"
        case _ => s"NOT (${tree(depth - 1)})"
      }

    def leaf(c: FilterColumn): String = {
      if (c.nonNull.isEmpty) return base.leaf(c)
      r.nextInt(100) match {
        case k if k < 50 => base.leaf(c)
        case k if k < 58 && c.dataType == StringType => like(c)
        case k if k < 68 => untranslatable(c)
        case k if k < 76 => unselective(c)
        case k if k < 88 => point(c)
        case k if k < 94 && filtered.size >= 2 => twoColumns(c, filtered.filterNot(_ eq c)(r.nextInt(filtered.size - 1)))
        case _ => base.leaf(c)
      }
    }

    private def lit(c: FilterColumn): String = RandomPredicates.literal(c.dataType, base.value(c))

    private def like(c: FilterColumn): String = {
      val s = base.value(c).asInstanceOf[String]
      val cps = s.codePoints().toArray.toIndexedSeq.map(cp => new String(Character.toChars(cp)))
        .filterNot(ch => ch == "%" || ch == "_" || ch == "\\")
      val k = if (cps.isEmpty) 0 else r.nextInt(math.min(cps.size, 3) + 1)
      val start = if (cps.isEmpty) 0 else r.nextInt(cps.size)
      val part = cps.slice(start, start + k).mkString
      val pattern = r.nextInt(3) match {
        case 0 => s"$part%"
        case 1 => s"%$part"
        case _ => s"%$part%"
      }
      s"${c.sql}${if (r.nextInt(5) == 0) " NOT" else ""} LIKE ${RandomPredicates.quote(pattern)}"
    }

    /** An expression lmspark's translator leaves to Spark's Filter (no ANSI overflow possible). */
    private def untranslatable(c: FilterColumn): String = {
      val n = c.sql
      c.dataType match {
        case ByteType | ShortType | IntegerType | LongType =>
          val v = BigDecimal(base.value(c).toString)
          r.nextInt(4) match {
            case 0 => s"CAST($n AS DECIMAL(21,0)) + 1 > $v"
            case 1 => s"$n % 3 = ${r.nextInt(3)}"
            case 2 => s"abs(CAST($n AS DECIMAL(21,0))) <= ${v.abs}"
            case _ => s"coalesce($n, 0) = $v"
          }
        case FloatType | DoubleType =>
          r.nextInt(3) match {
            case 0 => s"isnan($n)"
            case 1 => s"$n * 2 > ${lit(c)}"
            case _ => s"abs($n) <= ${lit(c)}"
          }
        case _: DecimalType =>
          if (r.nextBoolean()) s"abs($n) <= abs(${lit(c)})" else s"round($n, 0) = round(${lit(c)}, 0)"
        case StringType =>
          val s = base.value(c).asInstanceOf[String]
          val first = if (s.isEmpty) "" else new String(Character.toChars(s.codePointAt(0)))
          r.nextInt(4) match {
            case 0 => s"length($n) > ${r.nextInt(4)}"
            case 1 => s"substring($n, 1, 1) = ${RandomPredicates.quote(first)}"
            case 2 => s"concat($n, 'x') = ${RandomPredicates.quote(s + "x")}"
            case _ => s"$n RLIKE ${RandomPredicates.quote("^" + first.filter(_.isLetterOrDigit))}"
          }
        case DateType => if (r.nextBoolean()) s"year($n) >= 2000" else s"date_add($n, 1) > ${lit(c)}"
        case TimestampType | TimestampNTZType => if (r.nextBoolean()) s"hour($n) < 12" else s"minute($n) % 2 = 0"
        case BooleanType => s"coalesce($n, false)"
        case _ => s"length($n) > ${r.nextInt(3)}"
      }
    }

    /** A predicate every non-null row (or every row) passes. */
    private def unselective(c: FilterColumn): String = {
      val n = c.sql
      val orderable = c.dataType != BooleanType && c.dataType != BinaryType
      r.nextInt(4) match {
        case 0 => s"($n IS NULL OR $n IS NOT NULL)"
        case 1 if orderable => s"$n >= ${RandomPredicates.literal(c.dataType, c.min)}"
        case 2 if orderable => s"($n <= ${RandomPredicates.literal(c.dataType, c.max)} OR $n IS NULL)"
        case _ => s"$n IS NOT NULL"
      }
    }

    /** A narrow predicate: equality with a row's value, a short range, or a small IN list. */
    private def point(c: FilterColumn): String = {
      def row = c.nonNull(r.nextInt(c.nonNull.size))
      r.nextInt(3) match {
        case 0 => base.selective(c.name).getOrElse(s"${c.sql} IS NULL")
        case 1 => s"${c.sql} = ${RandomPredicates.literal(c.dataType, row)}"
        case _ => s"${c.sql} IN (${Seq.fill(1 + r.nextInt(3))(RandomPredicates.literal(c.dataType, row)).mkString(", ")})"
      }
    }

    /** A comparison of two columns (lmspark cannot translate it), or an OR of conditions on both. */
    private def twoColumns(a: FilterColumn, b: FilterColumn): String = {
      if (a.dataType == b.dataType && a.dataType != BinaryType && r.nextBoolean())
        s"${a.sql} ${Seq("=", "<", ">=", "<=>")(r.nextInt(4))} ${b.sql}"
      else if (numeric(a.dataType) && numeric(b.dataType))
        s"CAST(${a.sql} AS DOUBLE) + 1 > CAST(${b.sql} AS DOUBLE)"
      else if (b.nonNull.nonEmpty) s"(${base.leaf(a)} OR ${base.leaf(b)})"
      else s"(${base.leaf(a)} OR ${b.sql} IS NULL)"
    }
  }
}
