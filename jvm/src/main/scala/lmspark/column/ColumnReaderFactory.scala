package lmspark.column

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, CompressionCodecName}
import org.apache.parquet.schema.LogicalTypeAnnotation
import org.apache.parquet.schema.LogicalTypeAnnotation._
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.types._

import lmspark.io.PageSource

/** The one place that pairs a Parquet leaf (physical type + logical annotation) with a Spark type.
  * `unsupportedReason` answers before any byte is read whether we can read a leaf (and a chunk);
  * `create` builds the reader with the matching [[VectorWriter]]. Anything not paired here is
  * unsupported, so the scan layer can hand the file to Spark's own reader. */
object ColumnReaderFactory {

  /** Value encodings our decoders implement (RLE only for BOOLEAN values). Level encodings RLE and
    * BIT_PACKED are also accepted in chunk metadata. */
  private val DataEncodings: Set[Encoding] = Set(Encoding.PLAIN, Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY)
  private val DictionaryPageEncodings: Set[Encoding] = Set(Encoding.PLAIN, Encoding.PLAIN_DICTIONARY)
  private val ChunkEncodings: Set[Encoding] = DataEncodings + Encoding.RLE + Encoding.BIT_PACKED

  private val Codecs: Set[CompressionCodecName] = Set(
    CompressionCodecName.UNCOMPRESSED,
    CompressionCodecName.SNAPPY,
    CompressionCodecName.GZIP,
    CompressionCodecName.ZSTD,
    CompressionCodecName.LZ4_RAW)

  /** None when we can read this leaf as `sparkType`; otherwise a short human reason naming both
    * types, e.g. "INT96 as TimestampType is not supported". */
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
    val isBoolean = descriptor.getPrimitiveType.getPrimitiveTypeName == PrimitiveTypeName.BOOLEAN
    if (chunk.isEncrypted) return Some("encrypted column chunks are not supported")
    if (!Codecs.contains(chunk.getCodec)) return Some(s"compression codec ${chunk.getCodec} is not supported")
    val bad = chunk.getEncodings.asScala.filterNot(ChunkEncodings.contains)
    if (bad.nonEmpty) return Some(s"encoding ${bad.map(_.name).toSeq.sorted.mkString(", ")} is not supported")
    val stats = chunk.getEncodingStats
    if (stats != null) {
      val data = stats.getDataEncodings.asScala
      val okData = if (isBoolean) DataEncodings + Encoding.RLE else DataEncodings
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
    val failOnAncient = options.rebaseCheck == RebaseCheck.FailOnAncient
    val writer: VectorWriter = (t.getPrimitiveTypeName, ann, sparkType) match {
      case (PrimitiveTypeName.BOOLEAN, null, BooleanType) => VectorWriter.Booleans

      case (PrimitiveTypeName.INT32, a, IntegerType) if a == null || isSignedInt(a, 8, 16, 32) => VectorWriter.Ints
      case (PrimitiveTypeName.INT32, a, ShortType) if isSignedInt(a, 8, 16) => new VectorWriter.Shorts
      case (PrimitiveTypeName.INT32, a, ByteType) if isSignedInt(a, 8) => new VectorWriter.Bytes
      case (PrimitiveTypeName.INT32, _: DateLogicalTypeAnnotation, DateType) =>
        if (failOnAncient) VectorWriter.DatesFailOnAncient else VectorWriter.Ints
      case (PrimitiveTypeName.INT32, d: DecimalLogicalTypeAnnotation, dt: DecimalType)
          if sameDecimal(d, dt) && dt.precision <= Decimal.MAX_INT_DIGITS => VectorWriter.Ints

      case (PrimitiveTypeName.INT64, a, LongType) if a == null || isSignedInt(a, 64) => VectorWriter.Longs
      case (PrimitiveTypeName.INT64, ts: TimestampLogicalTypeAnnotation, TimestampType) if ts.isAdjustedToUTC =>
        ts.getUnit match {
          case TimeUnit.MICROS => if (failOnAncient) VectorWriter.MicrosFailOnAncient else VectorWriter.Longs
          case TimeUnit.MILLIS => new VectorWriter.MillisAsMicros(failOnAncient)
          case _ => return Left(s"${describe(descriptor)} as $sparkType is not supported")
        }
      case (PrimitiveTypeName.INT64, ts: TimestampLogicalTypeAnnotation, TimestampNTZType) if !ts.isAdjustedToUTC =>
        // As in Spark, TIMESTAMP_NTZ has no legacy files and is never rebased or checked.
        ts.getUnit match {
          case TimeUnit.MICROS => VectorWriter.Longs
          case TimeUnit.MILLIS => new VectorWriter.MillisAsMicros(false)
          case _ => return Left(s"${describe(descriptor)} as $sparkType is not supported")
        }
      case (PrimitiveTypeName.INT64, d: DecimalLogicalTypeAnnotation, dt: DecimalType)
          if sameDecimal(d, dt) && dt.precision <= Decimal.MAX_LONG_DIGITS && dt.precision > Decimal.MAX_INT_DIGITS =>
        VectorWriter.Longs

      case (PrimitiveTypeName.FLOAT, null, FloatType) => VectorWriter.Floats
      case (PrimitiveTypeName.DOUBLE, null, DoubleType) => VectorWriter.Doubles

      case (PrimitiveTypeName.BINARY, a, _: StringType) if a == null || isStringLike(a) => VectorWriter.Binaries
      case (PrimitiveTypeName.BINARY, a, BinaryType) if a == null || isStringLike(a) => VectorWriter.Binaries
      case (PrimitiveTypeName.BINARY, d: DecimalLogicalTypeAnnotation, dt: DecimalType) if sameDecimal(d, dt) =>
        new VectorWriter.BinaryDecimals(dt.precision)

      case (PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, null, BinaryType) => VectorWriter.Binaries
      case (PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, d: DecimalLogicalTypeAnnotation, dt: DecimalType)
          if sameDecimal(d, dt) => new VectorWriter.BinaryDecimals(dt.precision)

      case _ => return Left(s"${describe(descriptor)} as $sparkType is not supported")
    }
    Right(writer)
  }

  private def isSignedInt(a: LogicalTypeAnnotation, widths: Int*): Boolean = a match {
    case i: IntLogicalTypeAnnotation => i.isSigned && widths.contains(i.getBitWidth)
    case _ => false
  }

  private def isStringLike(a: LogicalTypeAnnotation): Boolean = a match {
    case _: StringLogicalTypeAnnotation | _: EnumLogicalTypeAnnotation | _: JsonLogicalTypeAnnotation => true
    case _ => false
  }

  private def sameDecimal(d: DecimalLogicalTypeAnnotation, dt: DecimalType): Boolean =
    d.getPrecision == dt.precision && d.getScale == dt.scale

  /** None when some Parquet leaf can be read as `sparkType`; otherwise why no file could be.
    * The plan-level check, made before any footer is read; it must agree with `plan`. */
  def unsupportedSparkType(sparkType: DataType): Option[String] = sparkType match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType |
        DateType | TimestampType | TimestampNTZType | BinaryType | _: StringType | _: DecimalType => None
    case other => Some(s"type ${other.catalogString} is not supported")
  }
}
