package lmspark.column


import scala.collection.concurrent.TrieMap
import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import lmspark.io.{ChunkContext, PageSource}
import lmspark.meta.PageIndexes
import lmspark.selection._
import lmspark.testutil._
import lmspark.testutil.Sources

/** Page-pruned reads over the whole matrix (every type x encoding mode x codec x page version x
  * nullability, files with parquet-java's page indexes and small pages): per chunk, random row
  * selections give the kept pages (those holding a selected row, sometimes plus a few more), read
  * through [[PageSource.forPages]] with a random coalescing gap and walked by a [[SelectionCursor]]
  * (Selectors strategy, pruned pages from `PageLocations.prunedRows`) with appending reads and skips,
  * against parquet-java's values at the selected positions. Also checked: which batches keep the
  * dictionary (exactly those whose rows all lie on dictionary-encoded pages), the pages
  * decompressed (kept pages with a selected row, plus the dictionary), and, with a recording
  * stream, that no byte of a pruned page outside the coalesced ranges is read (none at all with
  * gap 0) and that the reader's `bytesRead` is what was read. */
class PrunedReadMatrixSuite extends AnyFunSuite with BeforeAndAfterAll {
  import PrunedReadMatrixSuite._

  private var cases = 0L
  private var prunedPages = 0L
  private var keptPages = 0L

  for (config <- TestFiles.configs; spec <- TestTypes.all) {
    test(s"$config ${spec.name} as ${spec.sparkType}: page-pruned reads") {
      val f = TestFiles.matrixFile(config)
      val oracle = TestFiles.oracle(f)
      val layout = TestFiles.layout(f)
      val pageInfos = pageLayouts.getOrElseUpdate(config, PageLayout.of(f.path))
      val lm = new LmFile(f.path)
      val v = new OnHeapColumnVector(SkipPattern.batchSizes.max, spec.sparkType)
      try {
        for (nulls <- Nulls.all; rg <- 0 until lm.rowGroups) {
          val col = f.columns.indexWhere(c => c.spec == spec && c.nulls == nulls)
          val name = s"${f.columns(col).name} rg $rg"
          val chunk = lm.chunk(rg, col)
          val rowCount = lm.rowCount(rg)
          val ctx = new ChunkContext(f.path.toString, name, rg)
          val raw = PageIndexes.read(lm.in, chunk, ctx).fold(why => fail(s"$name: page index unreadable: $why"), identity)
          // parquet-java writes no column index for a FLOAT / DOUBLE chunk holding NaN; pruned
          // reading needs only the offset index.
          val floating = spec.primitive == PrimitiveTypeName.FLOAT || spec.primitive == PrimitiveTypeName.DOUBLE
          assert(raw.offsetIndex.isDefined && (raw.columnIndex.isDefined || floating), name)
          val loc = PageIndexes.locations(raw.offsetIndex.get, chunk, rowCount)
            .fold(why => fail(s"$name: offset index rejected: $why"), identity)
          val chunkLayout = layout(rg)(col)
          assert(loc.pages == chunkLayout.pageRows.size, s"$name: pages")
          assert((0 until loc.pages).map(loc.firstRow) == chunkLayout.pageStarts.init, s"$name: page first rows")
          val expected = oracle(col)(rg).map(x => if (x == null) null else spec.toSpark(x))
          val r = new Random(config.toString.hashCode * 31L + col * 7L + rg) // toString: enum hashCodes vary per JVM
          for (trial <- 0 until 2) {
            val selection = randomSelection(r, rowCount)
            val selected = ScanRanges.selectedPages(selection, loc)
            val exactKeep = r.nextInt(3) != 0
            val kept =
              if (exactKeep) selected
              else (selected ++ Seq.fill(2)(r.nextInt(loc.pages))).distinct.sorted
            val maxGap = Seq(0L, r.nextInt(4000).toLong, Long.MaxValue / 4)(r.nextInt(3))
            val batch = SkipPattern.batchSizes(r.nextInt(SkipPattern.batchSizes.size))
            val what = s"$config $name trial $trial (batch $batch, gap $maxGap, kept ${kept.length} of ${loc.pages} " +
              s"pages, ${selection.selectedCount} rows selected)"
            val in = new RecordingInputStream(new LocalInputFile(f.path).newStream())
            try {
              val pages = Sources.forPages(in, chunk, lm.descriptor(col), f.path.toString, verifyChecksums = false,
                loc, kept, maxGap)
              val reader = ColumnReaderFactory.create(lm.descriptor(col), spec.sparkType, pages, rowCount,
                ColumnReadOptions())
              val ops = readSelected(what, reader, selection, loc.prunedRows(kept), batch, v, spec, expected,
                pageInfos(rg)(col))
              val expectedPages = SkipPattern.expectedPagesRead(ops, chunkLayout)
              assert(reader.pagesRead == expectedPages, s"$what: pages read")
              if (exactKeep && selection.selectedCount > 0)
                assert(reader.pagesRead == chunkLayout.pagesDecompressed(kept), s"$what: pages read")
              checkBytes(what, in, chunk.getStartingPos, loc, kept, maxGap)
              assert(reader.bytesRead == in.bytesRead, s"$what: bytes read")
              reader.close()
              cases += 1
              prunedPages += loc.pages - kept.length
              keptPages += kept.length
            } finally in.close()
          }
        }
      } finally { v.close(); lm.close() }
    }
  }

  test("appends across a dictionary fallback: a batch keeps the dictionary only if all its appended rows are dictionary rows") {
    for (v2 <- Seq(false, true); name <- Seq("int32_req", "string_opt", "dec_flba16_req", "ts_millis_opt")) {
      val config = FileConfig(CompressionCodecName.SNAPPY, v2, EncMode.Fallback)
      val f = TestFiles.matrixFile(config)
      val lm = new LmFile(f.path)
      val col = f.columns.indexWhere(_.name == name)
      val spec = f.columns(col).spec
      val pages = pageLayouts.getOrElseUpdate(config, PageLayout.of(f.path))(0)(col)
      val kinds = pages.flatMap(p => Seq.fill(p.rows)(p.dictionaryEncoded)).toIndexedSeq
      val rows = lm.rowCount(0)
      val v = new OnHeapColumnVector(64, spec.sparkType)
      try {
        // Runs of 5 selected and 3 skipped rows: every batch of 64 is ~13 appends.
        val s = RowSelection.fromBooleans(Array.tabulate(rows.toInt)(i => i % 8 < 5)).toRuns
        val selected = (0L until rows).filter(s.isSelected)
        val batches = selected.grouped(64).toSeq
        val mixed = batches.count(b => b.exists(p => kinds(p.toInt)) && b.exists(p => !kinds(p.toInt)))
        val kept = batches.count(_.forall(p => kinds(p.toInt)))
        assert(mixed > 0 && kept > 0, s"$name: $mixed mixed batches, $kept dictionary-only")
        val expected = TestFiles.oracle(f)(col)(0).map(x => if (x == null) null else spec.toSpark(x))
        val loc = PageIndexes.locations(PageIndexes.read(lm.in, lm.chunk(0, col), new ChunkContext("f", name, 0))
          .toOption.get.offsetIndex.get, lm.chunk(0, col), rows).toOption.get
        val all = (0 until loc.pages).toArray
        val reader = ColumnReaderFactory.create(lm.descriptor(col), spec.sparkType,
          Sources.forPages(lm.in, lm.chunk(0, col), lm.descriptor(col), f.path.toString, false, loc, all, 0L), rows,
          ColumnReadOptions())
        readSelected(s"$config $name", reader, s, RowRanges.empty, 64, v, spec, expected, pages)
        reader.close()
      } finally { v.close(); lm.close() }
    }
  }

  override def afterAll(): Unit = {
    println(s"PrunedReadMatrixSuite: $cases page-pruned chunk reads, $keptPages pages kept, $prunedPages pruned")
    super.afterAll()
  }
}

object PrunedReadMatrixSuite {
  private val pageLayouts = TrieMap.empty[FileConfig, IndexedSeq[IndexedSeq[IndexedSeq[PageInfo]]]]

  /** A seeded selection over `rows` rows: none, all, or alternating runs of a random mean length. */
  def randomSelection(r: Random, rows: Long): RowSelection = r.nextInt(10) match {
    case 0 => RowSelection.none(rows)
    case 1 => RowSelection.all(rows)
    case _ =>
      val mean = Seq(1, 3, 20, 200, 700)(r.nextInt(5))
      // Long unselected stretches, so that whole pages fall out.
      val gapMean = mean * Seq(1, 5, 30)(r.nextInt(3))
      val flags = ArrayBuffer.empty[Boolean]
      val lengths = ArrayBuffer.empty[Long]
      var sel = r.nextBoolean()
      var pos = 0L
      while (pos < rows) {
        val n = math.min(rows - pos, 1L + r.nextInt(2 * (if (sel) mean else gapMean)))
        flags += sel
        lengths += n
        pos += n
        sel = !sel
      }
      RowSelection.fromSelectors(flags.toArray, lengths.toArray)
  }

  /** Walks `selection` with a Selectors cursor over `reader` (batches of `batch` rows appended
    * read by read into `v`), checks each batch's values against `expected` at the selected
    * positions and its dictionary state against `pages` (kept exactly when every row lies on a
    * dictionary-encoded page and the type keeps dictionaries); returns the ops done. */
  def readSelected(what: String, reader: ColumnReader, selection: RowSelection, pruned: RowRanges, batch: Int,
      v: OnHeapColumnVector, spec: TypeSpec, expected: IndexedSeq[Any], pages: Seq[PageInfo]): Seq[Op] = {
    val cursor = new SelectionCursor(selection, SelectionStrategy.Selectors, batch, pruned)
    val ops = ArrayBuffer.empty[Op]
    val kinds = pages.flatMap(p => Seq.fill(p.rows)(p.dictionaryEncoded)).toIndexedSeq
    val preservable = spec.primitive != PrimitiveTypeName.BOOLEAN
    var batches = 0
    try {
      while (cursor.nextBatch()) {
        v.reset()
        val positions = ArrayBuffer.empty[Long]
        var k = cursor.next()
        while (k != SelectionCursor.End) {
          k match {
            case SelectionCursor.Read =>
              reader.read(cursor.stepRows.toInt, v, positions.size)
              (cursor.stepStart until cursor.stepStart + cursor.stepRows).foreach(positions += _)
              ops += Op(read = true, cursor.stepRows.toInt)
            case SelectionCursor.Skip =>
              reader.skip(cursor.stepRows)
              ops += Op(read = false, cursor.stepRows.toInt)
            case other => throw new AssertionError(s"unexpected cursor step $other")
          }
          k = cursor.next()
        }
        assert(positions.size <= batch, s"$what: batch of ${positions.size} rows")
        var i = 0
        while (i < positions.size) {
          val a = TestTypes.fromVector(spec.sparkType, v, i)
          val e = expected(positions(i).toInt)
          if (!TestTypes.same(a, e))
            throw new AssertionError(s"$what: row ${positions(i)} (batch $batches, position $i) is ${TestTypes.show(a)}, " +
              s"expected ${TestTypes.show(e)} (dictionary ${v.hasDictionary})")
          i += 1
        }
        val want = preservable && positions.forall(p => kinds(p.toInt))
        assert(v.hasDictionary == want, s"$what: batch $batches hasDictionary ${v.hasDictionary}, expected $want")
        batches += 1
      }
    } catch {
      case e: AssertionError => throw e
      case e: Exception => throw new AssertionError(s"$what after ${ops.size} ops: $e", e)
    }
    assert(batches == ((selection.selectedCount + batch - 1) / batch), s"$what: $batches batches")
    ops.toSeq
  }

  /** What `in` read: only the dictionary region `[chunkStart, first data page)` and the coalesced
    * ranges of the kept pages; no byte of a pruned page outside them (with gap 0: none at all). */
  def checkBytes(what: String, in: RecordingInputStream, chunkStart: Long, loc: PageLocations, kept: Array[Int],
      maxGap: Long): Unit = {
    val ranges = ScanRanges.coalesce(loc, kept, maxGap)
    val allowed = (chunkStart, loc.byteOffset(0)) +: (0 until ranges.size).map(i => (ranges.start(i), ranges.end(i)))
    for ((o, n) <- in.reads)
      assert(allowed.exists { case (s, e) => o >= s && o + n <= e },
        s"$what: read [$o, ${o + n}) outside the dictionary region and the ranges $ranges")
    val keep = kept.toSet
    for (p <- 0 until loc.pages if !keep(p)) {
      if (maxGap == 0) assert(!in.touched(loc.byteOffset(p), loc.byteEnd(p)), s"$what: pruned page $p was read")
      for ((o, n) <- in.reads) {
        val s = math.max(o, loc.byteOffset(p))
        val e = math.min(o + n, loc.byteEnd(p))
        if (s < e)
          assert((0 until ranges.size).exists(i => ranges.start(i) <= s && e <= ranges.end(i)),
            s"$what: bytes [$s, $e) of pruned page $p read outside the coalesced ranges")
      }
    }
  }

}
