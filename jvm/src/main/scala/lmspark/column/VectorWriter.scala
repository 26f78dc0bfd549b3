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

  /** Any physical type -> NullType: every value is null (the values are skipped), as Spark 4.1+ reads it. */
  object Nulls extends VectorWriter {
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = { dec.skip(n); v.putNulls(rowId, n) }
  }

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
      case i: IntDictionary if (0 until i.size).forall(i.value(_) >= SparkRebase.lastSwitchJulianDay) =>
        SparkDictionary.ints(d)
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
      case l: LongDictionary if (0 until l.size).forall(l.value(_) >= SparkRebase.lastSwitchJulianTs) =>
        SparkDictionary.longs(d)
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
          val m = l.value(i)
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

/** Writers for Spark's read-side conversions beyond the identity: widenings (INT32 -> long /
  * double / decimal, FLOAT -> double, DATE -> TIMESTAMP_NTZ, decimal precision / scale increases),
  * unsigned integers, INT96 timestamps and LEGACY datetime rebasing. Each mirrors one updater of
  * Spark 4.1's `ParquetVectorUpdaterFactory` value for value. They read physical values into a
  * reusable scratch array, then convert; a chunk's dictionary is converted once, through the same
  * code, and kept when no entry fails. */
object ConvertingWriters {

  /** The chunk's dictionary converted once through `w` (values exactly as the eager path writes
    * them), or None when converting some entry fails (an ancient value under EXCEPTION, an
    * overflow, a malformed value): then batches decode eagerly and fail only if a row reads it. */
  private def preserved(w: VectorWriter, d: Dictionary, t: org.apache.spark.sql.types.DataType): Option[SparkDictionary] =
    try Some(SparkDictionary.throughWriter(w, d, t))
    catch { case scala.util.control.NonFatal(_) => None }

  /** A reusable scratch array per writer instance (writers are per column reader). */
  private[column] abstract class IntSource extends VectorWriter {
    private[this] var scratch = new Array[Int](256)
    final def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      if (scratch.length < n) scratch = new Array[Int](math.max(n, scratch.length * 2))
      dec.readIntArray(n, scratch, 0)
      convert(scratch, n, v, rowId)
    }
    protected def convert(src: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit
  }

  private[column] abstract class LongSource extends VectorWriter {
    private[this] var scratch = new Array[Long](256)
    final def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      if (scratch.length < n) scratch = new Array[Long](math.max(n, scratch.length * 2))
      dec.readLongArray(n, scratch, 0)
      convert(scratch, n, v, rowId)
    }
    protected def convert(src: Array[Long], n: Int, v: WritableColumnVector, rowId: Int): Unit
  }

  private[column] abstract class BinarySource extends VectorWriter with BinarySink {
    protected[this] var target: WritableColumnVector = _
    final def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      target = v
      try dec.readBinaryValues(n, this, rowId) finally target = null
    }
  }

  /** INT32 -> LongType (also INT32 DECIMAL read as a 64-bit decimal of the same scale). */
  final class IntsAsLongs extends IntSource {
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.LongType)
    protected def convert(src: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) { v.putLong(rowId + i, src(i).toLong); i += 1 }
    }
  }

  /** INT32 UINT_32 -> LongType. */
  final class UnsignedIntsAsLongs extends IntSource {
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.LongType)
    protected def convert(src: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) { v.putLong(rowId + i, Integer.toUnsignedLong(src(i))); i += 1 }
    }
  }

  /** INT32 -> DoubleType. */
  final class IntsAsDoubles extends IntSource {
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.DoubleType)
    protected def convert(src: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) { v.putDouble(rowId + i, src(i).toDouble); i += 1 }
    }
  }

  /** INT32 -> a decimal wider than 18 digits of the same scale: minimal two's complement bytes. */
  final class IntsAsBinaryDecimals extends IntSource {
    private[this] val scratch = new Array[Byte](8)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.DecimalType(38, 0))
    protected def convert(src: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) { putMinimalBytes(v, rowId + i, src(i).toLong, scratch); i += 1 }
    }
  }

  /** INT64 -> a decimal wider than 18 digits of the same scale. */
  final class LongsAsBinaryDecimals extends LongSource {
    private[this] val scratch = new Array[Byte](8)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.DecimalType(38, 0))
    protected def convert(src: Array[Long], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) { putMinimalBytes(v, rowId + i, src(i), scratch); i += 1 }
    }
  }

  /** INT64 UINT_64 -> DecimalType(20, 0): the unsigned value as big-endian two's complement bytes
    * (a leading zero byte when the top bit is set). */
  final class UnsignedLongsAsDecimals extends LongSource {
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.DecimalType(20, 0))
    private[this] val bytes = new Array[Byte](9)
    protected def convert(src: Array[Long], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) {
        val x = src(i)
        var k = 8
        while (k >= 1) { bytes(k) = (x >>> (8 * (8 - k))).toByte; k -= 1 }
        bytes(0) = 0
        // minimal form: drop leading zero bytes while the next byte keeps the sign positive
        var s = 0
        while (s < 8 && bytes(s) == 0 && bytes(s + 1) >= 0) s += 1
        v.putByteArray(rowId + i, bytes, s, 9 - s)
        i += 1
      }
    }
  }

  /** FLOAT -> DoubleType (exact widening). */
  final class FloatsAsDoubles extends VectorWriter {
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.DoubleType)
    private[this] var scratch: WritableColumnVector = _
    private[this] var capacity = 0
    def write(dec: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      if (scratch == null || capacity < n) {
        capacity = math.max(n, 256)
        scratch = new org.apache.spark.sql.execution.vectorized.OnHeapColumnVector(
          capacity, org.apache.spark.sql.types.FloatType)
      }
      dec.readFloats(n, scratch, 0)
      var i = 0
      while (i < n) { v.putDouble(rowId + i, scratch.getFloat(i).toDouble); i += 1 }
    }
  }

  /** INT32 DATE -> DateType in LEGACY mode: hybrid-calendar days rebased to Gregorian. */
  final class DatesRebased extends IntSource {
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.DateType)
    protected def convert(src: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) { v.putInt(rowId + i, SparkRebase.rebaseDays(src(i))); i += 1 }
    }
  }

  /** INT32 DATE -> TimestampNTZType (midnight UTC), after the file's date rebase rule. */
  final class DatesAsTimestampNtz(rebase: RebaseCheck) extends IntSource {
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.TimestampNTZType)
    protected def convert(src: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) {
        val d = src(i)
        val days = rebase match {
          case RebaseCheck.None => d
          case RebaseCheck.FailOnAncient =>
            if (d < SparkRebase.lastSwitchJulianDay) throw SparkRebase.readException()
            d
          case _: RebaseCheck.Legacy => SparkRebase.rebaseDays(d)
        }
        v.putLong(rowId + i, SparkRebase.daysToMicros(days))
        i += 1
      }
    }
  }

  /** INT64 TIMESTAMP(MICROS or MILLIS) -> TimestampType in LEGACY mode, rebased in `timeZone`. */
  final class TimestampsRebased(millis: Boolean, timeZone: String) extends LongSource {
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.TimestampType)
    protected def convert(src: Array[Long], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) {
        val micros = if (millis) SparkRebase.millisToMicros(src(i)) else src(i)
        v.putLong(rowId + i, SparkRebase.rebaseMicros(timeZone, micros))
        i += 1
      }
    }
  }

  /** INT96 -> TimestampType / TimestampNTZType: Julian day + nanos of day as micros, then the
    * INT96 rebase rule (never for NTZ) and Spark's optional time zone conversion. */
  final class Int96Timestamps(rebase: RebaseCheck, convertTz: Option[java.time.ZoneId]) extends BinarySource {
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, org.apache.spark.sql.types.TimestampType)
    private[this] val zone = convertTz.orNull
    def accept(rowId: Int, bytes: Array[Byte], offset: Int, length: Int): Unit = {
      if (length != 12) throw new lmspark.decode.DecodeException(s"INT96 value of $length bytes")
      val julian = SparkRebase.int96ToMicros(bytes, offset)
      val micros = rebase match {
        case RebaseCheck.None => julian
        case RebaseCheck.FailOnAncient =>
          if (julian < SparkRebase.lastSwitchJulianTs) throw SparkRebase.int96ReadException()
          julian
        case RebaseCheck.Legacy(tz) => SparkRebase.rebaseMicros(tz, julian)
      }
      target.putLong(rowId, if (zone == null) micros else SparkRebase.convertTz(micros, zone))
    }
  }

  /** `x`'s minimal big-endian two's complement bytes (`BigInteger.toByteArray`), through `scratch`
    * (8 bytes; `putByteArray` copies them). */
  private def putMinimalBytes(v: WritableColumnVector, rowId: Int, x: Long, scratch: Array[Byte]): Unit = {
    val len = (64 - java.lang.Long.numberOfLeadingZeros(x ^ (x >> 63))) / 8 + 1
    var k = 0
    while (k < len) { scratch(k) = (x >>> (8 * (len - 1 - k))).toByte; k += 1 }
    v.putByteArray(rowId, scratch, 0, len)
  }

  /** 10^k for k in [0, 18], and the largest magnitude that can be multiplied by it in a long. */
  private val Pow10: Array[Long] = Array.iterate(1L, 19)(_ * 10)
  private val Pow10Limit: Array[Long] = Pow10.map(Long.MaxValue / _)

  /** `putDecimal` of a long unscaled value: in long arithmetic when the rescale is exact and fits (a
    * scale that grows, the usual widening), else through `BigDecimal`. Stores exactly what
    * `putDecimal` stores (`intValue` / `longValue` / `toByteArray` of the rescaled value). */
  private def putDecimalLong(v: WritableColumnVector, rowId: Int, unscaled: Long, fromScale: Int,
      to: org.apache.spark.sql.types.DecimalType, scratch: Array[Byte]): Unit = {
    val up = to.scale - fromScale
    if (up >= 0 && up <= 18 && unscaled >= -Pow10Limit(up) && unscaled <= Pow10Limit(up)) {
      val u = unscaled * Pow10(up)
      if (to.precision <= org.apache.spark.sql.types.Decimal.MAX_INT_DIGITS) v.putInt(rowId, u.toInt)
      else if (to.precision <= org.apache.spark.sql.types.Decimal.MAX_LONG_DIGITS) v.putLong(rowId, u)
      else putMinimalBytes(v, rowId, u, scratch)
    } else putDecimal(v, rowId, java.math.BigInteger.valueOf(unscaled), fromScale, to)
  }

  /** How a decimal rescale stores its result: Spark's `DecimalUpdater.writeDecimal`. */
  private def putDecimal(v: WritableColumnVector, rowId: Int, unscaled: java.math.BigInteger, fromScale: Int,
      to: org.apache.spark.sql.types.DecimalType): Unit = {
    val scaled = new java.math.BigDecimal(unscaled, fromScale).setScale(to.scale, java.math.RoundingMode.UNNECESSARY)
    val u = scaled.unscaledValue()
    if (to.precision <= org.apache.spark.sql.types.Decimal.MAX_INT_DIGITS) v.putInt(rowId, u.intValue())
    else if (to.precision <= org.apache.spark.sql.types.Decimal.MAX_LONG_DIGITS) v.putLong(rowId, u.longValue())
    else v.putByteArray(rowId, u.toByteArray)
  }

  /** INT32 (DECIMAL or plain signed integer, scale `fromScale`) -> a wider decimal `to`. */
  final class IntsAsDecimals(fromScale: Int, to: org.apache.spark.sql.types.DecimalType) extends IntSource {
    private[this] val scratch = new Array[Byte](8)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, to)
    protected def convert(src: Array[Int], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) { putDecimalLong(v, rowId + i, src(i).toLong, fromScale, to, scratch); i += 1 }
    }
  }

  /** INT64 (DECIMAL or plain signed integer) -> a wider decimal `to`. */
  final class LongsAsDecimals(fromScale: Int, to: org.apache.spark.sql.types.DecimalType) extends LongSource {
    private[this] val scratch = new Array[Byte](8)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, to)
    protected def convert(src: Array[Long], n: Int, v: WritableColumnVector, rowId: Int): Unit = {
      var i = 0
      while (i < n) { putDecimalLong(v, rowId + i, src(i), fromScale, to, scratch); i += 1 }
    }
  }

  /** BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY DECIMAL -> a wider decimal `to` (or the same one, stored by
    * Spark's general path). Empty input reads as zero, as `new BigInteger` would reject it; Spark
    * fails on it, so we raise a decode error naming the value. */
  final class BinariesAsDecimals(fromScale: Int, to: org.apache.spark.sql.types.DecimalType) extends BinarySource {
    private[this] val scratch = new Array[Byte](8)
    override def sparkDictionary(d: Dictionary): Option[SparkDictionary] = preserved(this, d, to)
    def accept(rowId: Int, bytes: Array[Byte], offset: Int, length: Int): Unit = {
      if (length == 0) throw new lmspark.decode.DecodeException("empty DECIMAL value")
      if (length <= 8) {
        var unscaled = bytes(offset).toLong // sign-extends the first byte
        var i = 1
        while (i < length) { unscaled = (unscaled << 8) | (bytes(offset + i) & 0xffL); i += 1 }
        putDecimalLong(target, rowId, unscaled, fromScale, to, scratch)
      } else putDecimal(target, rowId, new java.math.BigInteger(bytes, offset, length), fromScale, to)
    }
  }
}
