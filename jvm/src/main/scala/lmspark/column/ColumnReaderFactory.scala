package lmspark.column

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, CompressionCodecName}
import org.apache.parquet.schema.LogicalTypeAnnotation
import org.apache.parquet.schema.LogicalTypeAnnotation._
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.types._

import lmspark.io.{Decompressors, PageSource}

/** The one place that pairs a Parquet leaf (physical type + logical annotation) with a Spark type.
  * `unsupportedReason` answers before any byte is read whether we can read a leaf (and a chunk);
  * `create` builds the reader with the matching [[VectorWriter]]. Anything not paired here is
  * unsupported, so the scan layer can hand the file to Spark's own reader. */
object ColumnReaderFactory {

  /** Data page encodings every physical type allows. */
  private val CommonDataEncodings: Set[Encoding] =
    Set(Encoding.PLAIN, Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY)
  private val DictionaryPageEncodings: Set[Encoding] = Set(Encoding.PLAIN, Encoding.PLAIN_DICTIONARY)
  /** Level encodings, also listed in chunk metadata. */
  private val LevelEncodings: Set[Encoding] = Set(Encoding.RLE, Encoding.BIT_PACKED)

  /** Value encodings our decoders implement for `physical` values: all the spec allows per physical
    * type (INT96: PLAIN and dictionary). [[PageDecoders]] builds a decoder for each non-dictionary one. */
  private[column] def dataEncodings(physical: PrimitiveTypeName): Set[Encoding] = physical match {
    case PrimitiveTypeName.BOOLEAN => CommonDataEncodings + Encoding.RLE
    case PrimitiveTypeName.INT32 | PrimitiveTypeName.INT64 =>
      CommonDataEncodings + Encoding.DELTA_BINARY_PACKED + Encoding.BYTE_STREAM_SPLIT
    case PrimitiveTypeName.FLOAT | PrimitiveTypeName.DOUBLE => CommonDataEncodings + Encoding.BYTE_STREAM_SPLIT
    case PrimitiveTypeName.BINARY =>
      CommonDataEncodings + Encoding.DELTA_LENGTH_BYTE_ARRAY + Encoding.DELTA_BYTE_ARRAY
    case PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY =>
      CommonDataEncodings + Encoding.DELTA_BYTE_ARRAY + Encoding.BYTE_STREAM_SPLIT
    case PrimitiveTypeName.INT96 => CommonDataEncodings
  }

  /** The codecs the page source can decompress. */
  private val Codecs: Set[CompressionCodecName] = Decompressors.supported

  /** None when we can read this leaf as `sparkType`; otherwise a short human reason naming both
    * types, e.g. "INT96 as LongType is not supported". */
  def unsupportedReason(descriptor: ColumnDescriptor, sparkType: DataType): Option[String] =
    plan(descriptor, sparkType, ColumnReadOptions()).left.toOption

  /** Same, additionally checking the chunk's encodings (which include level encodings), encoding
    * statistics when present, encryption and codec. */
  def unsupportedReason(
      descriptor: ColumnDescriptor,
      sparkType: DataType,
      chunk: ColumnChunkMetaData): Option[String] =
    unsupportedReason(descriptor, sparkType).orElse(chunkReason(descriptor, chunk))

  def create(
      descriptor: ColumnDescriptor,
      sparkType: DataType,
      pages: PageSource,
      rowCount: Long,
      options: ColumnReadOptions,
      dictionary: Option[lmspark.decode.Dictionary] = None): ColumnReader =
    plan(descriptor, sparkType, options) match {
      case Right(writer) =>
        new FlatColumnReader(descriptor, pages, rowCount, writer, options.preserveDictionary, dictionary.orNull)
      case Left(reason) =>
        throw new IllegalArgumentException(s"cannot read column ${pages.context.columnPath}: $reason")
    }

  /** The reader of a leaf of a nested column: its levels kept, values written at slots from
    * definition level `slotDef` on ([[NestedLeafReader]]); `repDefs(r)` is the definition level of
    * its r-th repeated ancestor (index 0 unused); `chunkValues` the chunk's `num_values` (-1: unknown). */
  def createNestedLeaf(
      descriptor: ColumnDescriptor,
      sparkType: DataType,
      pages: PageSource,
      rowCount: Long,
      options: ColumnReadOptions,
      slotDef: Int,
      repDefs: Array[Int],
      chunkValues: Long,
      dictionary: Option[lmspark.decode.Dictionary] = None): NestedLeafReader =
    plan(descriptor, sparkType, options) match {
      case Right(writer) =>
        new NestedLeafReader(descriptor, pages, rowCount, writer, slotDef, dictionary.orNull, repDefs, chunkValues)
      case Left(reason) =>
        throw new IllegalArgumentException(s"cannot read column ${pages.context.columnPath}: $reason")
    }

  /** A fresh writer for the pair (the one `create` gives its reader), or why there is none:
    * [[SparkValues]] converts statistics, page indexes and dictionaries through it, so that
    * metadata and rows agree. */
  def writerFor(descriptor: ColumnDescriptor, sparkType: DataType, options: ColumnReadOptions): Either[String, VectorWriter] =
    plan(descriptor, sparkType, options)

  /** The physical values (java `Integer`, `Long`, `Float`, `Double` or parquet-java `Binary`, as a
    * bloom filter hashes them) that the pair's writer turns into a value equal to `value` under
    * Spark's `=`, `value` being a non-null Catalyst value of `sparkType`: the inverse of the
    * writer, for bloom filter probes.
    *  - `None`: unsure (no exact inverse: INT96, BOOLEAN, LEGACY rebased or checked dates and
    *    timestamps, BINARY decimals whose byte form is the writer's choice, NaN, strings under a
    *    collation other than the default UTF8_BINARY, narrowing reads of integers not annotated as narrow);
    *  - `Some(Nil)`: no physical value of this column can equal `value` (an out-of-range integer,
    *    a fraction for an integer column, a decimal with more digits than the file's scale);
    *  - otherwise every such physical value (two for a float zero: `0.0` and `-0.0`). */
  def physicalLiterals(descriptor: ColumnDescriptor, sparkType: DataType, options: ColumnReadOptions,
      value: Any): Option[Seq[Any]] = {
    if (plan(descriptor, sparkType, options).isLeft) return None
    val t = descriptor.getPrimitiveType
    val ann = t.getLogicalTypeAnnotation
    def int(v: Long): Option[Seq[Any]] =
      Some(if (v >= Int.MinValue && v <= Int.MaxValue) Seq(Int.box(v.toInt)) else Nil)
    def inRange(v: Long, lo: Long, hi: Long): Option[Seq[Any]] = Some(if (v >= lo && v <= hi) Seq(Int.box(v.toInt)) else Nil)
    def unscaled(d: Decimal): Option[java.math.BigInteger] =
      try Some(d.toJavaBigDecimal.setScale(decimalScale(ann), java.math.RoundingMode.UNNECESSARY).unscaledValue)
      catch { case _: ArithmeticException => None }
    def floats(f: Float): Option[Seq[Any]] =
      if (f.isNaN) None
      else if (f == 0.0f) Some(Seq(Float.box(0.0f), Float.box(-0.0f)))
      else Some(Seq(Float.box(f)))
    def integral(d: Double): Option[Long] =
      if (d.isNaN || d.isInfinite || d != math.rint(d) || math.abs(d) > 9.0e15) None else Some(d.toLong)
    val noRebase = options.rebaseCheck == RebaseCheck.None
    val microsPerDay = 86400L * 1000000L
    (t.getPrimitiveTypeName, sparkType, value) match {
      case (PrimitiveTypeName.INT32, IntegerType, v: Int) => Some(Seq(Int.box(v)))
      case (PrimitiveTypeName.INT32, ByteType, v: Byte) => ann match {
        case i: IntLogicalTypeAnnotation if i.getBitWidth == 8 => Some(Seq(Int.box(if (i.isSigned) v.toInt else v & 0xff)))
        case _ => None
      }
      case (PrimitiveTypeName.INT32, ShortType, v: Short) => ann match {
        case i: IntLogicalTypeAnnotation if i.getBitWidth == 16 => Some(Seq(Int.box(if (i.isSigned) v.toInt else v & 0xffff)))
        case i: IntLogicalTypeAnnotation if i.getBitWidth == 8 =>
          if (i.isSigned) inRange(v.toLong, -128, 127) else inRange(v.toLong, 0, 255)
        case _ => None
      }
      case (PrimitiveTypeName.INT32, LongType, v: Long) =>
        if (isUnsignedInt(ann, 32)) { if (v >= 0 && v <= 0xffffffffL) Some(Seq(Int.box(v.toInt))) else Some(Nil) }
        else int(v)
      case (PrimitiveTypeName.INT32, DoubleType, v: Double) =>
        if (v.isNaN) Some(Nil) else Some(integral(v).toSeq.flatMap(l => int(l).get))
      case (PrimitiveTypeName.INT32, DateType, v: Int) => if (noRebase) Some(Seq(Int.box(v))) else None
      case (PrimitiveTypeName.INT32, TimestampNTZType, v: Long) =>
        if (!noRebase) None else if (v % microsPerDay != 0) Some(Nil) else int(v / microsPerDay)
      case (PrimitiveTypeName.INT32, _: DecimalType, d: Decimal) =>
        Some(unscaled(d).filter(_.bitLength < 32).map(u => Int.box(u.intValue)).toSeq)

      case (PrimitiveTypeName.INT64, LongType, v: Long) => Some(Seq(Long.box(v)))
      case (PrimitiveTypeName.INT64, TimestampType | TimestampNTZType, v: Long) =>
        if (sparkType == TimestampType && !noRebase) None
        else if (isTimestamp(ann, TimeUnit.MICROS)) Some(Seq(Long.box(v)))
        else if (isTimestamp(ann, TimeUnit.MILLIS)) Some(if (v % 1000 == 0) Seq(Long.box(v / 1000)) else Nil)
        else None
      case (PrimitiveTypeName.INT64, dt: DecimalType, d: Decimal) if dt.precision == 20 && dt.scale == 0 && isUnsignedInt(ann, 64) =>
        Some(unscaled(d).filter(u => u.signum >= 0 && u.bitLength <= 64).map(u => Long.box(u.longValue)).toSeq)
      case (PrimitiveTypeName.INT64, _: DecimalType, d: Decimal) =>
        Some(unscaled(d).filter(_.bitLength < 64).map(u => Long.box(u.longValue)).toSeq)

      case (PrimitiveTypeName.FLOAT, FloatType, v: Float) => floats(v)
      case (PrimitiveTypeName.FLOAT, DoubleType, v: Double) =>
        if (v.isNaN) None else if (v.toFloat.toDouble == v) floats(v.toFloat) else Some(Nil)
      case (PrimitiveTypeName.DOUBLE, DoubleType, v: Double) =>
        if (v.isNaN) None
        else if (v == 0.0) Some(Seq(Double.box(0.0), Double.box(-0.0)))
        else Some(Seq(Double.box(v)))

      case (PrimitiveTypeName.BINARY, st: StringType, v: org.apache.spark.unsafe.types.UTF8String) =>
        if (lmspark.shim.SparkLineApis.ordersByBytes(st)) Some(Seq(org.apache.parquet.io.api.Binary.fromConstantByteArray(v.getBytes)))
        else None
      case (PrimitiveTypeName.BINARY, BinaryType, v: Array[Byte]) =>
        Some(Seq(org.apache.parquet.io.api.Binary.fromConstantByteArray(v.clone())))
      case (PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, BinaryType, v: Array[Byte]) =>
        Some(if (v.length == t.getTypeLength) Seq(org.apache.parquet.io.api.Binary.fromConstantByteArray(v.clone())) else Nil)
      case (PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, _: DecimalType, d: Decimal) =>
        Some(unscaled(d).filter(_.bitLength < 8 * t.getTypeLength).map { u =>
          // Big-endian two's complement, sign-extended to the fixed length: the only byte form.
          val raw = u.toByteArray
          val out = Array.fill[Byte](t.getTypeLength)(if (u.signum < 0) -1 else 0)
          System.arraycopy(raw, 0, out, out.length - raw.length, raw.length)
          org.apache.parquet.io.api.Binary.fromConstantByteArray(out)
        }.toSeq)
      case _ => None
    }
  }

  private def chunkReason(descriptor: ColumnDescriptor, chunk: ColumnChunkMetaData): Option[String] = {
    val physical = descriptor.getPrimitiveType.getPrimitiveTypeName
    val okData = dataEncodings(physical)
    if (chunk.isEncrypted) return Some("encrypted column chunks are not supported")
    if (!Codecs.contains(chunk.getCodec)) return Some(s"compression codec ${chunk.getCodec} is not supported")
    val bad = chunk.getEncodings.asScala.filterNot(e => okData.contains(e) || LevelEncodings.contains(e))
    if (bad.nonEmpty)
      return Some(s"encoding ${bad.map(_.name).toSeq.sorted.mkString(", ")} is not supported for $physical")
    val stats = chunk.getEncodingStats
    if (stats != null) {
      val data = stats.getDataEncodings.asScala
      val badData = data.filterNot(okData.contains)
      if (badData.nonEmpty)
        return Some(s"data page encoding ${badData.map(_.name).toSeq.sorted.mkString(", ")} is not supported " +
          s"for ${descriptor.getPrimitiveType.getPrimitiveTypeName}")
      val badDict = stats.getDictionaryEncodings.asScala.filterNot(DictionaryPageEncodings.contains)
      if (badDict.nonEmpty)
        return Some(s"dictionary page encoding ${badDict.map(_.name).toSeq.sorted.mkString(", ")} is not supported")
    }
    None
  }

  private def describe(descriptor: ColumnDescriptor): String = {
    val t = descriptor.getPrimitiveType
    val base = t.getPrimitiveTypeName match {
      case PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY => s"FIXED_LEN_BYTE_ARRAY(${t.getTypeLength})"
      case other => other.name
    }
    Option(t.getLogicalTypeAnnotation).fold(base)(a => s"$base $a")
  }

  /** The writer for this pairing, or why there is none. */
  private def plan(
      descriptor: ColumnDescriptor,
      sparkType: DataType,
      options: ColumnReadOptions): Either[String, VectorWriter] = {
    val t = descriptor.getPrimitiveType
    val ann: LogicalTypeAnnotation = t.getLogicalTypeAnnotation
    if (sparkType == NullType)
      return if (lmspark.shim.NullTypeReads.supported) Right(VectorWriter.Nulls)
        else Left(s"${describe(descriptor)} as NullType is not read by this Spark line's vectorized reader")
    if (!isKnownAnnotation(ann))
      return Left(s"${describe(descriptor)}: logical type $ann is not supported")
    lmspark.shim.LineReadRules.refusal(descriptor, sparkType) match {
      case Some(why) => return Left(why)
      case None =>
    }
    val rebase = options.rebaseCheck
    import ConvertingWriters._
    // The order of the cases follows Spark 4.1's ParquetVectorUpdaterFactory.getUpdater, so that
    // a pair is accepted exactly when Spark's vectorized reader accepts it, with the same values.
    val writer: VectorWriter = (t.getPrimitiveTypeName, sparkType) match {
      case (PrimitiveTypeName.BOOLEAN, BooleanType) => VectorWriter.Booleans

      case (PrimitiveTypeName.INT32, IntegerType) => VectorWriter.Ints
      case (PrimitiveTypeName.INT32, dt: DecimalType) if canReadAsIntDecimal(descriptor, dt) => VectorWriter.Ints
      case (PrimitiveTypeName.INT32, LongType) if isUnsignedInt(ann, 32) => new UnsignedIntsAsLongs
      case (PrimitiveTypeName.INT32, LongType) => new IntsAsLongs
      case (PrimitiveTypeName.INT32, dt: DecimalType) if canReadAsLongDecimal(descriptor, dt) => new IntsAsLongs
      case (PrimitiveTypeName.INT32, dt: DecimalType) if canReadAsBinaryDecimal(descriptor, dt) =>
        new IntsAsBinaryDecimals
      case (PrimitiveTypeName.INT32, ByteType) => new VectorWriter.Bytes
      case (PrimitiveTypeName.INT32, ShortType) => new VectorWriter.Shorts
      case (PrimitiveTypeName.INT32, DoubleType) => new IntsAsDoubles
      case (PrimitiveTypeName.INT32, DateType) => rebase match {
        case RebaseCheck.None => VectorWriter.Ints
        case RebaseCheck.FailOnAncient => VectorWriter.DatesFailOnAncient
        case _: RebaseCheck.Legacy => new DatesRebased
      }
      case (PrimitiveTypeName.INT32, TimestampNTZType) if ann.isInstanceOf[DateLogicalTypeAnnotation] =>
        new DatesAsTimestampNtz(rebase)
      case (PrimitiveTypeName.INT32, dt: DecimalType) if canReadAsDecimal(descriptor, dt) =>
        new IntsAsDecimals(decimalScale(ann), dt)

      case (PrimitiveTypeName.INT64, LongType) => VectorWriter.Longs
      case (PrimitiveTypeName.INT64, dt: DecimalType) if canReadAsLongDecimal(descriptor, dt) => VectorWriter.Longs
      case (PrimitiveTypeName.INT64, dt: DecimalType) if canReadAsBinaryDecimal(descriptor, dt) =>
        new LongsAsBinaryDecimals
      case (PrimitiveTypeName.INT64, dt: DecimalType) if dt.precision == 20 && dt.scale == 0 && isUnsignedInt(ann, 64) =>
        new UnsignedLongsAsDecimals
      case (PrimitiveTypeName.INT64, TimestampType) if isTimestamp(ann, TimeUnit.MICROS) => rebase match {
        case RebaseCheck.None => VectorWriter.Longs
        case RebaseCheck.FailOnAncient => VectorWriter.MicrosFailOnAncient
        case RebaseCheck.Legacy(tz) => new TimestampsRebased(millis = false, tz)
      }
      case (PrimitiveTypeName.INT64, TimestampType) if isTimestamp(ann, TimeUnit.MILLIS) => rebase match {
        case RebaseCheck.None => new VectorWriter.MillisAsMicros(false)
        case RebaseCheck.FailOnAncient => new VectorWriter.MillisAsMicros(true)
        case RebaseCheck.Legacy(tz) => new TimestampsRebased(millis = true, tz)
      }
      // Spark accepts TIMESTAMP_NTZ over any TIMESTAMP(MICROS/MILLIS) here; an instant
      // (isAdjustedToUTC) read as NTZ is left to Spark, which may refuse it earlier.
      case (PrimitiveTypeName.INT64, TimestampNTZType) if isTimestamp(ann, TimeUnit.MICROS) && !isUtc(ann) =>
        VectorWriter.Longs
      case (PrimitiveTypeName.INT64, TimestampNTZType) if isTimestamp(ann, TimeUnit.MILLIS) && !isUtc(ann) =>
        new VectorWriter.MillisAsMicros(false)
      case (PrimitiveTypeName.INT64, dt: DecimalType) if canReadAsDecimal(descriptor, dt) =>
        new LongsAsDecimals(decimalScale(ann), dt)

      case (PrimitiveTypeName.FLOAT, FloatType) => VectorWriter.Floats
      case (PrimitiveTypeName.FLOAT, DoubleType) => new FloatsAsDoubles
      case (PrimitiveTypeName.DOUBLE, DoubleType) => VectorWriter.Doubles

      case (PrimitiveTypeName.INT96, TimestampNTZType) => new Int96Timestamps(RebaseCheck.None, None)
      case (PrimitiveTypeName.INT96, TimestampType) =>
        new Int96Timestamps(options.int96Rebase, options.int96ConvertTz.filter(_ != java.time.ZoneOffset.UTC))

      case (PrimitiveTypeName.BINARY, _: StringType | BinaryType) => VectorWriter.Binaries
      case (PrimitiveTypeName.BINARY, dt: DecimalType) if canReadAsBinaryDecimal(descriptor, dt) =>
        new VectorWriter.BinaryDecimals(dt.precision)
      case (PrimitiveTypeName.BINARY, dt: DecimalType) if canReadAsDecimal(descriptor, dt) =>
        if (decimalScale(ann) == dt.scale) new VectorWriter.BinaryDecimals(dt.precision)
        else new BinariesAsDecimals(decimalScale(ann), dt)

      case (PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, dt: DecimalType)
          if canReadAsIntDecimal(descriptor, dt) || canReadAsLongDecimal(descriptor, dt) ||
            canReadAsBinaryDecimal(descriptor, dt) => new VectorWriter.BinaryDecimals(dt.precision)
      case (PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, BinaryType) => VectorWriter.Binaries
      case (PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, dt: DecimalType) if canReadAsDecimal(descriptor, dt) =>
        new BinariesAsDecimals(decimalScale(ann), dt)

      case _ => return Left(s"${describe(descriptor)} as $sparkType is not supported")
    }
    Right(writer)
  }

  /** Annotations whose values we know how to read; anything else (FLOAT16, GEOMETRY, GEOGRAPHY,
    * VARIANT, INTERVAL, TIME, UNKNOWN, future types) goes to Spark's reader with a reason. */
  private def isKnownAnnotation(a: LogicalTypeAnnotation): Boolean = a match {
    case null => true
    case _: IntLogicalTypeAnnotation | _: DateLogicalTypeAnnotation | _: DecimalLogicalTypeAnnotation |
        _: TimestampLogicalTypeAnnotation | _: StringLogicalTypeAnnotation | _: EnumLogicalTypeAnnotation |
        _: JsonLogicalTypeAnnotation | _: BsonLogicalTypeAnnotation | _: UUIDLogicalTypeAnnotation => true
    // UNKNOWN (always null): Spark reads it by its physical type, or as NullType (see `plan`).
    case a if a.getClass.getSimpleName == "UnknownLogicalTypeAnnotation" => true
    case _ => false
  }

  private def isUnsignedInt(a: LogicalTypeAnnotation, width: Int): Boolean = a match {
    case i: IntLogicalTypeAnnotation => !i.isSigned && i.getBitWidth == width
    case _ => false
  }

  private def isTimestamp(a: LogicalTypeAnnotation, unit: TimeUnit): Boolean = a match {
    case ts: TimestampLogicalTypeAnnotation => ts.getUnit == unit
    case _ => false
  }

  private def isUtc(a: LogicalTypeAnnotation): Boolean = a match {
    case ts: TimestampLogicalTypeAnnotation => ts.isAdjustedToUTC
    case _ => false
  }

  private def decimalScale(a: LogicalTypeAnnotation): Int = a match {
    case d: DecimalLogicalTypeAnnotation => d.getScale
    case _ => 0
  }

  // Spark's decimal read rules (ParquetVectorUpdaterFactory.isDecimalTypeMatched & co): a DECIMAL
  // may be read as a decimal whose scale and precision grow by at least as much; a signed (or
  // unannotated) INT32 / INT64 as a decimal with at least 10 / 20 integer digits.
  private def isDecimalTypeMatched(descriptor: ColumnDescriptor, dt: DecimalType): Boolean =
    descriptor.getPrimitiveType.getLogicalTypeAnnotation match {
      case d: DecimalLogicalTypeAnnotation =>
        val scaleIncrease = dt.scale - d.getScale
        val precisionIncrease = dt.precision - d.getPrecision
        scaleIncrease >= 0 && precisionIncrease >= scaleIncrease
      case a if a == null || isSignedIntAnnotation(a) =>
        val integerDigits = dt.precision - dt.scale
        descriptor.getPrimitiveType.getPrimitiveTypeName match {
          case PrimitiveTypeName.INT32 => integerDigits >= 10 // DecimalType.IntDecimal
          case PrimitiveTypeName.INT64 => integerDigits >= 20 // DecimalType.LongDecimal
          case _ => false
        }
      case _ => false
    }

  private def isSignedIntAnnotation(a: LogicalTypeAnnotation): Boolean = a match {
    case i: IntLogicalTypeAnnotation => i.isSigned
    case _ => false
  }

  private def isSameDecimalScale(descriptor: ColumnDescriptor, dt: DecimalType): Boolean =
    descriptor.getPrimitiveType.getLogicalTypeAnnotation match {
      case d: DecimalLogicalTypeAnnotation => d.getScale == dt.scale
      case a if a == null || isSignedIntAnnotation(a) => dt.scale == 0
      case _ => false
    }

  private def canReadAsDecimal(descriptor: ColumnDescriptor, dt: DecimalType): Boolean =
    isDecimalTypeMatched(descriptor, dt)

  private def canReadAsIntDecimal(descriptor: ColumnDescriptor, dt: DecimalType): Boolean =
    dt.precision <= Decimal.MAX_INT_DIGITS && isDecimalTypeMatched(descriptor, dt) && isSameDecimalScale(descriptor, dt)

  private def canReadAsLongDecimal(descriptor: ColumnDescriptor, dt: DecimalType): Boolean =
    dt.precision > Decimal.MAX_INT_DIGITS && dt.precision <= Decimal.MAX_LONG_DIGITS &&
      isDecimalTypeMatched(descriptor, dt) && isSameDecimalScale(descriptor, dt)

  private def canReadAsBinaryDecimal(descriptor: ColumnDescriptor, dt: DecimalType): Boolean =
    dt.precision > Decimal.MAX_LONG_DIGITS && isDecimalTypeMatched(descriptor, dt) && isSameDecimalScale(descriptor, dt)

  /** None when some Parquet leaf can be read as `sparkType`; otherwise why no file could be.
    * The plan-level check, made before any footer is read; it must agree with `plan`. */
  def unsupportedSparkType(sparkType: DataType): Option[String] = sparkType match {
    case s: StructType if s.isEmpty => Some("an empty struct is not supported")
    case s: StructType => s.fields.iterator.flatMap(f => unsupportedSparkType(f.dataType)).take(1).toList.headOption
    case a: ArrayType => unsupportedSparkType(a.elementType)
    case m: MapType => unsupportedSparkType(m.keyType).orElse(unsupportedSparkType(m.valueType))
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType |
        DateType | TimestampType | TimestampNTZType | BinaryType | _: StringType | _: DecimalType | NullType => None
    case other => Some(s"type ${other.catalogString} is not supported")
  }
}
