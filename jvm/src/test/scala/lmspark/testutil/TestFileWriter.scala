package lmspark.testutil

import java.nio.file.{Files, Path}

import lmspark.testutil.ScalaCompat.ArraySeq
import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.parquet.column.{ColumnDescriptor, Encoding, ParquetProperties}
import org.apache.parquet.column.ParquetProperties.WriterVersion
import org.apache.parquet.column.values.ValuesWriter
import org.apache.parquet.column.values.bytestreamsplit.ByteStreamSplitValuesWriter._
import org.apache.parquet.column.values.delta.{DeltaBinaryPackingValuesWriterForInteger, DeltaBinaryPackingValuesWriterForLong}
import org.apache.parquet.column.values.deltalengthbytearray.DeltaLengthByteArrayValuesWriter
import org.apache.parquet.column.values.deltastrings.DeltaByteArrayWriter
import org.apache.parquet.column.values.dictionary.DictionaryValuesWriter
import org.apache.parquet.column.values.dictionary.DictionaryValuesWriter._
import org.apache.parquet.column.values.factory.ValuesWriterFactory
import org.apache.parquet.column.values.fallback.FallbackValuesWriter
import org.apache.parquet.column.values.plain.{BooleanPlainValuesWriter, FixedLenByteArrayPlainValuesWriter, PlainValuesWriter}
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridValuesWriter
import org.apache.parquet.hadoop.{CodecFactory, ColumnChunkPageWriteStore, ParquetFileWriter}
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.{LogicalTypeAnnotation, MessageType, PrimitiveType, Type, Types}
import org.apache.parquet.schema.LogicalTypeAnnotation.DecimalLogicalTypeAnnotation
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

/** How a test file encodes its values, and the page shape that goes with it.
  * `pageRowLimit` / `pageBytes`: page size limits (the delta modes use longer pages so that a
  * DELTA_BINARY_PACKED page spans several 128-value blocks and ends in a partial one). */
sealed abstract class EncMode(
    val usesDictionary: Boolean,
    val fallsBack: Boolean,
    val pageRowLimit: Int,
    val pageBytes: Int)
object EncMode {
  /** Dictionary disabled: PLAIN values (RLE booleans in v2). */
  case object Plain extends EncMode(false, false, 97, 1024)
  /** Low-cardinality values and a large dictionary limit: every page dictionary-encoded. */
  case object Dict extends EncMode(true, false, 97, 1024)
  /** Low-cardinality values first, then high-cardinality values with a tiny dictionary limit: the
    * chunk starts with dictionary pages and falls back to PLAIN pages mid-chunk. */
  case object Fallback extends EncMode(true, true, 97, 1024)
  /** Dictionary disabled, DELTA encodings: DELTA_BINARY_PACKED INT32 / INT64, DELTA_BYTE_ARRAY for
    * string-like BYTE_ARRAY (strings share prefixes) and FIXED_LEN_BYTE_ARRAY, DELTA_LENGTH_BYTE_ARRAY
    * for other BYTE_ARRAY (binary, decimal). FLOAT / DOUBLE have no DELTA encoding: PLAIN. */
  case object Delta extends EncMode(false, false, 331, 16384)
  /** Dictionary disabled, BYTE_STREAM_SPLIT for INT32 / INT64 / FLOAT / DOUBLE / FIXED_LEN_BYTE_ARRAY;
    * BYTE_ARRAY (no BYTE_STREAM_SPLIT) gets the DELTA encoding that `Delta` does not give it. */
  case object Bss extends EncMode(false, false, 331, 16384)
  /** As `Fallback`, but falling back the way parquet-java's v2 writer does: to DELTA_BINARY_PACKED
    * INT32 / INT64 and DELTA_BYTE_ARRAY BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY pages; FLOAT / DOUBLE
    * (which v2 would fall back to PLAIN, as `Fallback` does) fall back to BYTE_STREAM_SPLIT. */
  case object DictDelta extends EncMode(true, true, 331, 16384)
  // No default constructor arguments above: they would live in this object, and a case object
  // initialised first would then see `all` built while it is still null.
  lazy val all: Seq[EncMode] = Seq(Plain, Dict, Fallback, Delta, Bss, DictDelta)

  /** The value encoding `mode` writes for a column once it is not (or no longer) dictionary
    * encoded, given page version `v2`. */
  def valueEncoding(mode: EncMode, primitive: PrimitiveTypeName, annotation: LogicalTypeAnnotation,
      v2: Boolean): Encoding = {
    val stringLike = annotation != null && !annotation.isInstanceOf[DecimalLogicalTypeAnnotation]
    (mode, primitive) match {
      case (_, PrimitiveTypeName.BOOLEAN) => if (v2) Encoding.RLE else Encoding.PLAIN
      case (Delta | DictDelta, PrimitiveTypeName.INT32 | PrimitiveTypeName.INT64) => Encoding.DELTA_BINARY_PACKED
      case (Delta, PrimitiveTypeName.BINARY) =>
        if (stringLike) Encoding.DELTA_BYTE_ARRAY else Encoding.DELTA_LENGTH_BYTE_ARRAY
      case (Bss, PrimitiveTypeName.BINARY) =>
        if (stringLike) Encoding.DELTA_LENGTH_BYTE_ARRAY else Encoding.DELTA_BYTE_ARRAY
      case (Delta | DictDelta, PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY) => Encoding.DELTA_BYTE_ARRAY
      case (DictDelta, PrimitiveTypeName.BINARY) => Encoding.DELTA_BYTE_ARRAY
      case (Bss, _) | (DictDelta, _) => Encoding.BYTE_STREAM_SPLIT
      case _ => Encoding.PLAIN
    }
  }
}

/** Nullability of a test column. */
sealed abstract class Nulls(val suffix: String, val repetition: Type.Repetition)
object Nulls {
  case object Required extends Nulls("req", Type.Repetition.REQUIRED)
  case object SomeNulls extends Nulls("opt", Type.Repetition.OPTIONAL)
  case object AllNulls extends Nulls("nul", Type.Repetition.OPTIONAL)
  val all: Seq[Nulls] = Seq(Required, SomeNulls, AllNulls)
}

/** What a test file is made of. */
final case class FileConfig(codec: CompressionCodecName, v2: Boolean, mode: EncMode) {
  override def toString: String = s"$codec/${if (v2) "v2" else "v1"}/$mode"
}

/** One column of a written test file: its type, nullability and the values written per row group. */
final case class TestColumn(spec: TypeSpec, nulls: Nulls, rowGroups: IndexedSeq[IndexedSeq[Any]], tag: String = "") {
  def name: String = s"${spec.name}_${nulls.suffix}$tag"
}

/** Writes seeded test files with parquet-java's column writers and page store, so that page
  * version, value writers (PLAIN / dictionary with PLAIN or DELTA / BYTE_STREAM_SPLIT fallback /
  * DELTA / BYTE_STREAM_SPLIT / RLE booleans), codec, page row limits and dictionary size limits
  * are all under the test's control. */
object TestFileWriter {

  val rowGroupSizes: IndexedSeq[Int] = IndexedSeq(1500, 1234)

  /** Values writers as parquet-java's v1 factory builds them, but usable with v2 pages and with
    * RLE_DICTIONARY ids in v2, PLAIN / DELTA / BYTE_STREAM_SPLIT fallback as `mode` says (see
    * [[EncMode.valueEncoding]]), and RLE booleans in v2. */
  final class TestValuesWriterFactory(mode: EncMode, v2: Boolean) extends ValuesWriterFactory {
    private var props: ParquetProperties = _
    override def initialize(p: ParquetProperties): Unit = props = p

    override def newValuesWriter(d: ColumnDescriptor): ValuesWriter = {
      val alloc = props.getAllocator
      val slab = props.getInitialSlabSize
      val pageSize = props.getPageSizeThreshold
      val pt = d.getPrimitiveType
      val t = pt.getPrimitiveTypeName
      def fresh: ValuesWriter = (EncMode.valueEncoding(mode, t, pt.getLogicalTypeAnnotation, v2), t) match {
        case (Encoding.RLE, _) => new RunLengthBitPackingHybridValuesWriter(1, slab, pageSize, alloc)
        case (Encoding.PLAIN, PrimitiveTypeName.BOOLEAN) => new BooleanPlainValuesWriter
        case (Encoding.PLAIN, PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY) =>
          new FixedLenByteArrayPlainValuesWriter(pt.getTypeLength, slab, pageSize, alloc)
        case (Encoding.PLAIN, _) => new PlainValuesWriter(slab, pageSize, alloc)
        case (Encoding.DELTA_BINARY_PACKED, PrimitiveTypeName.INT32) =>
          new DeltaBinaryPackingValuesWriterForInteger(slab, pageSize, alloc)
        case (Encoding.DELTA_BINARY_PACKED, _) => new DeltaBinaryPackingValuesWriterForLong(slab, pageSize, alloc)
        case (Encoding.DELTA_LENGTH_BYTE_ARRAY, _) => new DeltaLengthByteArrayValuesWriter(slab, pageSize, alloc)
        case (Encoding.DELTA_BYTE_ARRAY, _) => new DeltaByteArrayWriter(slab, pageSize, alloc)
        case (Encoding.BYTE_STREAM_SPLIT, PrimitiveTypeName.FLOAT) => new FloatByteStreamSplitValuesWriter(slab, pageSize, alloc)
        case (Encoding.BYTE_STREAM_SPLIT, PrimitiveTypeName.DOUBLE) =>
          new DoubleByteStreamSplitValuesWriter(slab, pageSize, alloc)
        case (Encoding.BYTE_STREAM_SPLIT, other) =>
          TestLineApis.byteStreamSplitWriter(other.name, pt.getTypeLength, slab, pageSize, alloc).getOrElse(
            throw new org.scalatest.exceptions.TestCanceledException(
              s"this line's parquet-java has no BYTE_STREAM_SPLIT writer for $other", 0))
        case (e, _) => throw new IllegalArgumentException(s"no $e writer for $t")
      }
      if (!mode.usesDictionary || t == PrimitiveTypeName.BOOLEAN) fresh
      else {
        val (dataEnc, dictEnc) =
          if (v2) (Encoding.RLE_DICTIONARY, Encoding.PLAIN) else (Encoding.PLAIN_DICTIONARY, Encoding.PLAIN_DICTIONARY)
        val max = props.getDictionaryPageSizeThreshold
        val dict: DictionaryValuesWriter = t match {
          case PrimitiveTypeName.INT32 => new PlainIntegerDictionaryValuesWriter(max, dataEnc, dictEnc, alloc)
          case PrimitiveTypeName.INT64 => new PlainLongDictionaryValuesWriter(max, dataEnc, dictEnc, alloc)
          case PrimitiveTypeName.FLOAT => new PlainFloatDictionaryValuesWriter(max, dataEnc, dictEnc, alloc)
          case PrimitiveTypeName.DOUBLE => new PlainDoubleDictionaryValuesWriter(max, dataEnc, dictEnc, alloc)
          case PrimitiveTypeName.BINARY => new PlainBinaryDictionaryValuesWriter(max, dataEnc, dictEnc, alloc)
          case PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY =>
            new PlainFixedLenArrayDictionaryValuesWriter(max, pt.getTypeLength, dataEnc, dictEnc, alloc)
          case other => throw new IllegalArgumentException(s"no dictionary for $other")
        }
        FallbackValuesWriter.of[DictionaryValuesWriter, ValuesWriter](dict, fresh)
      }
    }
  }

  def primitiveType(spec: TypeSpec, repetition: Type.Repetition, name: String): PrimitiveType = {
    val b = Types.primitive(spec.primitive, repetition)
    if (spec.primitive == PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY) b.length(spec.typeLength)
    if (spec.annotation != null) b.as(spec.annotation)
    b.named(name)
  }

  /** Seeded values for one column: per row group, one value (or null) per row. In the modes that
    * do not use a dictionary for them, rows 100..149 of every 200 repeat one value (zero deltas:
    * bit width 0 miniblocks, whole-value prefixes). */
  def generate(spec: TypeSpec, nulls: Nulls, mode: EncMode, seed: Long): IndexedSeq[IndexedSeq[Any]] = {
    val r = new Random(seed)
    val pool = IndexedSeq.fill(8)(spec.gen(r))
    val total = rowGroupSizes.sum
    val repeats = mode == EncMode.Delta || mode == EncMode.Bss || mode == EncMode.DictDelta
    var row = 0
    var nullRate = 0.3
    var previous: Any = null
    rowGroupSizes.map { size =>
      IndexedSeq.fill(size) {
        // The first 200 rows keep some values so parquet-java's first-page dictionary check can pass.
        if (row % 200 == 0 && row > 0) nullRate = Seq(0.0, 0.3, 0.9, 1.0)(r.nextInt(4))
        val fromPool = mode match {
          case EncMode.Dict => true
          case EncMode.Fallback | EncMode.DictDelta => row < total * 2 / 5
          case _ => false
        }
        val repeat = repeats && !fromPool && row % 200 >= 100 && row % 200 < 150 && previous != null
        row += 1
        nulls match {
          case Nulls.AllNulls => null
          case Nulls.SomeNulls if r.nextDouble() < nullRate => null
          case _ =>
            previous = if (repeat) previous else if (fromPool) pool(r.nextInt(pool.size)) else spec.gen(r)
            previous
        }
      }
    }
  }

  /** Writes `columns` (all with the same row group sizes) to `path`. */
  def write(
      path: Path,
      config: FileConfig,
      columns: Seq[TestColumn],
      valuesWriterFactory: Option[ValuesWriterFactory] = None,
      dictionaryPageSize: Option[Int] = None,
      pageChecksums: Boolean = false): MessageType = {
    val schema = new MessageType("test", columns.map(c => primitiveType(c.spec, c.nulls.repetition, c.name): Type): _*)
    val builder = ParquetProperties.builder()
      .withWriterVersion(if (config.v2) WriterVersion.PARQUET_2_0 else WriterVersion.PARQUET_1_0)
      .withPageSize(config.mode.pageBytes)
      .withPageRowCountLimit(config.mode.pageRowLimit)
      .withMinRowCountForPageSizeCheck(1)
      .withMaxRowCountForPageSizeCheck(1)
      .estimateRowCountForPageSizeCheck(false)
      .withDictionaryEncoding(config.mode.usesDictionary)
      .withDictionaryPageSize(dictionaryPageSize.getOrElse(if (config.mode.fallsBack) 128 else 1 << 20))
      .withValuesWriterFactory(valuesWriterFactory.getOrElse(new TestValuesWriterFactory(config.mode, config.v2)))
      .withPageWriteChecksumEnabled(pageChecksums)
    val props = builder.build()
    Files.deleteIfExists(path)
    val fw = new ParquetFileWriter(new LocalOutputFile(path), schema, ParquetFileWriter.Mode.CREATE, Long.MaxValue, 0)
    val codecs = new CodecFactory(new Configuration(), 1 << 16)
    try {
      fw.start()
      val descriptors = schema.getColumns
      for (rg <- columns.head.rowGroups.indices) {
        val rows = columns.head.rowGroups(rg).size
        val pageStore = new ColumnChunkPageWriteStore(codecs.getCompressor(config.codec), schema, props.getAllocator,
          64, props.getPageWriteChecksumEnabled)
        val store = props.newColumnWriteStore(schema, pageStore)
        val writers = columns.indices.map(i => store.getColumnWriter(descriptors.get(i)))
        for (row <- 0 until rows) {
          for (i <- columns.indices) {
            val w = writers(i)
            val d = descriptors.get(i).getMaxDefinitionLevel
            columns(i).rowGroups(rg)(row) match {
              case null => w.writeNull(0, d - 1)
              case b: Boolean => w.write(b, 0, d)
              case x: Int => w.write(x, 0, d)
              case x: Long => w.write(x, 0, d)
              case x: Float => w.write(x, 0, d)
              case x: Double => w.write(x, 0, d)
              case x: ArraySeq[_] => w.write(Binary.fromConstantByteArray(x.asInstanceOf[ArraySeq[Byte]].toArray), 0, d)
            }
          }
          store.endRecord()
        }
        fw.startBlock(rows)
        store.flush()
        pageStore.flushToFileWriter(fw)
        fw.endBlock()
        store.close()
        pageStore match { case c: AutoCloseable => c.close(); case _ => } // not closeable before parquet-java 1.14
      }
      fw.end(new java.util.HashMap[String, String]())
    } finally codecs.release()
    schema
  }
}
