package lmspark.io

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.format.{CompressionCodec, PageHeader, Util}
import org.apache.parquet.schema.LogicalTypeAnnotation.StringLogicalTypeAnnotation
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.types._
import org.scalatest.Assertions

import lmspark.column.{ColumnReadOptions, ColumnReader, ColumnReaderFactory}
import lmspark.testutil.{ChunkBytes, LmFile, TestTypes}
import lmspark.testutil.Sources

/** Shared by the codec and checksum suites: the pyarrow fixtures and their CSV oracles (written by
  * `jvm/src/test/resources/gen_codec_fixtures.py`), the parquet-testing corpus, footer relabelling,
  * and reading whole chunks through our page source and column readers. */
object CodecFixtures extends Assertions {

  /** A fixture under `jvm/src/test/resources/codecs/`. */
  def resource(name: String): Path = {
    val url = getClass.getResource(s"/codecs/$name")
    require(url != null, s"missing test resource codecs/$name (run gen_codec_fixtures.py)")
    Paths.get(url.toURI)
  }

  /** The parquet-testing corpus data directory: /work/shared/corpus or ../shared/corpus next to
    * the repository root (the forked test JVM runs in the repository root). */
  lazy val corpusDir: Option[Path] =
    Seq(Paths.get("/work/shared/corpus/parquet-testing/data"),
      Paths.get("").toAbsolutePath.resolve("../shared/corpus/parquet-testing/data").normalize)
      .find(p => Files.isDirectory(p))

  /** A corpus file; cancels the calling test, with a message saying so, when the corpus is absent. */
  def corpus(name: String): Path = {
    assume(corpusDir.isDefined,
      "parquet-testing corpus not found (looked in /work/shared/corpus and ../shared/corpus from the repo root)")
    val p = corpusDir.get.resolve(name)
    assume(Files.exists(p), s"corpus file $p is missing")
    p
  }

  /** A CSV oracle: column names, then per row the raw cells (see gen_codec_fixtures.py). */
  final case class Csv(names: IndexedSeq[String], rows: IndexedSeq[IndexedSeq[String]]) {
    def column(name: String): IndexedSeq[String] = {
      val i = names.indexOf(name)
      require(i >= 0, s"no column $name in $names")
      rows.map(_(i))
    }
  }

  def csv(name: String): Csv = {
    val lines = new String(Files.readAllBytes(resource(name)), StandardCharsets.UTF_8).split("\n").toIndexedSeq
    val names = lines.head.split(",", -1).toIndexedSeq
    val rows = lines.tail.filter(_.nonEmpty).map(_.split(",", -1).toIndexedSeq)
    rows.foreach(r => require(r.size == names.size, s"bad CSV row $r"))
    Csv(names, rows)
  }

  def hex(s: String): Array[Byte] = s.grouped(2).map(h => Integer.parseInt(h, 16).toByte).toArray

  /** A CSV cell as [[TestTypes.fromVector]] returns the value for `t` (null for `null`). */
  def cellValue(cell: String, t: DataType): Any =
    if (cell == "null") null
    else t match {
      case BooleanType => cell.toBoolean
      case IntegerType => cell.toInt
      case LongType => cell.toLong
      case DoubleType => cell.toDouble
      case _: StringType | BinaryType => TestTypes.bytes(hex(cell))
      case other => throw new IllegalArgumentException(s"no CSV mapping for $other")
    }

  /** The Spark type we read a flat leaf of the fixtures and corpus files as. */
  def sparkTypeOf(d: ColumnDescriptor): DataType = {
    val t = d.getPrimitiveType
    t.getPrimitiveTypeName match {
      case PrimitiveTypeName.BOOLEAN => BooleanType
      case PrimitiveTypeName.INT32 => IntegerType
      case PrimitiveTypeName.INT64 => LongType
      case PrimitiveTypeName.FLOAT => FloatType
      case PrimitiveTypeName.DOUBLE => DoubleType
      case PrimitiveTypeName.BINARY if t.getLogicalTypeAnnotation.isInstanceOf[StringLogicalTypeAnnotation] =>
        StringType
      case PrimitiveTypeName.BINARY => BinaryType
      case other => throw new IllegalArgumentException(s"no Spark type for $other in these tests")
    }
  }

  /** `src` with every column chunk's codec in the footer set to `codec` (pages untouched): how a
    * file whose pages are raw LZ4 blocks comes to be labelled LZ4, as old parquet-cpp wrote it. */
  def relabelCodec(src: Path, dst: Path, codec: CompressionCodec): Path = {
    val all = Files.readAllBytes(src)
    val n = all.length
    val footerLength = (all(n - 8) & 0xff) | ((all(n - 7) & 0xff) << 8) | ((all(n - 6) & 0xff) << 16) |
      ((all(n - 5) & 0xff) << 24)
    val footerStart = n - 8 - footerLength
    val meta = Util.readFileMetaData(new ByteArrayInputStream(all, footerStart, footerLength))
    meta.getRow_groups.asScala.foreach(_.getColumns.asScala.foreach(_.getMeta_data.setCodec(codec)))
    val footer = new ByteArrayOutputStream()
    Util.writeFileMetaData(meta, footer)
    val f = footer.toByteArray
    val out = new ByteArrayOutputStream()
    out.write(all, 0, footerStart)
    out.write(f)
    out.write(Array[Byte](f.length.toByte, (f.length >>> 8).toByte, (f.length >>> 16).toByte, (f.length >>> 24).toByte))
    out.write("PAR1".getBytes(StandardCharsets.US_ASCII))
    Files.write(dst, out.toByteArray)
    dst
  }

  /** Chunk bytes made of the given pages: each header serialized, then its data. */
  def chunkOf(pages: Seq[(PageHeader, Array[Byte])]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    pages.foreach { case (h, data) =>
      Util.writePageHeader(h, out)
      out.write(data)
    }
    out.toByteArray
  }

  /** Each page of chunk bytes as (header, stored data). */
  def split(chunk: Array[Byte]): IndexedSeq[(PageHeader, Array[Byte])] =
    ChunkBytes.pages(chunk).map { p =>
      (p.header, java.util.Arrays.copyOfRange(chunk, p.dataStart, p.dataStart + p.header.compressed_page_size))
    }

  /** A page source over chunk `(rowGroup, column)` of `lm`, read through the new API. */
  def pages(lm: LmFile, rowGroup: Int, column: Int, verifyChecksums: Boolean = false): PageSource =
    Sources.forChunk(lm.in, lm.chunk(rowGroup, column), lm.descriptor(column), lm.path.toString, verifyChecksums)

  /** Column `column` of row group `rowGroup` read with the factory's reader, batch by batch. */
  def readChunk(lm: LmFile, rowGroup: Int, column: Int, batch: Int = 97,
      verifyChecksums: Boolean = false): (IndexedSeq[Any], ColumnReader) = {
    val t = sparkTypeOf(lm.descriptor(column))
    val reader = ColumnReaderFactory.create(lm.descriptor(column), t, pages(lm, rowGroup, column, verifyChecksums),
      lm.rowCount(rowGroup), ColumnReadOptions())
    (readAll(reader, t, lm.rowCount(rowGroup).toInt, batch), reader)
  }

  /** `rows` rows of `reader` as [[TestTypes.fromVector]] values. */
  def readAll(reader: ColumnReader, t: DataType, rows: Int, batch: Int): IndexedSeq[Any] =
    lmspark.testutil.LmReading.readAll(reader, t, rows, batch)

  /** Asserts equal value sequences, naming the first differing row. */
  def assertSameValues(what: String, actual: IndexedSeq[Any], expected: IndexedSeq[Any]): Unit = {
    assert(actual.size == expected.size, s"$what: ${actual.size} values, expected ${expected.size}")
    actual.indices.find(i => !TestTypes.same(actual(i), expected(i))).foreach { i =>
      fail(s"$what: row $i is ${TestTypes.show(actual(i))}, expected ${TestTypes.show(expected(i))}")
    }
  }

  /** Number of non-index pages in chunk `(rowGroup, column)`, from parquet-java's header parser. */
  def pageCount(lm: LmFile, rowGroup: Int, column: Int): Int =
    ChunkBytes.pages(ChunkBytes.read(lm.path, lm.chunk(rowGroup, column)))
      .count(_.header.getType != org.apache.parquet.format.PageType.INDEX_PAGE)
}
