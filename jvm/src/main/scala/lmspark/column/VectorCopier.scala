package lmspark.column

import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

/** Copies single values between Spark vectors of one Spark type, in the vectors' physical
  * representation (the one [[VectorWriter]]s write): the predicate cache uses it to hand decoded
  * filter-column values to the output batch. A dictionary-encoded source is read through its getters
  * (decoded); the destination receives values, never ids.
  *
  * Type dispatch happens once, in `forType`; unsupported types are refused there. */
abstract class VectorCopier {

  /** Row `from` of `src` (null or value) into row `to` of `dst`. */
  final def copy(src: WritableColumnVector, from: Int, dst: WritableColumnVector, to: Int): Unit =
    if (src.isNullAt(from)) dst.putNull(to) else copyValue(src, from, dst, to)

  /** Row `from` of `src`, which is not null, into row `to` of `dst`. */
  def copyValue(src: WritableColumnVector, from: Int, dst: WritableColumnVector, to: Int): Unit
}

object VectorCopier {

  /** The copier for vectors of `dt`, or None for types lmspark's readers do not produce. */
  def forType(dt: DataType): Option[VectorCopier] = dt match {
    case BooleanType => Some((s, f, d, t) => d.putBoolean(t, s.getBoolean(f)))
    case ByteType => Some((s, f, d, t) => d.putByte(t, s.getByte(f)))
    case ShortType => Some((s, f, d, t) => d.putShort(t, s.getShort(f)))
    case IntegerType | DateType => Some(ints)
    case LongType | TimestampType | TimestampNTZType => Some(longs)
    case FloatType => Some((s, f, d, t) => d.putFloat(t, s.getFloat(f)))
    case DoubleType => Some((s, f, d, t) => d.putDouble(t, s.getDouble(f)))
    case dec: DecimalType if dec.precision <= Decimal.MAX_INT_DIGITS => Some(ints)
    case dec: DecimalType if dec.precision <= Decimal.MAX_LONG_DIGITS => Some(longs)
    case _: DecimalType | BinaryType => Some(bytes)
    case _: StringType => Some(bytes)
    case _ => None
  }

  private val ints: VectorCopier = (s, f, d, t) => d.putInt(t, s.getInt(f))
  private val longs: VectorCopier = (s, f, d, t) => d.putLong(t, s.getLong(f))

  /** Variable-length values: the bytes are copied once, straight from an on-heap source's buffer
    * where there is one. */
  private val bytes: VectorCopier = (s, f, d, t) => {
    val u = s.getUTF8String(f)
    u.getBaseObject match {
      case a: Array[Byte] => d.putByteArray(t, a, (u.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt, u.numBytes)
      case _ =>
        val b = u.getBytes
        d.putByteArray(t, b, 0, b.length)
    }
  }
}
