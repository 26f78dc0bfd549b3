package lmspark.column

import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types.DecimalType

import lmspark.decode.{BinaryDictionary, BinarySink, Dictionary, IntDictionary, LongDictionary, ValuesDecoder}

/** Writes `n` non-null values, decoded by a [[lmspark.decode.ValuesDecoder]], into rows
  * `[rowId, rowId + n)` of a Spark vector in the representation Spark's vectorized Parquet reader
  * uses for the target Spark type. One writer per Parquet x Spark type pair; the pairing is done
  * only by [[ColumnReaderFactory]]. Writers hold no per-row state; converting writers may reuse a
  * scratch array.
  *
  * `sparkDictionary` says whether a batch of dictionary ids may stay dictionary-encoded in the
  * vector (see [[DictionaryPreservation]]): a writer that can express a chunk's whole dictionary
  * as the values it would write returns them, converted once per chunk; the default is "cannot",
  * which keeps every batch eagerly decoded. */
abstract class VectorWriter {
  def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit

  /** The chunk dictionary `d` as Spark vector dictionary entries equal to what `write` stores for
    * each id, or None when that is impossible or inexact. Must not fail on an entry that `write`
    * would reject (checks apply only to values that are read): return None instead. */
  def sparkDictionary(d: Dictionary): Option[SparkDictionary] = None
}

object VectorWriter {

  /** BOOLEAN -> BooleanType. */
  object Booleans extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readBooleans(n, v, rowId)
  }

  /** INT32 -> IntegerType (also DECIMAL(p <= 9) on INT32, stored as unscaled ints). */
  object Ints extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readInts(n, v, rowId)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = SparkDictionary.ints(d)
  }

  /** INT64 -> LongType, TimestampType / TimestampNTZType from MICROS without checks, DECIMAL(p <= 18)
    * on INT64. */
  object Longs extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readLongs(n, v, rowId)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = SparkDictionary.longs(d)
  }

  /** FLOAT -> FloatType. */
  object Floats extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readFloats(n, v, rowId)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = SparkDictionary.floats(d)
  }

  /** DOUBLE -> DoubleType. */
  object Doubles extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readDoubles(n, v, rowId)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = SparkDictionary.doubles(d)
  }

  /** BYTE_ARRAY -> StringType / BinaryType; FIXED_LEN_BYTE_ARRAY -> BinaryType. */
  object Binaries extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = dec.readBinaries(n, v, rowId)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = SparkDictionary.binaries(d)
  }

  /** INT32 DATE -> DateType, failing on days before the calendar switch (Spark's EXCEPTION mode). */
  object DatesFailOnAncient extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      dec.readInts(n, v, rowId)
      val limit = SparkRebase.lastSwitchJulianDay
      var i = 0
      while (i < n) { if (v.getInt(rowId + i) < limit) throw SparkRebase.readException(); i += 1 }
    }
    /** Kept only when no entry is ancient: an ancient entry must fail only the rows that read it. */
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = d match {
      case i: IntDictionary if !i.values.exists(_ < SparkRebase.lastSwitchJulianDay) => SparkDictionary.ints(d)
      case _ => None
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
    /** Kept only when no entry is ancient. */
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = d match {
      case l: LongDictionary if !l.values.exists(_ < SparkRebase.lastSwitchJulianTs) => SparkDictionary.longs(d)
      case _ => None
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
    /** Converted entries; None when an entry would overflow or (when checking) is ancient. */
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = d match {
      case l: LongDictionary =>
        val limit = SparkRebase.lastSwitchJulianTs
        val micros = new Array[Long](l.size)
        var i = 0
        while (i < l.size) {
          val m = l.values(i)
          if (m > Long.MaxValue / 1000L || m < Long.MinValue / 1000L) return None
          micros(i) = m * 1000L
          if (failOnAncient && micros(i) < limit) return None
          i += 1
        }
        Some(new SparkDictionary.Longs(micros))
      case _ => None
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
    /** The INT32 entries as they are: a dictionary vector's getByte truncates them the same way. */
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = SparkDictionary.ints(d)
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
    /** The INT32 entries as they are: a dictionary vector's getShort truncates them the same way. */
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = SparkDictionary.ints(d)
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

    /** Entries converted by this writer: ints, longs or minimal bytes, as `getDecimal` reads them
      * for this precision. The conversion never fails. */
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = d match {
      case _: BinaryDictionary => Some(SparkDictionary.throughWriter(this, d, DecimalType(precision, 0)))
      case _ => None
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
