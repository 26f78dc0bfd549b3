package lmspark.testutil

import java.nio.file.{Files, Path}

import scala.collection.immutable.ArraySeq
import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.parquet.column.{ColumnDescriptor, Encoding, ParquetProperties}
import org.apache.parquet.column.ParquetProperties.WriterVersion
import org.apache.parquet.column.values.ValuesWriter
import org.apache.parquet.column.values.dictionary.DictionaryValuesWriter
import org.apache.parquet.column.values.dictionary.DictionaryValuesWriter._
import org.apache.parquet.column.values.factory.{DefaultV2ValuesWriterFactory, ValuesWriterFactory}
import org.apache.parquet.column.values.fallback.FallbackValuesWriter
import org.apache.parquet.column.values.plain.{BooleanPlainValuesWriter, FixedLenByteArrayPlainValuesWriter, PlainValuesWriter}
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridValuesWriter
import org.apache.parquet.hadoop.{CodecFactory, ColumnChunkPageWriteStore, ParquetFileWriter}
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.io.LocalOutputFile
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.{MessageType, PrimitiveType, Type, Types}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

/** How a test file encodes its values. */
sealed trait EncMode
object EncMode {
  /** Dictionary disabled: PLAIN values (RLE booleans in v2). */
  case object Plain extends EncMode
  /** Low-cardinality values and a large dictionary limit: every page dictionary-encoded. */
  case object Dict extends EncMode
  /** Low-cardinality values first, then high-cardinality values with a tiny dictionary limit: the
    * chunk starts with dictionary pages and falls back to PLAIN pages mid-chunk. */
  case object Fallback extends EncMode
  val all: Seq[EncMode] = Seq(Plain, Dict, Fallback)
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
  * version, value writers (PLAIN / dictionary with PLAIN fallback / RLE booleans), codec, page row
  * limits and dictionary size limits are all under the test's control. */
object TestFileWriter {

  val rowGroupSizes: IndexedSeq[Int] = IndexedSeq(1500, 1234)
  val pageRowLimit = 97

  /** Values writers as parquet-java's v1 factory builds them, but usable with v2 pages and with
    * RLE_DICTIONARY ids in v2, PLAIN fallback, and RLE booleans in v2. */
  final class TestValuesWriterFactory(mode: EncMode, v2: Boolean) extends ValuesWriterFactory {
    private var props: ParquetProperties = _
    override def initialize(p: ParquetProperties): Unit = props = p

    override def newValuesWriter(d: ColumnDescriptor): ValuesWriter = {
      val alloc = props.getAllocator
      val slab = props.getInitialSlabSize
      val pageSize = props.getPageSizeThreshold
      val t = d.getPrimitiveType.getPrimitiveTypeName
      def plain: ValuesWriter = t match {
        case PrimitiveTypeName.BOOLEAN =>
          if (v2) new RunLengthBitPackingHybridValuesWriter(1, slab, pageSize, alloc) else new BooleanPlainValuesWriter
        case PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY =>
          new FixedLenByteArrayPlainValuesWriter(d.getPrimitiveType.getTypeLength, slab, pageSize, alloc)
        case _ => new PlainValuesWriter(slab, pageSize, alloc)
      }
      if (mode == EncMode.Plain || t == PrimitiveTypeName.BOOLEAN) plain
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
            new PlainFixedLenArrayDictionaryValuesWriter(max, d.getPrimitiveType.getTypeLength, dataEnc, dictEnc, alloc)
          case other => throw new IllegalArgumentException(s"no dictionary for $other")
        }
        FallbackValuesWriter.of[DictionaryValuesWriter, ValuesWriter](dict, plain)
      }
    }
  }

  def primitiveType(spec: TypeSpec, repetition: Type.Repetition, name: String): PrimitiveType = {
    val b = Types.primitive(spec.primitive, repetition)
    if (spec.primitive == PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY) b.length(spec.typeLength)
    if (spec.annotation != null) b.as(spec.annotation)
    b.named(name)
  }

  /** Seeded values for one column: per row group, one value (or null) per row. */
  def generate(spec: TypeSpec, nulls: Nulls, mode: EncMode, seed: Long): IndexedSeq[IndexedSeq[Any]] = {
    val r = new Random(seed)
    val pool = IndexedSeq.fill(8)(spec.gen(r))
    val total = rowGroupSizes.sum
    var row = 0
    var nullRate = 0.3
    rowGroupSizes.map { size =>
      IndexedSeq.fill(size) {
        // The first 200 rows keep some values so parquet-java's first-page dictionary check can pass.
        if (row % 200 == 0 && row > 0) nullRate = Seq(0.0, 0.3, 0.9, 1.0)(r.nextInt(4))
        val fromPool = mode match {
          case EncMode.Plain => false
          case EncMode.Dict => true
          case EncMode.Fallback => row < total * 2 / 5
        }
        row += 1
        nulls match {
          case Nulls.AllNulls => null
          case Nulls.SomeNulls if r.nextDouble() < nullRate => null
          case _ => if (fromPool) pool(r.nextInt(pool.size)) else spec.gen(r)
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
      .withPageSize(1024)
      .withPageRowCountLimit(pageRowLimit)
      .withMinRowCountForPageSizeCheck(1)
      .withMaxRowCountForPageSizeCheck(1)
      .estimateRowCountForPageSizeCheck(false)
      .withDictionaryEncoding(config.mode != EncMode.Plain)
      .withDictionaryPageSize(dictionaryPageSize.getOrElse(if (config.mode == EncMode.Fallback) 128 else 1 << 20))
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
        pageStore.close()
      }
      fw.end(new java.util.HashMap[String, String]())
    } finally codecs.release()
    schema
  }
}
