package lmspark.column

import java.io.ByteArrayOutputStream

import scala.util.Random

import org.apache.parquet.bytes.HeapByteBufferAllocator
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridEncoder
import org.apache.parquet.format.{DataPageHeader, DataPageHeaderV2, Encoding, PageHeader, PageType, Util}
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.schema.MessageTypeParser
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.IntegerType
import org.scalatest.funsuite.AnyFunSuite

import lmspark.io.{ChunkContext, PageSource}

/** [[NestedLeafReader]] on chunks built page by page, which parquet-java never writes: records that
  * continue across v1 pages (allowed without an offset index), and across v2 pages whose num_rows is
  * their num_values (as Arrow C++ before 12.0 wrote them), cut at random level positions and read and
  * skipped at random against a model of the records; and malformed levels: a chunk that
  * starts inside a record, a v2 page that does, levels above their maximum, more records than the
  * row group has, a v2 page whose num_rows disagrees with its levels, and a chunk whose records end
  * too early. Each malformed chunk fails with an error naming the file, column, row group and page. */
class NestedPagesSuite extends AnyFunSuite {

  private val seed = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261125L)

  /** `optional group a (LIST) { repeated group list { optional int32 element } }`: max repetition
    * level 1, max definition level 3. */
  private val listSchema = MessageTypeParser.parseMessageType(
    "message m { optional group a (LIST) { repeated group list { optional int32 element; } } }")
  private val descriptor = listSchema.getColumns.get(0)

  /** One level entry: repetition level, definition level, value (when defined). */
  private final case class Entry(rep: Int, defn: Int, value: Int)

  private def rle(levels: Seq[Int], width: Int): Array[Byte] = {
    val enc = new RunLengthBitPackingHybridEncoder(width, 64, 1 << 20, new HeapByteBufferAllocator)
    levels.foreach(enc.writeInt)
    enc.toBytes.toByteArray
  }

  private def le(n: Int): Array[Byte] = Array(n, n >>> 8, n >>> 16, n >>> 24).map(_.toByte)

  /** One uncompressed data page of `entries`: v1 (levels length-prefixed, then PLAIN values) or v2
    * (`rows` its num_rows, -1: the records its levels start). */
  private def page(entries: Seq[Entry], v2: Boolean, rows: Int = -1, maxDef: Int = 3, repeated: Boolean = true,
      numValues: Int = -1): Array[Byte] = {
    val count = if (numValues >= 0) numValues else entries.size
    val rep = if (repeated) rle(entries.map(_.rep), 1) else Array.emptyByteArray
    val defs = rle(entries.map(_.defn), 2)
    val values = entries.filter(_.defn == maxDef).flatMap(e => le(e.value)).toArray
    val (body, h) =
      if (!v2) {
        val b = (if (repeated) le(rep.length) ++ rep else Array.emptyByteArray) ++ le(defs.length) ++ defs ++ values
        val h = new PageHeader(PageType.DATA_PAGE, b.length, b.length)
        h.setData_page_header(new DataPageHeader(count, Encoding.PLAIN, Encoding.RLE, Encoding.RLE))
        (b, h)
      } else {
        val b = rep ++ defs ++ values
        val h = new PageHeader(PageType.DATA_PAGE_V2, b.length, b.length)
        val nulls = entries.count(_.defn < maxDef)
        val numRows = if (rows >= 0) rows else entries.count(_.rep == 0)
        val dh = new DataPageHeaderV2(count, nulls, numRows, Encoding.PLAIN, defs.length, rep.length)
        dh.setIs_compressed(false)
        h.setData_page_header_v2(dh)
        (b, h)
      }
    val out = new ByteArrayOutputStream()
    Util.writePageHeader(h, out)
    out.write(body)
    out.toByteArray
  }

  private def reader(chunk: Array[Byte], records: Long, slotDef: Int = 2,
      d: org.apache.parquet.column.ColumnDescriptor = descriptor, chunkValues: Long = -1L): NestedLeafReader = {
    val ctx = new ChunkContext("crafted.parquet", "a.list.element", 3)
    new NestedLeafReader(d, PageSource.fromBytes(chunk, 0, chunk.length, ctx, CompressionCodecName.UNCOMPRESSED),
      records, VectorWriter.Ints, slotDef, null,
      if (d.getMaxRepetitionLevel == 0) Array(0) else NestedLeafReader.repDefs(listSchema, d), chunkValues)
  }

  /** Random records of the list column: null lists, empty lists, null elements, long lists. */
  private def records(r: Random, n: Int): IndexedSeq[Seq[Entry]] = IndexedSeq.fill(n) {
    r.nextInt(8) match {
      case 0 => Seq(Entry(0, 0, 0)) // null list
      case 1 => Seq(Entry(0, 1, 0)) // empty list
      case k =>
        val len = if (k == 7) 5 + r.nextInt(40) else 1 + r.nextInt(4)
        (0 until len).map { i =>
          val rep = if (i == 0) 0 else 1
          if (r.nextInt(6) == 0) Entry(rep, 2, 0) else Entry(rep, 3, r.nextInt(1000))
        }
    }
  }

  test("records continuing across v1 pages: random cuts, reads and skips equal the model") {
    randomCuts(entries => page(entries, v2 = false))
  }

  test("v2 pages whose num_rows is their num_values, as Arrow C++ before 12.0 wrote them: records counted from the " +
    "levels, continuing across pages; random cuts, reads and skips equal the model") {
    randomCuts(entries => page(entries, v2 = true, rows = entries.size))
  }

  /** 200 rounds: random records cut into pages (by `pageOf`) at random level positions, so that pages
    * may start inside a record, then read and skipped at random against the model. */
  private def randomCuts(pageOf: Seq[Entry] => Array[Byte]): Unit = {
    for (round <- 0 until 200) {
      val r = new Random(seed + round)
      val recs = records(r, 5 + r.nextInt(60))
      val all = recs.flatten
      // Cut the entries at random positions: pages may start inside a record.
      val cuts = (0 +: Seq.fill(r.nextInt(8))(r.nextInt(all.size + 1)) :+ all.size).distinct.sorted
      val chunk = cuts.sliding(2).collect { case Seq(a, b) if b > a => pageOf(all.slice(a, b)) }.reduce(_ ++ _)
      val slotDef = r.nextInt(4)
      val lm = reader(chunk, recs.size, slotDef)
      val levels = new NestedLevels(4)
      val v = new OnHeapColumnVector(4, IntegerType)
      val where = s"seed ${seed + round}, cuts ${cuts.mkString(",")}, slotDef $slotDef"
      try {
        var at = 0
        while (at < recs.size) {
          val n = 1 + r.nextInt(math.min(6, recs.size - at))
          if (r.nextInt(3) == 0) lm.skipRecords(n)
          else {
            levels.clear(); v.reset()
            lm.readRecords(n, levels, v)
            val want = recs.slice(at, at + n).flatten
            assert(levels.rep.take(levels.size).toSeq == want.map(_.rep), s"$where: repetition levels at $at")
            assert(levels.defs.take(levels.size).toSeq == want.map(_.defn), s"$where: definition levels at $at")
            val slots = want.filter(_.defn >= slotDef)
            assert(levels.slots == slots.size, s"$where: slots at $at")
            for ((e, i) <- slots.zipWithIndex)
              if (e.defn == 3) assert(!v.isNullAt(i) && v.getInt(i) == e.value, s"$where: slot $i at $at")
              else assert(v.isNullAt(i), s"$where: slot $i at $at should be null")
          }
          at += n
        }
        assert(lm.recordsLeft == 0)
      } finally { lm.close(); v.close() }
    }
  }

  private def failure(chunk: Array[Byte], records: Long, d: org.apache.parquet.column.ColumnDescriptor = descriptor,
      chunkValues: Long = -1L)(use: NestedLeafReader => Unit): ParquetDecodeException = {
    val lm = reader(chunk, records, d = d, chunkValues = chunkValues)
    try intercept[ParquetDecodeException](use(lm)) finally lm.close()
  }

  private def assertNamed(e: ParquetDecodeException, what: String): Unit = {
    val m = e.getMessage
    assert(m.contains("crafted.parquet") && m.contains("a.list.element") && m.contains("row group 3") &&
      m.contains("page ") && m.contains(what), m)
  }

  private val one = Seq(Entry(0, 3, 1), Entry(1, 3, 2))
  private val readAll = (lm: NestedLeafReader) => {
    val v = new OnHeapColumnVector(4, IntegerType)
    try lm.readRecords(lm.recordsLeft.toInt, new NestedLevels(), v) finally v.close()
  }

  test("a chunk that starts inside a record fails, naming the page") {
    assertNamed(failure(page(Seq(Entry(1, 3, 5)) ++ one, v2 = false), 1)(readAll), "no record is open")
  }

  test("a v2 page that starts inside a record fails: v2 pages start at record boundaries") {
    val chunk = page(one, v2 = true) ++ page(Seq(Entry(1, 3, 3), Entry(0, 3, 4)), v2 = true, rows = 1)
    assertNamed(failure(chunk, 2)(readAll), "must start at")
  }

  test("levels above their maximum fail, naming the page") {
    // A struct's leaf: max definition level 2, stored in two bits, so 3 is representable and wrong.
    val struct = MessageTypeParser.parseMessageType("message m { optional group s { optional int32 x; } }").getColumns.get(0)
    val chunk = page(Seq(Entry(0, 2, 1), Entry(0, 3, 2), Entry(0, 1, 0)), v2 = false, maxDef = 2, repeated = false)
    assertNamed(failure(chunk, 3, struct)(readAll), "definition level 3 outside [0, 2]")
  }

  test("more records than the row group has fail; so do records that end too early") {
    assertNamed(failure(page(one ++ one, v2 = false), 1)(readAll), "starts 2 records but only 1")
    assertNamed(failure(page(one, v2 = false), 2)(readAll), "no more data pages")
    assertNamed(failure(page(one, v2 = false), 2)(lm => lm.skipRecords(2)), "no more data pages")
  }

  test("an entry that repeats a list its previous entry left empty or null fails; so does one whose list is undefined") {
    // (0, 1): an empty list; (1, 3): a second element of that empty list.
    assertNamed(failure(page(Seq(Entry(0, 1, 0), Entry(1, 3, 7)), v2 = false), 1)(readAll), "left empty or null")
    assertNamed(failure(page(Seq(Entry(0, 0, 0), Entry(1, 3, 7)), v2 = true), 1)(readAll), "left empty or null")
    // (1, 1): a new element of a list whose definition level says the list is empty.
    assertNamed(failure(page(Seq(Entry(0, 3, 1), Entry(1, 1, 0)), v2 = false), 1)(readAll), "leaves that list undefined")
  }

  test("levels that never close a record end in an error, not a loop: a record cut at the chunk's end, a v1 page " +
    "continuing it that never comes") {
    // The row group says 3 records; the chunk's pages hold two, the second cut at its page's end.
    val chunk = page(one, v2 = false) ++ page(Seq(Entry(0, 3, 5), Entry(1, 3, 6)), v2 = false)
    assertNamed(failure(chunk, 3)(readAll), "no more data pages")
    assertNamed(failure(chunk, 3)(lm => lm.skipRecords(3)), "no more data pages")
    // Pages that only ever continue the first record (no repetition level 0 after it): still an error at the end.
    val endless = page(one, v2 = false) ++ (1 to 50).map(i => page(Seq(Entry(1, 3, i)), v2 = false)).reduce(_ ++ _)
    assertNamed(failure(endless, 2)(readAll), "no more data pages")
  }

  test("a page whose num_values takes its chunk past the chunk's num_values fails before its levels are sized") {
    // Int.MaxValue level entries would be 16 GB of level arrays (the fuzz test's mutant 717 of seed 20261202).
    for (v2 <- Seq(false, true)) {
      val chunk = page(one, v2) ++ page(one, v2, numValues = Int.MaxValue)
      assertNamed(failure(chunk, 2, chunkValues = 2L * one.size)(readAll), "more than the column chunk's num_values 4")
    }
  }

  test("a v2 page whose num_rows disagrees with its levels fails") {
    assertNamed(failure(page(one ++ one, v2 = true, rows = 1), 2)(readAll), "records per its repetition levels")
  }

  test("a skip over pages whose rows are known decompresses none of them; a read after it reads one") {
    val r = new Random(seed)
    // Each page's first record has two entries, so its num_rows is below its num_values: the rows it
    // states are known (a page whose num_rows equals num_values has its levels decoded, above).
    val recs = records(r, 40).grouped(5).flatMap(g => one +: g.tail).toIndexedSeq
    val pages = recs.grouped(5).map(g => page(g.flatten, v2 = true)).toSeq
    val lm = reader(pages.reduce(_ ++ _), recs.size)
    try {
      lm.skipRecords(35)
      assert(lm.pagesRead == 0, "pages skipped whole by num_rows")
      val v = new OnHeapColumnVector(4, IntegerType)
      val levels = new NestedLevels()
      try lm.readRecords(5, levels, v) finally v.close()
      assert(lm.pagesRead == 1 && levels.size == recs.drop(35).flatten.size)
    } finally lm.close()
  }
}
