package lmspark.column

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

import lmspark.decode.{BinarySink, ValuesDecoder}

/** Writes `n` non-null values, decoded by a [[lmspark.decode.ValuesDecoder]], into rows
  * `[rowId, rowId + n)` of a Spark vector in the representation Spark's vectorized Parquet reader
  * uses for the target Spark type. One writer per Parquet x Spark type pair; the pairing is done
  * only by [[ColumnReaderFactory]]. Writers hold no per-row state; converting writers may reuse a
  * scratch array. */
abstract class VectorWriter {
  def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit
}

object VectorWriter {

  /** BOOLEAN -> BooleanType. */
  object Booleans extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readBooleans(n, v, rowId)
  }

  /** INT32 -> IntegerType (also DECIMAL(p <= 9) on INT32, stored as unscaled ints). */
  object Ints extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readInts(n, v, rowId)
  }

  /** INT64 -> LongType, TimestampType / TimestampNTZType from MICROS without checks, DECIMAL(p <= 18)
    * on INT64. */
  object Longs extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readLongs(n, v, rowId)
  }

  /** FLOAT -> FloatType. */
  object Floats extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readFloats(n, v, rowId)
  }

  /** DOUBLE -> DoubleType. */
  object Doubles extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readDoubles(n, v, rowId)
  }

  /** BYTE_ARRAY -> StringType / BinaryType; FIXED_LEN_BYTE_ARRAY -> BinaryType. */
  object Binaries extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readBinaries(n, v, rowId)
  }

  /** INT32 DATE -> DateType, failing on days before the calendar switch (Spark's EXCEPTION mode). */
  object DatesFailOnAncient extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      dec.readInts(n, v, rowId)
      val limit = SparkRebase.lastSwitchJulianDay
      var i = 0
      while (i < n) { if (v.getInt(rowId + i) < limit) throw SparkRebase.readException(); i += 1 }
    }
  }

  /** INT64 TIMESTAMP(MICROS) -> TimestampType, failing on ancient values. */
  object MicrosFailOnAncient extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      dec.readLongs(n, v, rowId)
      val limit = SparkRebase.lastSwitchJulianTs
      var i = 0
      while (i < n) { if (v.getLong(rowId + i) < limit) throw SparkRebase.readException(); i += 1 }
    }
  }

  /** INT64 TIMESTAMP(MILLIS) -> micros (overflow throws ArithmeticException, as Spark's
    * `DateTimeUtils.millisToMicros`), optionally failing on ancient values. */
  final class MillisAsMicros(failOnAncient: Boolean) extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      dec.readLongs(n, v, rowId)
      val limit = SparkRebase.lastSwitchJulianTs
      var i = 0
      while (i < n) {
        val micros = Math.multiplyExact(v.getLong(rowId + i), 1000L)
        if (failOnAncient && micros < limit) throw SparkRebase.readException()
        v.putLong(rowId + i, micros)
        i += 1
      }
    }
  }

  /** INT32 INT(8) -> ByteType (truncating, as Spark's ByteUpdater). */
  final class Bytes extends VectorWriter {
    private[this] var scratch = new Array[Int](256)
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      if (scratch.length < n) scratch = new Array[Int](math.max(n, scratch.length * 2))
      dec.readIntArray(n, scratch, 0)
      var i = 0
      while (i < n) { v.putByte(rowId + i, scratch(i).toByte); i += 1 }
    }
  }

  /** INT32 INT(16) -> ShortType (truncating, as Spark's ShortUpdater). */
  final class Shorts extends VectorWriter {
    private[this] var scratch = new Array[Int](256)
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      if (scratch.length < n) scratch = new Array[Int](math.max(n, scratch.length * 2))
      dec.readIntArray(n, scratch, 0)
      var i = 0
      while (i < n) { v.putShort(rowId + i, scratch(i).toShort); i += 1 }
    }
  }

  /** Big-endian two's complement unscaled DECIMAL bytes (BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY) ->
    * DecimalType(precision, _) stored as `WritableColumnVector.putDecimal` would: putInt for
    * precision <= 9, putLong for <= 18, else putByteArray of the minimal two's complement bytes
    * (`BigInteger.toByteArray`). */
  final class BinaryDecimals(precision: Int) extends VectorWriter with BinarySink {
    private[this] var target: WritableColumnVector = _
    private[this] val zero = Array[Byte](0)

    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      target = v
      dec.readBinaryValues(n, this, rowId)
      target = null
    }

    def accept(rowId: Int, bytes: Array[Byte], offset: Int, length: Int): Unit = {
      if (precision <= 18) {
        var unscaled = 0L
        if (length > 0) {
          unscaled = bytes(offset).toLong // sign-extends the first byte
          var i = 1
          while (i < length) { unscaled = (unscaled << 8) | (bytes(offset + i) & 0xffL); i += 1 }
        }
        if (precision <= 9) target.putInt(rowId, unscaled.toInt) else target.putLong(rowId, unscaled)
      } else if (length == 0) {
        target.putByteArray(rowId, zero, 0, 1)
      } else {
        // Drop redundant sign bytes, as BigInteger.toByteArray does.
        var s = offset
        val end = offset + length
        while (s + 1 < end && ((bytes(s) == 0 && bytes(s + 1) >= 0) || (bytes(s) == -1 && bytes(s + 1) < 0))) s += 1
        target.putByteArray(rowId, bytes, s, end - s)
      }
    }
  }
}
