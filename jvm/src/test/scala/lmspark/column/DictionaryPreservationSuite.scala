package lmspark.column

import scala.collection.concurrent.TrieMap
import scala.util.Random

import org.apache.parquet.format.Encoding
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.SparkThrowable
import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.types.DataType
import org.scalatest.funsuite.AnyFunSuite

import lmspark.io.{ChunkContext, PageSource}
import lmspark.testutil._

/** Dictionary-preserving reads: values read lazily through the vector's getters equal
  * parquet-java's, and a batch keeps the chunk's dictionary exactly when all its rows come from
  * dictionary-encoded pages (per parquet-java's own page readers) and its writer can express the
  * dictionary; vectors are reused across batches and row groups as the scan does. */
class DictionaryPreservationSuite extends AnyFunSuite {
  import DictionaryPreservationSuite._

  private val batchSizes = Seq(1, 3, 7, 64, 4096)

  /** Specs read again with Spark's EXCEPTION rebase mode (their writers check values). The
    * matrix's timestamps reach before 1900, which Spark's check rejects; the dedicated test below
    * covers them. */
  private val rebaseSpecs = Set("date")

  /** Every matrix type has a writer that keeps its dictionary, except BOOLEAN (no dictionaries). */
  private def preservable(spec: TypeSpec): Boolean = spec.primitive != PrimitiveTypeName.BOOLEAN

  for (config <- TestFiles.configs if config.mode != EncMode.Plain; spec <- TestTypes.all) {
    test(s"$config ${spec.name} as ${spec.sparkType}: lazy values and which batches keep the dictionary") {
      val f = TestFiles.matrixFile(config)
      val oracle = oracles.getOrElseUpdate(config, ParquetOracle.readAll(f.path))
      val layout = layouts.getOrElseUpdate(config, PageLayout.of(f.path))
      val pageCounts = pages.getOrElseUpdate(config, ParquetOracle.pageCounts(f.path))
      val optionSets = ColumnReadOptions() +:
        (if (rebaseSpecs(spec.name)) Seq(ColumnReadOptions(RebaseCheck.FailOnAncient)) else Nil)
      val lm = new LmFile(f.path)
      try {
        for (nulls <- Nulls.all; options <- optionSets) {
          val col = f.columns.indexWhere(c => c.spec == spec && c.nulls == nulls)
          val name = s"${f.columns(col).name} ${options.rebaseCheck}"
          val stats = new BatchStats
          for (batch <- batchSizes) {
            // One vector for both row groups, reset between batches, as FileBatchReader does.
            val v = new OnHeapColumnVector(batch, spec.sparkType)
            try {
              for (rg <- 0 until lm.rowGroups) {
                val expected = oracle(col)(rg).map(x => if (x == null) null else spec.toSpark(x))
                val reader = lm.reader(rg, col, spec.sparkType, options)
                var start = 0
                while (start < expected.size) {
                  val n = math.min(batch, expected.size - start)
                  v.reset()
                  reader.read(n, v)
                  val what = s"$name rg $rg batch $batch rows [$start, ${start + n})"
                  checkBatch(what, spec.sparkType, v, expected, start, n, layout(rg)(col), preservable(spec), stats)
                  start += n
                }
                assert(reader.pagesRead == pageCounts(rg)(col), s"$name rg $rg batch $batch: pages read")
                reader.close()
              }
            } finally v.close()
          }
          val hasDictionaryPages = layout.exists(_(col).exists(_.dictionaryEncoded))
          if (preservable(spec) && hasDictionaryPages) assert(stats.kept > 0, s"$name: no batch kept the dictionary")
          if (config.mode == EncMode.Dict && nulls == Nulls.Required && preservable(spec))
            assert(layout.forall(_(col).forall(_.dictionaryEncoded)), s"$name: expected only dictionary pages")
          if (config.mode == EncMode.Fallback && nulls == Nulls.Required && preservable(spec))
            assert(stats.mixed > 0 && stats.kept > 0, s"$name: expected batches across the fallback ($stats)")
        }
      } finally lm.close()
    }
  }

  test("with preservation off no batch is dictionary-encoded, and values are unchanged") {
    for (config <- TestFiles.configs if config.mode != EncMode.Plain) {
      val f = TestFiles.matrixFile(config)
      val oracle = oracles.getOrElseUpdate(config, ParquetOracle.readAll(f.path))
      val lm = new LmFile(f.path)
      try {
        for ((c, col) <- f.columns.zipWithIndex; batch <- Seq(7, 4096)) {
          val v = new OnHeapColumnVector(batch, c.spec.sparkType)
          try {
            for (rg <- 0 until lm.rowGroups) {
              val expected = oracle(col)(rg).map(x => if (x == null) null else c.spec.toSpark(x))
              val reader = lm.reader(rg, col, c.spec.sparkType, ColumnReadOptions(preserveDictionary = false))
              var start = 0
              while (start < expected.size) {
                val n = math.min(batch, expected.size - start)
                v.reset()
                reader.read(n, v)
                assert(!v.hasDictionary, s"$config ${c.name} rg $rg rows [$start, ${start + n})")
                checkValues(s"$config ${c.name} rg $rg", c.spec.sparkType, v, expected, start, n)
                start += n
              }
              reader.close()
            }
          } finally v.close()
        }
      } finally lm.close()
    }
  }

  test("data pages in any order: only batches made of dictionary-encoded rows keep the dictionary") {
    var startsPlainThenDictionary = 0
    var dictionaryThenPlain = 0
    try {
      for (v2 <- Seq(false, true)) {
        val config = FileConfig(CompressionCodecName.UNCOMPRESSED, v2, EncMode.Fallback)
        val f = TestFiles.matrixFile(config)
        val oracle = oracles.getOrElseUpdate(config, ParquetOracle.readAll(f.path))
        val lm = new LmFile(f.path)
        try {
          for (name <- Seq("int32", "int8", "ts_millis", "double", "string", "dec_flba3", "dec_flba16");
              nulls <- Seq(Nulls.Required, Nulls.SomeNulls)) {
            val col = f.columns.indexWhere(c => c.spec.name == name && c.nulls == nulls)
            val spec = f.columns(col).spec
            val bytes = ChunkBytes.read(f.path, lm.chunk(0, col))
            val (dict, data) = ChunkBytes.pages(bytes).partition(_.header.dictionary_page_header != null)
            assert(dict.size == 1, s"$name: one dictionary page")
            def slice(p: ChunkBytes.RawPage) = bytes.slice(p.start, p.dataStart + p.header.compressed_page_size)
            val infos = data.map { p =>
              if (p.header.data_page_header != null)
                PageInfo(p.header.data_page_header.num_values, isDictionaryEncoding(p.header.data_page_header.encoding))
              else PageInfo(p.header.data_page_header_v2.num_rows, isDictionaryEncoding(p.header.data_page_header_v2.encoding))
            }
            assert(infos.exists(_.dictionaryEncoded) && infos.exists(!_.dictionaryEncoded), s"$name: a fallback chunk")
            val firstRows = infos.scanLeft(0)(_ + _.rows)
            val values = oracle(col)(0).map(x => if (x == null) null else spec.toSpark(x))
            val r = new Random(col * 7919L + (if (v2) 1 else 0))
            for (trial <- 0 until 12) {
              val order = r.shuffle(data.indices.toVector)
              val chunk = (slice(dict.head) +: order.map(i => slice(data(i)))).flatten.toArray
              val layout = order.map(infos)
              val expected = order.flatMap(i => values.slice(firstRows(i), firstRows(i + 1)))
              val ctx = new ChunkContext(f.path.toString, lm.descriptor(col).getPath.mkString("."), 0)
              val reader = ColumnReaderFactory.create(lm.descriptor(col), spec.sparkType,
                PageSource.fromBytes(chunk, 0, chunk.length, ctx, CompressionCodecName.UNCOMPRESSED),
                expected.size, ColumnReadOptions())
              val v = new OnHeapColumnVector(300, spec.sparkType)
              val stats = new BatchStats
              try {
                var start = 0
                while (start < expected.size) {
                  val left = expected.size - start
                  if (r.nextInt(5) == 0) {
                    val k = math.min(left, r.nextInt(150))
                    reader.skip(k)
                    start += k
                  } else {
                    val n = math.min(left, 1 + r.nextInt(300))
                    v.reset()
                    reader.read(n, v)
                    checkBatch(s"$name ${nulls.suffix} v2=$v2 trial $trial rows [$start, ${start + n})", spec.sparkType,
                      v, expected, start, n, layout, preservable = true, stats)
                    val kinds = rowKinds(layout, start, start + n)
                    if (!kinds.head && kinds.contains(true)) startsPlainThenDictionary += 1
                    if (kinds.head && kinds.contains(false)) dictionaryThenPlain += 1
                    start += n
                  }
                }
              } finally { v.close(); reader.close() }
            }
          }
        } finally lm.close()
      }
    }
    assert(startsPlainThenDictionary > 0 && dictionaryThenPlain > 0,
      s"expected mixed batches both ways: $startsPlainThenDictionary, $dictionaryThenPlain")
  }

  test("an out-of-range dictionary id fails the read that meets it, naming file, column and row group") {
    val specs = TestTypes.all.filter(s => Set("int32", "string").contains(s.name))
    val cols = for ((s, i) <- specs.toIndexedSeq.zipWithIndex; nulls <- Seq(Nulls.Required, Nulls.SomeNulls))
      yield TestColumn(s, nulls, TestFileWriter.generate(s, nulls, EncMode.Dict, 31L + i))
    val path = TestFiles.dir.resolve("dict-out-of-range.parquet")
    TestFileWriter.write(path, FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = false, EncMode.Dict), cols)
    val lm = new LmFile(path)
    try {
      for ((c, col) <- cols.zipWithIndex; preserve <- Seq(true, false); batch <- Seq(1, 64)) {
        val bytes = ChunkBytes.read(path, lm.chunk(0, col))
        val dict = ChunkBytes.pages(bytes).head
        assert(dict.header.dictionary_page_header != null)
        val h = dict.header.deepCopy()
        h.dictionary_page_header.setNum_values(1) // only id 0 remains valid
        val corrupt = ChunkBytes.replaceHeader(bytes, dict, h)
        // parquet-java numbers dictionary entries in order of first appearance: id 0 is the first
        // non-null value, and the first row holding another value is the first bad id.
        val written = c.rowGroups(0)
        val first = written.find(_ != null).get
        val bad = written.indexWhere(x => x != null && x != first)
        assert(bad > 0)
        val ctx = new ChunkContext(path.toString, c.name, 0)
        val reader = ColumnReaderFactory.create(lm.descriptor(col), c.spec.sparkType,
          PageSource.fromBytes(corrupt, 0, corrupt.length, ctx, CompressionCodecName.UNCOMPRESSED),
          written.size, ColumnReadOptions(preserveDictionary = preserve))
        val v = new OnHeapColumnVector(batch, c.spec.sparkType)
        try {
          var start = 0
          val e = intercept[ParquetDecodeException] {
            while (true) {
              val n = math.min(batch, written.size - start)
              v.reset()
              reader.read(n, v)
              // Rows before the bad id read fine, lazily when preserving.
              assert(v.hasDictionary == preserve, s"${c.name} rows [$start, ${start + n})")
              checkValues(c.name, c.spec.sparkType, v, written.map(x => if (x == null) null else c.spec.toSpark(x)),
                start, n)
              start += n
            }
          }
          assert(start == bad / batch * batch, s"${c.name}: failed in the batch at $start, bad id at row $bad")
          val msg = e.getMessage
          assert(msg.contains(path.toString) && msg.contains(c.name) && msg.contains("row group 0"), msg)
          assert(msg.contains("dictionary id") && msg.contains("out of range [0, 1)"), msg)
        } finally { v.close(); reader.close() }
      }
    } finally lm.close()
  }

  test("a dictionary entry that fails a check fails only the rows that read it; otherwise it is kept") {
    val ancientDay = SparkRebase.lastSwitchJulianDay - 10
    val ancientMicros = SparkRebase.lastSwitchJulianTs - 1
    val byName = TestTypes.all.map(s => s.name -> s).toMap
    val rows = 1000
    val badRow = 500
    def column(spec: String, tag: String, pool: Seq[Any], bad: Any): TestColumn = {
      val r = new Random(tag.hashCode)
      TestColumn(byName(spec), Nulls.Required,
        IndexedSeq(IndexedSeq.tabulate(rows)(i => if (i == badRow) bad else pool(r.nextInt(pool.size)))), tag)
    }
    val modernMicros = Seq(0L, 1L, -1000000L, 1700000000000000L, 86400000000L)
    val cols = IndexedSeq(
      column("date", "_ancient", Seq(0, -1, 18000, 20000, 2932896), ancientDay),
      column("ts_micros", "_ancient", modernMicros, ancientMicros),
      column("ts_millis", "_ancient", modernMicros.map(_ / 1000L), Math.floorDiv(ancientMicros, 1000L)),
      column("ts_millis", "_overflow", modernMicros.map(_ / 1000L), Long.MaxValue / 100L))
    val path = TestFiles.dir.resolve("dict-checked-entries.parquet")
    TestFileWriter.write(path, FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = false, EncMode.Dict), cols)
    val layout = PageLayout.of(path)
    val rebaseError = DataSourceUtils.newRebaseExceptionInRead("Parquet")
    val lm = new LmFile(path)
    try {
      for ((c, col) <- cols.zipWithIndex) {
        assert(layout(0)(col).forall(_.dictionaryEncoded), s"${c.name}: expected only dictionary pages")
        val sparkType = c.spec.sparkType
        val overflow = c.tag == "_overflow"
        val expected = c.rowGroups(0).zipWithIndex.map { case (x, i) => if (i == badRow && overflow) null else c.spec.toSpark(x) }
        // The checking read: the bad entry is in the dictionary, so no batch keeps it.
        val checking = if (overflow) ColumnReadOptions() else ColumnReadOptions(RebaseCheck.FailOnAncient)
        val v = new OnHeapColumnVector(64, sparkType)
        try {
          val skipping = lm.reader(0, col, sparkType, checking)
          var start = 0
          while (start < rows) {
            if (start == badRow) { skipping.skip(1); start += 1 }
            val n = math.min(64, if (start < badRow) badRow - start else rows - start)
            v.reset()
            skipping.read(n, v)
            assert(!v.hasDictionary, s"${c.name} rows [$start, ${start + n}): an entry fails the check")
            checkValues(c.name, sparkType, v, expected, start, n)
            start += n
          }
          skipping.close()

          // The same entry read: the batch holding it fails, as the eager writer does.
          val reading = lm.reader(0, col, sparkType, checking)
          start = 0
          val e = intercept[RuntimeException] {
            while (start < rows) { v.reset(); reading.read(64, v); start += 64 }
          }
          assert(start == badRow / 64 * 64, s"${c.name}: failed in the batch at $start")
          if (overflow) assert(e.isInstanceOf[ArithmeticException], e.toString)
          else {
            assert(e.getClass == rebaseError.getClass, e.toString)
            assert(TestLineApis.condition(e.asInstanceOf[SparkThrowable]) == TestLineApis.condition(rebaseError.asInstanceOf[SparkThrowable]))
          }
          reading.close()

          // Without the check an ancient entry is an ordinary value: every batch keeps the dictionary.
          if (!overflow) {
            val plain = lm.reader(0, col, sparkType, ColumnReadOptions())
            start = 0
            while (start < rows) {
              val n = math.min(64, rows - start)
              v.reset()
              plain.read(n, v)
              assert(v.hasDictionary, s"${c.name} rows [$start, ${start + n}) without checks")
              checkValues(c.name, sparkType, v, expected, start, n)
              start += n
            }
            plain.close()
          }
        } finally v.close()
      }
    } finally lm.close()
  }
}

object DictionaryPreservationSuite {
  private val oracles = TrieMap.empty[FileConfig, IndexedSeq[IndexedSeq[IndexedSeq[Any]]]]
  private val layouts = TrieMap.empty[FileConfig, IndexedSeq[IndexedSeq[IndexedSeq[PageInfo]]]]
  private val pages = TrieMap.empty[FileConfig, IndexedSeq[IndexedSeq[Int]]]

  /** Batches that kept the dictionary, were decoded, and mixed dictionary and plain rows. */
  final class BatchStats {
    var kept = 0
    var decoded = 0
    var mixed = 0
    override def toString: String = s"kept $kept, decoded $decoded, mixed $mixed"
  }

  def isDictionaryEncoding(e: Encoding): Boolean = e == Encoding.PLAIN_DICTIONARY || e == Encoding.RLE_DICTIONARY

  /** Per row of `[from, until)`: whether its page is dictionary-encoded. */
  def rowKinds(layout: Seq[PageInfo], from: Int, until: Int): IndexedSeq[Boolean] =
    layout.flatMap(p => Seq.fill(p.rows)(p.dictionaryEncoded)).slice(from, until).toIndexedSeq

  def checkValues(what: String, t: DataType, v: WritableColumnVector, expected: IndexedSeq[Any], start: Int,
      n: Int): Unit = {
    var i = 0
    while (i < n) {
      val a = TestTypes.fromVector(t, v, i)
      if (!TestTypes.same(a, expected(start + i)))
        throw new AssertionError(s"$what: row ${start + i} is ${TestTypes.show(a)}, " +
          s"expected ${TestTypes.show(expected(start + i))} (dictionary: ${v.hasDictionary})")
      i += 1
    }
  }

  /** Values of rows `[start, start + n)` and whether the batch kept the dictionary: exactly when
    * the type is preservable and every row lies on a dictionary-encoded page of `layout`. */
  def checkBatch(what: String, t: DataType, v: WritableColumnVector, expected: IndexedSeq[Any], start: Int, n: Int,
      layout: Seq[PageInfo], preservable: Boolean, stats: BatchStats): Unit = {
    val allDictionary = PageLayout.allDictionary(layout, start, start + n)
    val noDictionary = PageLayout.noDictionary(layout, start, start + n)
    val want = preservable && allDictionary
    assert(v.hasDictionary == want, s"$what: hasDictionary ${v.hasDictionary}, expected $want")
    if (want) {
      assert(v.getDictionaryIds != null, s"$what: no ids")
      stats.kept += 1
    } else stats.decoded += 1
    if (!allDictionary && !noDictionary) stats.mixed += 1
    checkValues(what, t, v, expected, start, n)
  }
}
