package lmspark.testutil

import java.time.{Instant, LocalDate}

import scala.util.Random

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

/** Seeded random nested Spark schemas and rows (java8 datetime values), for differential tests:
  * structs, lists and maps nested to a given depth, nullable or not at every level, with nulls at
  * every level, empty lists, lists of nulls, maps with null values and lists long enough to span
  * pages; and the paths into them that queries project and filter on. */
object NestedData {

  private val leafTypes: IndexedSeq[DataType] = IndexedSeq(IntegerType, LongType, DoubleType, StringType, BooleanType,
    DateType, DecimalType(9, 2), DecimalType(22, 3), BinaryType, ShortType, TimestampType, FloatType, ByteType)

  /** A random type of at most `depth` nested levels (0: a leaf). */
  def randomType(depth: Int, r: Random): DataType =
    if (depth == 0 || r.nextInt(4) == 0) leafTypes(r.nextInt(leafTypes.size))
    else r.nextInt(3) match {
      case 0 => StructType((0 until 1 + r.nextInt(3)).map(i => StructField(s"f$i", randomType(depth - 1, r), r.nextInt(4) != 0)))
      case 1 => ArrayType(randomType(depth - 1, r), containsNull = r.nextBoolean())
      case _ => MapType(if (r.nextBoolean()) IntegerType else StringType, randomType(depth - 1, r), valueContainsNull = r.nextBoolean())
    }

  /** A nested type exactly `depth` levels deep at its deepest (1 to 4). */
  def nestedType(depth: Int, r: Random): DataType = {
    var t = randomType(depth, r)
    while (this.depth(t) != depth) t = randomType(depth, r)
    t
  }

  def depth(t: DataType): Int = t match {
    case s: StructType => 1 + s.fields.map(f => depth(f.dataType)).max
    case a: ArrayType => 1 + depth(a.elementType)
    case m: MapType => 1 + math.max(depth(m.keyType), depth(m.valueType))
    case _ => 0
  }

  /** A random value of `t` (null at `nullRate` when nullable); `longLists` makes some lists long. */
  def value(t: DataType, nullable: Boolean, r: Random, nullRate: Int = 6): Any =
    if (nullable && r.nextInt(nullRate) == 0) null
    else t match {
      case s: StructType => Row.fromSeq(s.fields.map(f => value(f.dataType, f.nullable, r, nullRate)).toSeq)
      case a: ArrayType => Seq.fill(length(r))(value(a.elementType, a.containsNull, r, nullRate))
      case m: MapType =>
        val keys = Seq.fill(length(r))(value(m.keyType, nullable = false, r, nullRate)).distinct
        keys.map(k => k -> value(m.valueType, m.valueContainsNull, r, nullRate)).toMap
      case IntegerType => r.nextInt(20) - 5
      case LongType => r.nextLong() % 1000L
      case DoubleType => if (r.nextInt(30) == 0) Double.NaN else (r.nextInt(2000) - 1000) / 8.0
      case FloatType => (r.nextInt(200) - 100) / 4.0f
      case StringType => Seq("a", "bb", "ccc", "", "é", "zz" * r.nextInt(5))(r.nextInt(6))
      case BooleanType => r.nextBoolean()
      case DateType => LocalDate.ofEpochDay(r.nextInt(20000) - 5000L)
      case TimestampType => Instant.ofEpochSecond(r.nextInt(1000000000).toLong, r.nextInt(1000) * 1000L)
      case d: DecimalType => new java.math.BigDecimal(java.math.BigInteger.valueOf(r.nextLong() % 100000000L), d.scale)
      case BinaryType => Array.fill(r.nextInt(4))(r.nextInt(256).toByte)
      case ShortType => (r.nextInt(200) - 100).toShort
      case ByteType => (r.nextInt(200) - 100).toByte
      case other => throw new IllegalArgumentException(s"no values for $other")
    }

  /** List lengths: empty a fifth of the time, sometimes long (to span pages). */
  private def length(r: Random): Int = r.nextInt(20) match {
    case 0 | 1 | 2 | 3 => 0
    case 19 => 20 + r.nextInt(60)
    case _ => 1 + r.nextInt(4)
  }

  /** Paths (`s.a.b`) through struct fields only, from top-level column `name` of type `t`, to
    * every field below it (leaves and nested fields), with their types. */
  def structPaths(name: String, t: DataType): Seq[(String, DataType)] = t match {
    case s: StructType => s.fields.toSeq.flatMap { f =>
      val p = s"$name.${f.name}"
      (p -> f.dataType) +: structPaths(p, f.dataType)
    }
    case _ => Nil
  }

  /** The value at struct path `fields` of a row's value `v` (null when a struct on the way is). */
  def at(v: Any, fields: Seq[String], t: DataType): Any = (fields, t) match {
    case (Seq(), _) => v
    case (f +: rest, s: StructType) =>
      if (v == null) null else at(v.asInstanceOf[Row].get(s.fieldIndex(f)), rest, s(f).dataType)
    case _ => throw new IllegalArgumentException(s"$fields is not a struct path of $t")
  }

  /** A canonical text of a value read back (rows, lists, maps with entries sorted), to compare rows. */
  def canonical(v: Any): String = v match {
    case null => "null"
    case r: Row => r.toSeq.map(canonical).mkString("{", ",", "}")
    case m: scala.collection.Map[_, _] => m.toSeq.map { case (k, x) => canonical(k) + "->" + canonical(x) }.sorted.mkString("M[", ",", "]")
    case b: Array[Byte] => b.map("%02x".format(_)).mkString("0x", "", "")
    case s: scala.collection.Seq[_] => s.map(canonical).mkString("[", ",", "]")
    case d: Double if d.isNaN => "NaN"
    case f: Float if f.isNaN => "NaN"
    case d: java.math.BigDecimal => d.toPlainString
    case other => other.toString
  }
}
