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
      options: ColumnReadOptions): ColumnReader =
    plan(descriptor, sparkType, options) match {
      case Right(writer) => new FlatColumnReader(descriptor, pages, rowCount, writer, options.preserveDictionary)
      case Left(reason) =>
        throw new IllegalArgumentException(s"cannot read column ${pages.context.columnPath}: $reason")
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
    val path = descriptor.getPath.mkString(".")
    if (descriptor.getMaxRepetitionLevel > 0)
      return Left(s"repeated or nested column $path (max repetition level ${descriptor.getMaxRepetitionLevel}) " +
        "is not supported")
    if (descriptor.getMaxDefinitionLevel > 1)
      return Left(s"nested column $path (max definition level ${descriptor.getMaxDefinitionLevel}) is not supported")
    val t = descriptor.getPrimitiveType
    val ann: LogicalTypeAnnotation = t.getLogicalTypeAnnotation
    if (!isKnownAnnotation(ann))
      return Left(s"${describe(descriptor)}: logical type $ann is not supported")
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
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType |
        DateType | TimestampType | TimestampNTZType | BinaryType | _: StringType | _: DecimalType => None
    case other => Some(s"type ${other.catalogString} is not supported")
  }
}
