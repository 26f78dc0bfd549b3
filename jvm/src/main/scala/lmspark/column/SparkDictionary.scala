package lmspark.column

import org.apache.spark.sql.execution.vectorized.{Dictionary => SparkVectorDictionary, OnHeapColumnVector}
import org.apache.spark.sql.types._

import lmspark.decode.{BinaryDictionary, Dictionary, DictionaryIdsReplay, DoubleDictionary, FloatDictionary, IntDictionary, LongDictionary}

/** A column chunk's dictionary as Spark's vectors read it (`WritableColumnVector.setDictionary`):
  * entry `id` holds the value the chunk's [[VectorWriter]] would have stored eagerly for a row
  * with that id, in the vector's physical representation (`decodeToInt` for byte, short, int,
  * date and decimal(p <= 9) vectors, `decodeToLong` for long, timestamp and decimal(p <= 18),
  * `decodeToBinary` for string, binary and wider decimals), so that lazy `getX` calls return
  * exactly what eager decoding writes.
  *
  * Built at most once per chunk, by `VectorWriter.sparkDictionary`. Immutable: it reads a lmspark
  * [[Dictionary]]'s entries where they stand or owns converted copies. Ids reaching `decodeTo*` were
  * checked against `size` when they were read (`DictionaryIdsDecoder.readIds`); `decodeToBinary`
  * returns one array per entry, shared by every call (as Spark's `ConstantColumnVector.getBinary`
  * does): Spark never mutates the values it reads. */
sealed abstract class SparkDictionary(val size: Int) extends SparkVectorDictionary {
  override def decodeToInt(id: Int): Int = unsupported("int")
  override def decodeToLong(id: Int): Long = unsupported("long")
  override def decodeToFloat(id: Int): Float = unsupported("float")
  override def decodeToDouble(id: Int): Double = unsupported("double")
  override def decodeToBinary(id: Int): Array[Byte] = unsupported("binary")

  private def unsupported(what: String): Nothing =
    throw new UnsupportedOperationException(s"${getClass.getSimpleName} has no $what values")
}

object SparkDictionary {

  /** Int entries (byte and short vectors read them through `(byte)` / `(short)` casts). */
  final class Ints(val values: Array[Int]) extends SparkDictionary(values.length) {
    override def decodeToInt(id: Int): Int = values(id)
  }

  final class Longs(val values: Array[Long]) extends SparkDictionary(values.length) {
    override def decodeToLong(id: Int): Long = values(id)
  }

  final class Floats(val values: Array[Float]) extends SparkDictionary(values.length) {
    override def decodeToFloat(id: Int): Float = values(id)
  }

  final class Doubles(val values: Array[Double]) extends SparkDictionary(values.length) {
    override def decodeToDouble(id: Int): Double = values(id)
  }

  /** The entries of a lmspark INT32 dictionary as they stand, read from its page bytes per call. */
  final class IntsOf(d: IntDictionary) extends SparkDictionary(d.size) {
    override def decodeToInt(id: Int): Int = d.value(id)
  }

  /** The entries of a lmspark INT64 dictionary as they stand. */
  final class LongsOf(d: LongDictionary) extends SparkDictionary(d.size) {
    override def decodeToLong(id: Int): Long = d.value(id)
  }

  /** The entries of a lmspark FLOAT dictionary as they stand. */
  final class FloatsOf(d: FloatDictionary) extends SparkDictionary(d.size) {
    override def decodeToFloat(id: Int): Float = d.value(id)
  }

  /** The entries of a lmspark DOUBLE dictionary as they stand. */
  final class DoublesOf(d: DoubleDictionary) extends SparkDictionary(d.size) {
    override def decodeToDouble(id: Int): Double = d.value(id)
  }

  /** Entry `i` is `data[offsets(i), offsets(i + 1) - gap)`. */
  final class Binaries(val offsets: Array[Int], val data: Array[Byte], val gap: Int = 0)
      extends SparkDictionary(offsets.length - 1) {
    /** Each entry's bytes, copied out on first use and then shared by every row that reads it (Spark's
      * values are immutable: `UTF8String.fromBytes` wraps the array, writers copy it). */
    private[this] val entries = new Array[Array[Byte]](size)

    override def decodeToBinary(id: Int): Array[Byte] = {
      var e = entries(id)
      if (e == null) {
        e = java.util.Arrays.copyOfRange(data, offsets(id), offsets(id + 1) - gap)
        entries(id) = e
      }
      e
    }
  }

  /** The INT32 values of `d` unchanged, read from its bytes (no entry is decoded before a row reads
    * it); None if `d` holds another type. */
  def ints(d: Dictionary): Option[SparkDictionary] = d match {
    case i: IntDictionary => Some(new IntsOf(i))
    case _ => None
  }

  /** The INT64 values of `d` unchanged. */
  def longs(d: Dictionary): Option[SparkDictionary] = d match {
    case l: LongDictionary => Some(new LongsOf(l))
    case _ => None
  }

  /** The FLOAT values of `d` unchanged. */
  def floats(d: Dictionary): Option[SparkDictionary] = d match {
    case f: FloatDictionary => Some(new FloatsOf(f))
    case _ => None
  }

  /** The DOUBLE values of `d` unchanged. */
  def doubles(d: Dictionary): Option[SparkDictionary] = d match {
    case f: DoubleDictionary => Some(new DoublesOf(f))
    case _ => None
  }

  /** The BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY values of `d` unchanged. */
  def binaries(d: Dictionary): Option[SparkDictionary] = d match {
    case b: BinaryDictionary => Some(new Binaries(b.offsets, b.data, b.gap))
    case _ => None
  }

  /** Every entry of `d` converted by `writer` itself: the writer writes ids `0 until d.size`
    * into a scratch vector of `vectorType` (the Spark type of the column it writes), whose values
    * become the entries. Exact by construction, for any writer whose `write` cannot fail on a
    * value of the dictionary: writers that check or may overflow must rule that out before
    * calling this (an entry no row references must never fail a read). */
  def throughWriter(writer: VectorWriter, d: Dictionary, vectorType: DataType): SparkDictionary = {
    val n = d.size
    val v = new OnHeapColumnVector(math.max(n, 1), vectorType)
    try {
      val replay = new DictionaryIdsReplay(d)
      replay.set(Array.tabulate(n)(identity), n)
      writer.write(replay, n, v, 0)
      vectorType match {
        case ByteType => new Ints(Array.tabulate(n)(i => v.getByte(i).toInt))
        case ShortType => new Ints(Array.tabulate(n)(i => v.getShort(i).toInt))
        case IntegerType | DateType | _: YearMonthIntervalType => new Ints(Array.tabulate(n)(v.getInt))
        case t: DecimalType if t.precision <= Decimal.MAX_INT_DIGITS => new Ints(Array.tabulate(n)(v.getInt))
        case LongType | TimestampType | TimestampNTZType | _: DayTimeIntervalType =>
          new Longs(Array.tabulate(n)(v.getLong))
        case t: DecimalType if t.precision <= Decimal.MAX_LONG_DIGITS => new Longs(Array.tabulate(n)(v.getLong))
        case FloatType => new Floats(Array.tabulate(n)(v.getFloat))
        case DoubleType => new Doubles(Array.tabulate(n)(v.getDouble))
        case _: StringType | BinaryType | _: DecimalType =>
          val offsets = new Array[Int](n + 1)
          val out = new java.io.ByteArrayOutputStream()
          var i = 0
          while (i < n) {
            val b = v.getBinary(i)
            out.write(b, 0, b.length)
            offsets(i + 1) = out.size()
            i += 1
          }
          new Binaries(offsets, out.toByteArray)
        case other => throw new IllegalArgumentException(s"no Spark dictionary representation for $other")
      }
    } finally v.close()
  }
}
