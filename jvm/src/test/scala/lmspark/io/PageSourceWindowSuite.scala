package lmspark.io

import java.nio.file.Files

import scala.collection.mutable.ArrayBuffer
import scala.util.Random

import org.apache.parquet.format.PageType
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.{ColumnReadOptions, ColumnReaderFactory, ParquetDecodeException, SkipPattern}
import lmspark.meta.PageIndexes
import lmspark.selection.PageLocations
import lmspark.testutil._
import lmspark.testutil.Sources

/** Bounded-window reading in [[PageSource]]: for windows from 1 byte (every page larger than the
  * window) to larger than the chunk, a walk with a seeded mix of reads and skips yields exactly the
  * pages of the chunk held whole in memory (`fromBytes`, itself checked against parquet-java in
  * [[PageSourceSuite]]); every read lies inside the chunk, no byte is read twice, `bytesRead` is what
  * the stream returned, and the bytes held never exceed the window or the largest page; the data of
  * a page skipped past the window is never read; pages handed out stay intact after later refills;
  * `reopen` reuses a window that holds the whole chunk and otherwise reads the chunk again; pruned
  * layouts read only their ranges; a file truncated past the first window fails naming the chunk;
  * and column readers over small windows give parquet-java's values, with skips. */
class PageSourceWindowSuite extends AnyFunSuite {

  private val configs = for (codec <- Seq(CompressionCodecName.UNCOMPRESSED, CompressionCodecName.SNAPPY,
    CompressionCodecName.ZSTD); v2 <- Seq(false, true); mode <- Seq(EncMode.Dict, EncMode.Plain, EncMode.Fallback))
    yield FileConfig(codec, v2, mode)

  private val windows = Seq(1, 7, 64, 1000, 1 << 20)

  /** One page as yielded: type, rows (data pages), bytes (read pages; levels then values for v2). */
  private final case class Seen(kind: String, rows: Int, bytes: Seq[Byte])

  /** A page handed out, kept to check its bytes again later. */
  private final case class Held(page: Page, bytes: Seq[Byte])

  private def bytesOf(p: Page): Seq[Byte] = p match {
    case d: DictionaryPage => d.bytes.slice(d.offset, d.offset + d.length).toSeq
    case d: DataPageV1 => d.bytes.slice(d.offset, d.offset + d.length).toSeq
    case d: DataPageV2 =>
      (d.levelBytes.slice(d.levelOffset, d.levelOffset + d.repLevelsLength + d.defLevelsLength) ++
        d.valueBytes.slice(d.valueOffset, d.valueOffset + d.valueLength)).toSeq
  }

  /** Walks `ps`, reading page `i` when `read(i)`, else skipping it; checks after every page that the
    * source holds at most `bound` bytes. */
  private def walk(ps: PageSource, read: Int => Boolean, bound: Long, held: ArrayBuffer[Held]): Seq[Seen] = {
    val out = ArrayBuffer.empty[Seen]
    var i = 0
    while (ps.nextPage()) {
      if (ps.currentPageIsPruned) { out += Seen("pruned", ps.currentPageRows, Nil); ps.skipPage() }
      else {
        val t = ps.currentPageType
        val rows = if (t == PageType.DICTIONARY_PAGE) -1 else ps.currentPageRows
        if (t == PageType.DICTIONARY_PAGE || read(i)) {
          val p = if (t == PageType.DICTIONARY_PAGE) ps.readDictionaryPage() else ps.readDataPage()
          val b = bytesOf(p)
          held += Held(p, b)
          out += Seen(t.toString, rows, b)
        } else { ps.skipPage(); out += Seen(t.toString, rows, Nil) }
      }
      assert(ps.bytesHeld <= bound, s"page $i: ${ps.bytesHeld} bytes held, bound $bound")
      i += 1
    }
    out.toSeq
  }

  /** The reads of `in` lie in `[from, until)` and no byte is read twice. */
  private def checkReads(what: String, in: RecordingInputStream, from: Long, until: Long): Unit = {
    val reads = in.reads.sortBy(_._1)
    reads.foreach { case (o, n) => assert(o >= from && o + n <= until, s"$what: read [$o, ${o + n}) outside [$from, $until)") }
    reads.sliding(2).foreach {
      case Seq((o1, n1), (o2, _)) => assert(o1 + n1 <= o2, s"$what: bytes read twice: $reads")
      case _ =>
    }
  }

  for (config <- configs) {
    test(s"$config: windowed walks yield the pages of the chunk in memory; reads bounded, once, inside the chunk") {
      val f = TestFiles.matrixFile(config)
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices by 3; rg <- 0 until lm.rowGroups) {
          val chunk = lm.chunk(rg, col)
          val raw = ChunkBytes.read(f.path, chunk)
          val largest = ChunkBytes.pages(raw).map(_.header.compressed_page_size).max
          val r = new Random(config.toString.hashCode * 31L + col * 7L + rg)
          for (w <- windows :+ (1 + r.nextInt(5000))) {
            val pattern = Array.fill(200)(r.nextInt(3) != 0)
            def read(i: Int) = pattern(i % pattern.length)
            val what = s"$config col $col rg $rg window $w"
            val ctx = new ChunkContext(f.path.toString, "c", rg)
            val expected = walk(PageSource.fromBytes(raw, 0, raw.length, ctx, chunk.getCodec), read, Long.MaxValue,
              ArrayBuffer.empty)
            val in = new RecordingInputStream(new LocalInputFile(f.path).newStream())
            try {
              val ps = Sources.forChunk(in, chunk, lm.descriptor(col), f.path.toString, verifyChecksums = true,
                windowBytes = w)
              assert(ps.bytesRead == math.min(w.toLong, chunk.getTotalSize), s"$what: the first window is read at once")
              val held = ArrayBuffer.empty[Held]
              assert(walk(ps, read, math.max(w, largest).toLong, held) == expected, what)
              assert(held.forall(h => bytesOf(h.page) == h.bytes), s"$what: a page handed out was overwritten")
              assert(ps.bytesRead == in.bytesRead, what)
              checkReads(what, in, chunk.getStartingPos, chunk.getStartingPos + chunk.getTotalSize)
              if (w >= chunk.getTotalSize) assert(in.reads.size == 1, s"$what: ${in.reads}")
              ps.close()
              assert(ps.bytesHeld == (if (w >= chunk.getTotalSize) chunk.getTotalSize else 0), s"$what: held after close")
            } finally in.close()
          }
        }
      } finally lm.close()
    }
  }

  test("windowFor shares the task's budget between the columns, within its bounds") {
    for (columns <- 1 to 2000) {
      val w = PageSource.windowFor(columns)
      assert(w >= PageSource.MinWindowBytes && w <= PageSource.DefaultWindowBytes, s"$columns columns: $w")
      if (w > PageSource.MinWindowBytes) assert(w.toLong * columns <= PageSource.TaskWindowBudget, s"$columns columns: $w")
      if (columns > 1) assert(w <= PageSource.windowFor(columns - 1))
    }
  }

  test("with a 1-byte window, a walk that skips every page reads only the page headers") {
    for (codec <- Seq(CompressionCodecName.UNCOMPRESSED, CompressionCodecName.GZIP); v2 <- Seq(false, true)) {
      val f = TestFiles.matrixFile(FileConfig(codec, v2, EncMode.Plain))
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices by 4; rg <- 0 until lm.rowGroups) {
          val chunk = lm.chunk(rg, col)
          val pages = ChunkBytes.pages(ChunkBytes.read(f.path, chunk))
          val start = chunk.getStartingPos
          val in = new RecordingInputStream(new LocalInputFile(f.path).newStream())
          try {
            val ps = Sources.forChunk(in, chunk, lm.descriptor(col), f.path.toString, windowBytes = 1)
            var n = 0
            while (ps.nextPage()) { ps.skipPage(); n += 1 }
            assert(n == pages.size)
            assert(ps.bytesRead == pages.map(p => p.dataStart - p.start).sum && ps.bytesRead == in.bytesRead)
            pages.foreach { p =>
              assert(!in.touched(start + p.dataStart, start + p.dataStart + p.header.compressed_page_size))
            }
          } finally in.close()
        }
      } finally lm.close()
    }
  }

  test("reopen reuses a window holding the whole chunk, and otherwise reads the chunk again") {
    val f = TestFiles.matrixFile(FileConfig(CompressionCodecName.SNAPPY, v2 = false, EncMode.Dict))
    val lm = new LmFile(f.path)
    try {
      for (col <- f.columns.indices by 5) {
        val chunk = lm.chunk(0, col)
        for (w <- Seq(chunk.getTotalSize.toInt, 100)) {
          val in = new RecordingInputStream(new LocalInputFile(f.path).newStream())
          try {
            val first = Sources.forChunk(in, chunk, lm.descriptor(col), f.path.toString, windowBytes = w)
            val pages = walk(first, _ => true, Long.MaxValue, ArrayBuffer.empty)
            first.close()
            val before = in.bytesRead
            val again = first.reopen()
            assert(walk(again, _ => true, Long.MaxValue, ArrayBuffer.empty) == pages)
            if (w >= chunk.getTotalSize) assert(again.bytesRead == 0 && in.bytesRead == before, s"window $w")
            else assert(again.bytesRead == chunk.getTotalSize && in.bytesRead == 2 * before, s"window $w")
          } finally in.close()
        }
      }
    } finally lm.close()
  }

  test("pruned layouts over small windows: the same pages, reads only inside the kept ranges") {
    for (codec <- Seq(CompressionCodecName.UNCOMPRESSED, CompressionCodecName.ZSTD); v2 <- Seq(false, true)) {
      val f = TestFiles.matrixFile(FileConfig(codec, v2, EncMode.Dict))
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices by 5; rg <- 0 until lm.rowGroups) {
          val chunk = lm.chunk(rg, col)
          val raw = PageIndexes.read(lm.in, chunk, new ChunkContext(f.path.toString, "c", rg)).fold(w => fail(w), identity)
          val loc: PageLocations = PageIndexes.locations(raw.offsetIndex.get, chunk, lm.rowCount(rg)).fold(w => fail(w), identity)
          val r = new Random(col * 131L + rg + (if (v2) 7 else 0))
          val kept = (0 until loc.pages).filter(_ => r.nextInt(3) != 0).toArray
          for (gap <- Seq(0L, 300L)) {
            val whole = walk(Sources.forPages(lm.in, chunk, lm.descriptor(col), f.path.toString, false, loc, kept, gap),
              _ => true, Long.MaxValue, ArrayBuffer.empty)
            val ranges = lmspark.selection.ScanRanges.coalesce(loc, kept, gap)
            for (w <- Seq(1, 50, 999)) {
              val in = new RecordingInputStream(new LocalInputFile(f.path).newStream())
              try {
                val ps = Sources.forPages(in, chunk, lm.descriptor(col), f.path.toString, true, loc, kept, gap, w)
                assert(walk(ps, _ => true, Long.MaxValue, ArrayBuffer.empty) == whole, s"col $col rg $rg window $w")
                assert(ps.bytesRead == in.bytesRead)
                val allowed = (chunk.getStartingPos, loc.byteOffset(0)) +: (0 until ranges.size).map(i => (ranges.start(i), ranges.end(i)))
                in.reads.foreach { case (o, n) =>
                  assert(allowed.exists { case (s, e) => s <= o && o + n <= e }, s"read [$o, ${o + n}) outside $allowed")
                }
                // Every kept page is read (all are read here); gaps inside a coalesced range only
                // when the window reaches them.
                val dictionary = loc.byteOffset(0) - chunk.getStartingPos
                val keptBytes = kept.map(i => loc.byteEnd(i) - loc.byteOffset(i)).sum
                assert(ps.bytesRead >= dictionary + keptBytes && ps.bytesRead <= dictionary + ranges.totalBytes)
                if (gap == 0) assert(ps.bytesRead == dictionary + keptBytes)
              } finally in.close()
            }
          }
        }
      } finally lm.close()
    }
  }

  test("a file truncated past the first window fails while walking, naming the chunk") {
    val f = TestFiles.matrixFile(FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = false, EncMode.Plain))
    val lm = new LmFile(f.path)
    try {
      val col = f.columns.indexWhere(_.name == "int64_req")
      val chunk = lm.chunk(0, col)
      assert(chunk.getTotalSize > 400)
      val cut = TestFiles.dir.resolve("window-truncated.parquet")
      val all = Files.readAllBytes(f.path)
      Files.write(cut, java.util.Arrays.copyOf(all, (chunk.getStartingPos + chunk.getTotalSize / 2).toInt))
      val in = new LocalInputFile(cut).newStream()
      try {
        val ps = Sources.forChunk(in, chunk, lm.descriptor(col), cut.toString, windowBytes = 100)
        val e = intercept[ParquetDecodeException] {
          while (ps.nextPage()) if (ps.currentPageType == PageType.DICTIONARY_PAGE) ps.readDictionaryPage() else ps.readDataPage()
        }
        assert(e.getMessage.contains("truncated file") && e.getMessage.contains(cut.toString) &&
          e.getMessage.contains("int64_req") && e.getMessage.contains("row group 0"), e.getMessage)
      } finally in.close()
    } finally lm.close()
  }

  test("column readers over small windows give parquet-java's values, with skips") {
    var cases = 0
    for (config <- Seq(FileConfig(CompressionCodecName.SNAPPY, v2 = false, EncMode.Fallback),
        FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = true, EncMode.Dict),
        FileConfig(CompressionCodecName.GZIP, v2 = true, EncMode.Delta))) {
      val f = TestFiles.matrixFile(config)
      val oracle = TestFiles.oracle(f)
      val layout = TestFiles.layout(f)
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices; rg <- 0 until lm.rowGroups) {
          val spec = f.columns(col).spec
          val expected = oracle(col)(rg).map(x => if (x == null) null else spec.toSpark(x))
          val r = new Random(col * 17L + rg)
          val w = Seq(1, 33, 700)(r.nextInt(3))
          val pattern = SkipPattern.all(r.nextInt(SkipPattern.all.size))
          val batch = SkipPattern.batchSizes(r.nextInt(SkipPattern.batchSizes.size))
          val v = new OnHeapColumnVector(batch, spec.sparkType)
          try {
            val pages = Sources.forChunk(lm.in, lm.chunk(rg, col), lm.descriptor(col), f.path.toString, windowBytes = w)
            val reader = ColumnReaderFactory.create(lm.descriptor(col), spec.sparkType, pages, lm.rowCount(rg),
              ColumnReadOptions())
            val ops = SkipPattern.ops(pattern, layout(rg)(col), batch, r.nextLong())
            SkipPattern.run(s"$config ${f.columns(col).name} rg $rg window $w $pattern batch $batch", reader,
              spec.sparkType, expected, ops, layout(rg)(col), v)
            assert(reader.pagesRead == SkipPattern.expectedPagesRead(ops, layout(rg)(col)))
            reader.close()
            cases += 1
          } finally v.close()
        }
      } finally lm.close()
    }
    assert(cases > 100)
  }
}
