package lmspark.testutil

import java.math.{BigDecimal => JBigDecimal, BigInteger}

import lmspark.testutil.ScalaCompat.ArraySeq
import scala.util.Random

import org.apache.parquet.schema.LogicalTypeAnnotation
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types._

/** One Parquet leaf type paired with the Spark type we read it as, plus a seeded value generator.
  * Values on the Parquet side are Boolean / Int / Long / Float / Double / ArraySeq[Byte];
  * `toSpark` maps them to what [[TestTypes.fromVector]] returns for the Spark vector. */
final case class TypeSpec(
    name: String,
    primitive: PrimitiveTypeName,
    typeLength: Int,
    annotation: LogicalTypeAnnotation,
    sparkType: DataType,
    gen: Random => Any,
    toSpark: Any => Any = identity)

object TestTypes {

  private def pick[T](r: Random, specials: Seq[T], otherwise: => T): T =
    if (r.nextInt(10) == 0) specials(r.nextInt(specials.size)) else otherwise

  def bytes(a: Array[Byte]): ArraySeq[Byte] = ArraySeq.unsafeWrapArray(a)

  private val alphabet = Array("a", "b", "z", "0", " ", "é", "漢", "😀", "\u0000")

  private def randomString(r: Random): ArraySeq[Byte] = {
    val len = pick(r, Seq(0, 1), r.nextInt(12))
    val sb = new StringBuilder
    for (_ <- 0 until len) sb.append(alphabet(r.nextInt(alphabet.length)))
    bytes(sb.toString.getBytes("UTF-8"))
  }

  /** Two's complement big-endian bytes of `v`, sign-padded to `len` bytes. */
  def padded(v: BigInteger, len: Int): Array[Byte] = {
    val raw = v.toByteArray
    require(raw.length <= len, s"$v does not fit $len bytes")
    val out = Array.fill[Byte](len)(if (v.signum < 0) -1 else 0)
    System.arraycopy(raw, 0, out, len - raw.length, raw.length)
    out
  }

  private def signedBig(r: Random, bits: Int): BigInteger = {
    val b = new BigInteger(bits, r.self)
    if (r.nextBoolean()) b.negate() else b
  }

  private def decimalOf(scale: Int)(v: Any): Any = v match {
    case i: Int => JBigDecimal.valueOf(i.toLong, scale)
    case l: Long => JBigDecimal.valueOf(l, scale)
    case b: ArraySeq[_] =>
      val a = b.asInstanceOf[ArraySeq[Byte]].toArray
      new JBigDecimal(if (a.isEmpty) BigInteger.ZERO else new BigInteger(a), scale)
  }

  private val millisToMicros: Any => Any = v => v.asInstanceOf[Long] * 1000L

  val all: Seq[TypeSpec] = Seq(
    TypeSpec("bool", BOOLEAN, 0, null, BooleanType, r => r.nextBoolean()),
    TypeSpec("int32", INT32, 0, null, IntegerType,
      r => pick(r, Seq(Int.MinValue, Int.MaxValue, 0, -1), r.nextInt())),
    TypeSpec("int32_int32", INT32, 0, LogicalTypeAnnotation.intType(32, true), IntegerType, r => r.nextInt()),
    TypeSpec("int8", INT32, 0, LogicalTypeAnnotation.intType(8, true), ByteType,
      r => pick(r, Seq(-128, 127), r.nextInt(256) - 128), v => v.asInstanceOf[Int].toByte),
    TypeSpec("int16", INT32, 0, LogicalTypeAnnotation.intType(16, true), ShortType,
      r => pick(r, Seq(-32768, 32767), r.nextInt(65536) - 32768), v => v.asInstanceOf[Int].toShort),
    TypeSpec("date", INT32, 0, LogicalTypeAnnotation.dateType(), DateType,
      r => pick(r, Seq(0, -1, 2932896), r.nextInt(200000) - 50000)),
    TypeSpec("int64", INT64, 0, null, LongType,
      r => pick(r, Seq(Long.MinValue, Long.MaxValue, 0L, -1L), r.nextLong())),
    TypeSpec("ts_micros", INT64, 0, LogicalTypeAnnotation.timestampType(true, TimeUnit.MICROS), TimestampType,
      r => pick(r, Seq(0L, -1L), r.nextLong() % (1L << 52))),
    TypeSpec("ts_millis", INT64, 0, LogicalTypeAnnotation.timestampType(true, TimeUnit.MILLIS), TimestampType,
      r => pick(r, Seq(0L, -1L), r.nextLong() % 10000000000000L), millisToMicros),
    TypeSpec("ntz_micros", INT64, 0, LogicalTypeAnnotation.timestampType(false, TimeUnit.MICROS), TimestampNTZType,
      r => pick(r, Seq(0L, Long.MinValue), r.nextLong() % (1L << 52))),
    TypeSpec("ntz_millis", INT64, 0, LogicalTypeAnnotation.timestampType(false, TimeUnit.MILLIS), TimestampNTZType,
      r => pick(r, Seq(0L, -1L), r.nextLong() % 10000000000000L), millisToMicros),
    TypeSpec("float", FLOAT, 0, null, FloatType,
      r => pick(r, Seq(Float.NaN, Float.PositiveInfinity, Float.NegativeInfinity, -0.0f, 0.0f, Float.MinValue,
        Float.MaxValue, Float.MinPositiveValue), r.nextFloat() * 2e6f - 1e6f)),
    TypeSpec("double", DOUBLE, 0, null, DoubleType,
      r => pick(r, Seq(Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity, -0.0, 0.0, Double.MinValue,
        Double.MaxValue, Double.MinPositiveValue), r.nextGaussian() * 1e9)),
    TypeSpec("string", BINARY, 0, LogicalTypeAnnotation.stringType(), StringType, randomString),
    TypeSpec("enum", BINARY, 0, LogicalTypeAnnotation.enumType(), StringType, randomString),
    TypeSpec("binary", BINARY, 0, null, BinaryType, r => {
      val a = new Array[Byte](pick(r, Seq(0), r.nextInt(17))); r.nextBytes(a); bytes(a)
    }),
    TypeSpec("flba5", FIXED_LEN_BYTE_ARRAY, 5, null, BinaryType, r => {
      val a = new Array[Byte](5); r.nextBytes(a); bytes(a)
    }),
    TypeSpec("dec_i32", INT32, 0, LogicalTypeAnnotation.decimalType(2, 9), DecimalType(9, 2),
      r => pick(r, Seq(999999999, -999999999, 0), r.nextInt(1999999999) - 999999999), decimalOf(2)),
    TypeSpec("dec_i64", INT64, 0, LogicalTypeAnnotation.decimalType(3, 18), DecimalType(18, 3),
      r => pick(r, Seq(999999999999999999L, -999999999999999999L, 0L), r.nextLong() % 999999999999999999L),
      decimalOf(3)),
    TypeSpec("dec_flba3", FIXED_LEN_BYTE_ARRAY, 3, LogicalTypeAnnotation.decimalType(0, 6), DecimalType(6, 0),
      r => bytes(padded(signedBig(r, 19), 3)), decimalOf(0)),
    TypeSpec("dec_flba6", FIXED_LEN_BYTE_ARRAY, 6, LogicalTypeAnnotation.decimalType(2, 14), DecimalType(14, 2),
      r => bytes(padded(signedBig(r, 45), 6)), decimalOf(2)),
    TypeSpec("dec_flba16", FIXED_LEN_BYTE_ARRAY, 16, LogicalTypeAnnotation.decimalType(5, 38), DecimalType(38, 5),
      r => bytes(padded(pick(r, Seq(BigInteger.ZERO, BigInteger.ONE.negate()), signedBig(r, 125)), 16)),
      decimalOf(5)),
    TypeSpec("dec_bin", BINARY, 0, LogicalTypeAnnotation.decimalType(4, 30), DecimalType(30, 4),
      r => bytes(signedBig(r, 1 + r.nextInt(95)).toByteArray), decimalOf(4))
  )

  /** The value at `row` of a Spark vector, in the form `TypeSpec.toSpark` produces (null for nulls). */
  def fromVector(t: DataType, v: WritableColumnVector, row: Int): Any =
    if (v.isNullAt(row)) null
    else t match {
      case BooleanType => v.getBoolean(row)
      case ByteType => v.getByte(row)
      case ShortType => v.getShort(row)
      case IntegerType | DateType => v.getInt(row)
      case LongType | TimestampType | TimestampNTZType => v.getLong(row)
      case FloatType => v.getFloat(row)
      case DoubleType => v.getDouble(row)
      case _: StringType => bytes(v.getUTF8String(row).getBytes.clone()) // getBytes may alias the vector
      case BinaryType => bytes(v.getBinary(row))
      case d: DecimalType => v.getDecimal(row, d.precision, d.scale).toJavaBigDecimal.setScale(d.scale)
    }

  /** Equality that treats NaN as equal to itself and -0.0 as different from 0.0 (bitwise for
    * floats), and compares decimals by value and scale. */
  def same(a: Any, b: Any): Boolean = java.util.Objects.equals(a, b)

  def show(a: Any): String = a match {
    case b: ArraySeq[_] => b.asInstanceOf[ArraySeq[Byte]].map(x => f"${x & 0xff}%02x").mkString("0x", "", "")
    case other => String.valueOf(other)
  }
}
