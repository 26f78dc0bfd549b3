package lmspark.column

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.column.impl.ColumnReadStoreImpl
import org.apache.parquet.example.data.Group
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.{GroupType, MessageType, MessageTypeParser, Type}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.io.ChunkContext
import lmspark.meta.PageIndexes
import lmspark.testutil.{GroupFiles, LocalInputFile, Sources}

/** [[NestedLeafReader]] against parquet-java's own column readers, on random nested data that
  * parquet-java writes: lists, maps, structs of structs, lists of lists and legacy repeated
  * primitives, with nulls at every level, empty and null lists and lists long enough to span pages;
  * v1 and v2 pages, dictionary on and off, small pages. Each leaf of each row group is read through
  * a whole-chunk source and through a page-index source (every page kept), under seeded random
  * patterns of record reads and skips, with a random slot level; every level entry and every slot
  * is compared. Skipping a whole chunk decompresses no data page where the pages' row counts are
  * known (an offset index, or v2 pages whose num_rows is not their num_values), and the pages where
  * they are not (v1 without one; a v2 page whose num_rows equals its num_values, and the page after). */
class NestedLeafReaderSuite extends AnyFunSuite {

  private val seed = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261125L)

  private val schemas: Seq[(String, String)] = Seq(
    "list" -> """message m { optional group a (LIST) { repeated group list { optional int32 element; } } }""",
    "struct" -> """message m { optional group s { optional group t { optional int64 x; required double y; } } }""",
    "map" -> """message m { optional group m (MAP) { repeated group key_value {
      required binary key (STRING); optional double value; } } }""",
    "listOfLists" -> """message m { optional group ll (LIST) { repeated group list {
      optional group element (LIST) { repeated group list { optional binary element (STRING); } } } } }""",
    "listOfStructs" -> """message m { required group ls (LIST) { repeated group list {
      optional group element { optional int32 a; optional boolean b; } } } }""",
    "legacyRepeated" -> """message m { repeated int32 r; optional int64 flat; }""")

  private type Layout = GroupFiles.Layout
  private val layouts = GroupFiles.layouts

  private def write(schema: MessageType, layout: Layout, rows: Int, r: Random): Path = GroupFiles.write(schema, layout, rows, r)

  /** One level entry: repetition level, definition level, and the value when defined. */
  private final case class Entry(rep: Int, defn: Int, value: Any)

  /** parquet-java's entries of every leaf of every row group, as records: [row group][column][record]. */
  private def oracle(path: Path): IndexedSeq[IndexedSeq[IndexedSeq[IndexedSeq[Entry]]]] = {
    val reader = ParquetFileReader.open(new LocalInputFile(path))
    try {
      val schema = reader.getFooter.getFileMetaData.getSchema
      val createdBy = reader.getFooter.getFileMetaData.getCreatedBy
      reader.getRowGroups.asScala.toIndexedSeq.map { _ =>
        val store = new ColumnReadStoreImpl(reader.readNextRowGroup(), new GroupRecordConverter(schema).getRootConverter,
          schema, createdBy)
        schema.getColumns.asScala.toIndexedSeq.map { d =>
          val cr = store.getColumnReader(d)
          val entries = (0L until cr.getTotalValueCount).map { _ =>
            val defn = cr.getCurrentDefinitionLevel
            val v = if (defn < d.getMaxDefinitionLevel) null else valueOf(d, cr)
            val e = Entry(cr.getCurrentRepetitionLevel, defn, v)
            cr.consume()
            e
          }
          val starts = entries.indices.filter(i => entries(i).rep == 0) :+ entries.size
          starts.sliding(2).collect { case Seq(a, b) => entries.slice(a, b) }.toIndexedSeq
        }
      }
    } finally reader.close()
  }

  private def valueOf(d: ColumnDescriptor, cr: org.apache.parquet.column.ColumnReader): Any =
    d.getPrimitiveType.getPrimitiveTypeName match {
      case PrimitiveTypeName.INT32 => cr.getInteger
      case PrimitiveTypeName.INT64 => cr.getLong
      case PrimitiveTypeName.DOUBLE => cr.getDouble
      case PrimitiveTypeName.BOOLEAN => cr.getBoolean
      case _ => cr.getBinary.toStringUsingUTF8
    }

  private def sparkOf(d: ColumnDescriptor): (DataType, VectorWriter) = d.getPrimitiveType.getPrimitiveTypeName match {
    case PrimitiveTypeName.INT32 => (IntegerType, VectorWriter.Ints)
    case PrimitiveTypeName.INT64 => (LongType, VectorWriter.Longs)
    case PrimitiveTypeName.DOUBLE => (DoubleType, VectorWriter.Doubles)
    case PrimitiveTypeName.BOOLEAN => (BooleanType, VectorWriter.Booleans)
    case _ => (BinaryType, VectorWriter.Binaries)
  }

  private def slotValue(t: DataType, v: OnHeapColumnVector, i: Int): Any =
    if (v.isNullAt(i)) null
    else t match {
      case IntegerType => v.getInt(i)
      case LongType => v.getLong(i)
      case DoubleType => v.getDouble(i)
      case BooleanType => v.getBoolean(i)
      case _ => new String(v.getBinary(i), java.nio.charset.StandardCharsets.UTF_8)
    }

  /** A reader of `col` in row group `rg`: over the whole chunk, or (`indexed`) over every page of
    * its offset index. */
  private def reader(path: Path, in: org.apache.parquet.io.SeekableInputStream, footer: org.apache.parquet.hadoop.metadata.ParquetMetadata,
      rg: Int, col: Int, slotDef: Int, indexed: Boolean): NestedLeafReader = {
    val d = footer.getFileMetaData.getSchema.getColumns.get(col)
    val chunk = footer.getBlocks.get(rg).getColumns.get(col)
    val rows = footer.getBlocks.get(rg).getRowCount
    val source =
      if (!indexed) Sources.forChunk(in, chunk, d, path.toString)
      else {
        val ctx = new ChunkContext(path.toString, d.getPath.mkString("."), rg)
        val raw = PageIndexes.read(in, chunk, ctx).fold(why => fail(s"page index unreadable: $why"), identity)
        val loc = PageIndexes.locations(raw.offsetIndex.get, chunk, rows).fold(why => fail(s"offset index: $why"), identity)
        Sources.forPages(in, chunk, d, path.toString, verifyChecksums = false, loc, (0 until loc.pages).toArray, 0L)
      }
    new NestedLeafReader(d, source, rows, sparkOf(d)._2, slotDef)
  }

  for ((name, text) <- schemas; layout <- layouts) {
    test(s"$name $layout: levels and slots equal parquet-java's under random record reads and skips") {
      val caseSeed = seed ^ name.hashCode ^ layout.hashCode
      val r = new Random(caseSeed)
      val schema = MessageTypeParser.parseMessageType(text)
      val path = write(schema, layout, rows = 300 + r.nextInt(300), r)
      val expected = oracle(path)
      val file = ParquetFileReader.open(new LocalInputFile(path))
      val footer = try file.getFooter finally file.close()
      val in = new LocalInputFile(path).newStream()
      try {
        for (rg <- expected.indices; col <- expected(rg).indices; indexed <- Seq(false, true)) {
          val d = footer.getFileMetaData.getSchema.getColumns.get(col)
          val (sparkType, _) = sparkOf(d)
          val slotDef = r.nextInt(d.getMaxDefinitionLevel + 1)
          val where = s"seed $caseSeed: ${d.getPath.mkString(".")} rg $rg indexed $indexed slotDef $slotDef"
          val records = expected(rg)(col)
          val lm = reader(path, in, footer, rg, col, slotDef, indexed)
          val levels = new NestedLevels(8)
          val v = new OnHeapColumnVector(16, sparkType)
          try {
            var at = 0
            while (at < records.size) {
              val n = 1 + r.nextInt(math.min(records.size - at, if (r.nextInt(8) == 0) 200 else 12))
              if (r.nextBoolean()) lm.skipRecords(n)
              else {
                levels.clear()
                v.reset()
                lm.readRecords(n, levels, v)
                val want = records.slice(at, at + n).flatten
                assert(levels.size == want.size, s"$where: entries of records [$at, ${at + n})")
                assert(levels.rep.take(levels.size).toSeq == want.map(_.rep), s"$where: repetition levels at record $at")
                assert(levels.defs.take(levels.size).toSeq == want.map(_.defn), s"$where: definition levels at record $at")
                val slots = want.filter(_.defn >= slotDef).map(_.value)
                assert(levels.slots == slots.size, s"$where: slots at record $at")
                assert(slots.indices.map(i => slotValue(sparkType, v, i)) == slots, s"$where: slot values at record $at")
              }
              at += n
            }
            assert(lm.recordsLeft == 0)
            assertThrows[ParquetDecodeException](lm.readRecords(1, levels, v))
          } finally { lm.close(); v.close() }
        }
      } finally in.close()
    }
  }

  test("skipping a whole chunk decompresses no page (nor the dictionary) where page row counts are known, every " +
      "one where not") {
    val r = new Random(seed)
    val schema = MessageTypeParser.parseMessageType(schemas.head._2)
    for (layout <- layouts.filter(_.pageRows == 7)) {
      val path = write(schema, layout, rows = 400, r)
      val file = ParquetFileReader.open(new LocalInputFile(path))
      val footer = try file.getFooter finally file.close()
      val in = new LocalInputFile(path).newStream()
      try {
        val chunk = footer.getBlocks.get(0).getColumns.get(0)
        val dict = if (chunk.hasDictionaryPage) 1 else 0
        // Which v2 pages state their records: a page of one-entry records has num_rows equal to its
        // num_values, which is also what Arrow C++ before 12.0 wrote, so its levels are decoded, and
        // so is the next page (the page's last record stays open until a page shows it ended).
        val stated: Seq[Boolean] =
          if (!layout.v2) Nil
          else {
            val pq = ParquetFileReader.open(new LocalInputFile(path))
            try {
              val pages = pq.readNextRowGroup().getPageReader(footer.getFileMetaData.getSchema.getColumns.get(0))
              Iterator.continually(pages.readPage()).takeWhile(_ != null)
                .map { case p: org.apache.parquet.column.page.DataPageV2 => p.getRowCount != p.getValueCount }.toList
            } finally pq.close()
          }
        val decodedV2 = stated.foldLeft((0, false)) { case ((n, open), known) =>
          if (!open && known) (n, false) else (n + 1, !known)
        }._1
        for (indexed <- Seq(false, true)) {
          val lm = reader(path, in, footer, 0, 0, 0, indexed)
          lm.skipRecords(footer.getBlocks.get(0).getRowCount)
          if (indexed) assert(lm.pagesRead == 0, s"$layout indexed: pages decompressed by a whole skip")
          else if (layout.v2) assert(lm.pagesRead == decodedV2 + (if (decodedV2 > 0) dict else 0),
            s"$layout: pages decompressed by a whole skip (num_rows stated by ${stated.count(identity)} of ${stated.size})")
          else assert(lm.pagesRead > dict + 3, s"$layout: v1 pages without an offset index are decoded to count records")
          lm.close()
        }
      } finally in.close()
    }
  }
}
