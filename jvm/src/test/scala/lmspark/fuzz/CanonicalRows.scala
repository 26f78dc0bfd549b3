package lmspark.fuzz

import java.math.BigInteger
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets
import java.security.MessageDigest

import org.apache.parquet.example.data.Group
import org.apache.parquet.schema.LogicalTypeAnnotation.{IntLogicalTypeAnnotation, TimeUnit, TimestampLogicalTypeAnnotation}
import org.apache.parquet.schema.MessageType
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.types._
import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/**
 * The one row form every reader of the fuzz test is compared in: a row is its cells joined by `|`,
 * a cell is `N` for null, else the Spark value in a fixed text form (integers in decimal, floats and
 * doubles by their bits with NaN canonical, strings and binaries in hex, decimals by unscaled value,
 * dates in days, timestamps in microseconds; structs, lists and maps by their parts in order). Rows are folded into a SHA-256 digest in order, so two
 * readers agree exactly when their digests and row counts do.
 */
final class CanonicalRows {
  private val digest = MessageDigest.getInstance("SHA-256")
  private var rows = 0L

  def count: Long = rows
  def hex: String = digest.digest().take(12).map(b => f"${b & 0xff}%02x").mkString

  def add(row: String): Unit = {
    digest.update(row.getBytes(StandardCharsets.UTF_8))
    digest.update('\n'.toByte)
    rows += 1
  }
}

object CanonicalRows {

  def hexOf(a: Array[Byte]): String = {
    val sb = new java.lang.StringBuilder(a.length * 2 + 1).append('x')
    a.foreach(b => sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16)))
    sb.toString
  }

  /** Row `i` of a Spark batch whose columns have the types of `schema`, in the canonical form. */
  def rowOf(batch: ColumnarBatch, i: Int, schema: StructType): String = {
    val sb = new java.lang.StringBuilder
    var c = 0
    while (c < schema.length) {
      if (c > 0) sb.append('|')
      sb.append(cell(batch.column(c), i, schema(c).dataType))
      c += 1
    }
    sb.toString
  }

  /** A row of parquet-java's example `Group` reader (a flat schema) in the Spark form of `schema`. */
  def groupRow(g: Group, parquet: MessageType, schema: StructType): String =
    schema.indices.map { c =>
      if (g.getFieldRepetitionCount(c) == 0) "N"
      else fromParquet(g, c, parquet, schema(c).dataType)
    }.mkString("|")

  def float(f: Float): String = Integer.toHexString(java.lang.Float.floatToIntBits(f))
  def double(d: Double): String = java.lang.Long.toHexString(java.lang.Double.doubleToLongBits(d))

  def cell(v: ColumnVector, i: Int, t: DataType): String =
    if (v.isNullAt(i)) "N"
    else t match {
      case BooleanType => v.getBoolean(i).toString
      case ByteType => v.getByte(i).toString
      case ShortType => v.getShort(i).toString
      case IntegerType | DateType => v.getInt(i).toString
      case LongType | TimestampType | TimestampNTZType => v.getLong(i).toString
      case FloatType => float(v.getFloat(i))
      case DoubleType => double(v.getDouble(i))
      case _: StringType => hexOf(v.getUTF8String(i).getBytes)
      case BinaryType => hexOf(v.getBinary(i))
      // By physical storage, so that a value beyond the precision (a corrupt file's) still prints.
      case d: DecimalType if d.precision <= 9 => v.getInt(i).toString
      case d: DecimalType if d.precision <= 18 => v.getLong(i).toString
      case _: DecimalType =>
        val b = v.getBinary(i)
        (if (b.isEmpty) BigInteger.ZERO else new BigInteger(b)).toString
      // Nested values by structure: a struct's fields, a list's or a map's entries in order.
      case s: StructType => s.fields.indices.map(k => cell(v.getChild(k), i, s(k).dataType)).mkString("{", ",", "}")
      case a: ArrayType =>
        val w = v.asInstanceOf[WritableColumnVector]
        val (off, len) = (w.getArrayOffset(i), w.getArrayLength(i))
        (off until off + len).map(j => cell(w.arrayData(), j, a.elementType)).mkString("[", ",", "]")
      case m: MapType =>
        val w = v.asInstanceOf[WritableColumnVector]
        val (off, len) = (w.getArrayOffset(i), w.getArrayLength(i))
        (off until off + len).map(j => cell(w.getChild(0), j, m.keyType) + ":" + cell(w.getChild(1), j, m.valueType))
          .mkString("M[", ",", "]")
      case other => throw new UnsupportedOperationException(s"no canonical form for $other")
    }

  private val julianDayOfEpoch = 2440588L
  private val microsPerDay = 86400L * 1000 * 1000

  /** Field `c` of `g` (present) as the Spark value of type `t` would print, from parquet-java's
    * physical value. */
  def fromParquet(g: Group, c: Int, parquet: MessageType, t: DataType): String = {
    val pt = parquet.getType(c).asPrimitiveType
    val ann = pt.getLogicalTypeAnnotation
    pt.getPrimitiveTypeName match {
      case PrimitiveTypeName.BOOLEAN => g.getBoolean(c, 0).toString
      case PrimitiveTypeName.INT32 =>
        val x = g.getInteger(c, 0)
        t match {
          case ByteType => x.toByte.toString
          case ShortType => x.toShort.toString
          case IntegerType | DateType => x.toString
          case LongType => Integer.toUnsignedLong(x).toString // UINT_32
          case _: DecimalType => x.toString
          case other => throw new UnsupportedOperationException(s"INT32 as $other")
        }
      case PrimitiveTypeName.INT64 =>
        val x = g.getLong(c, 0)
        (t, ann) match {
          case (TimestampType | TimestampNTZType, ts: TimestampLogicalTypeAnnotation) =>
            ts.getUnit match {
              case TimeUnit.MILLIS => Math.multiplyExact(x, 1000L).toString
              case TimeUnit.MICROS => x.toString
              case TimeUnit.NANOS => Math.floorDiv(x, 1000L).toString
            }
          case (d: DecimalType, i: IntLogicalTypeAnnotation) if !i.isSigned =>
            new BigInteger(java.lang.Long.toUnsignedString(x)).toString // UINT_64 as DECIMAL(20, 0)
          case (LongType | _: DecimalType, _) => x.toString
          case (other, _) => throw new UnsupportedOperationException(s"INT64 as $other")
        }
      case PrimitiveTypeName.FLOAT => float(g.getFloat(c, 0))
      case PrimitiveTypeName.DOUBLE => double(g.getDouble(c, 0))
      case PrimitiveTypeName.INT96 =>
        val bb = ByteBuffer.wrap(g.getInt96(c, 0).getBytes).order(ByteOrder.LITTLE_ENDIAN)
        val nanos = bb.getLong
        val days = bb.getInt
        ((days - julianDayOfEpoch) * microsPerDay + nanos / 1000L).toString
      case PrimitiveTypeName.BINARY | PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY =>
        val bytes = g.getBinary(c, 0).getBytes
        t match {
          case _: DecimalType => (if (bytes.isEmpty) BigInteger.ZERO else new BigInteger(bytes)).toString
          case _ => hexOf(bytes)
        }
    }
  }
}
