package lmspark.column

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.io.ChunkContext
import lmspark.meta.PageIndexes
import lmspark.predicate.ColumnStats
import lmspark.testutil._
import lmspark.testutil.Sources

/** Metadata converted by [[SparkValues]] agrees with the rows lmspark reads: for every chunk of
  * parquet-java files (the column-reader matrix, and one column per logical type read as every
  * Spark type Spark pairs with it, LEGACY rebasing and INT96 included), the chunk statistics'
  * null count is the rows' and their bounds are the rows' min and max in Spark's ordering; every
  * page of the column index bounds its rows, with their null count; every dictionary entry
  * converts, and the entries are the chunk's values. Hand-built bad statistics and column indexes
  * are rejected, each for its reason ([[SparkValuesRejectionSuite]]). */
class SparkValuesSuite extends AnyFunSuite {
  import SparkValuesSuite._

  for (v2 <- Seq(false, true); mode <- EncMode.all) {
    val config = FileConfig(CompressionCodecName.UNCOMPRESSED, v2, mode)
    test(s"$config: statistics, page indexes and dictionaries of every matrix column agree with its rows") {
      val f = TestFiles.matrixFile(config)
      val lm = new LmFile(f.path)
      val layout = PageLayout.of(f.path)
      try {
        for ((c, col) <- f.columns.zipWithIndex; rg <- 0 until lm.rowGroups) {
          val out = checkChunk(s"$config ${c.name} rg $rg", lm, rg, col, c.spec.sparkType, ColumnReadOptions())
          // parquet-java writes no column index for a FLOAT / DOUBLE chunk holding NaN.
          if (!out.hasNaN) assert(out.pagesChecked > 0, s"$config ${c.name} rg $rg: no page index")
          assert(ChunkDictionary.allPagesDictionaryEncoded(lm.chunk(rg, col)) ==
            layout(rg)(col).forall(_.dictionaryEncoded), s"$config ${c.name} rg $rg: all pages dictionary-encoded")
          // parquet-java falls back to PLAIN at once when the first page does not compress well.
          assert(out.dictionaryChecked == layout(rg)(col).exists(_.dictionaryEncoded), s"$config ${c.name} rg $rg: dictionary")
        }
      } finally lm.close()
    }
  }

  for (dictionary <- Seq(true, false); v2 <- Seq(false, true)) {
    test(s"logical types (dictionary $dictionary, v2 $v2): every Spark pairing's metadata agrees with its rows") {
      val path = TestFiles.dir.resolve(s"logical-meta-$dictionary-$v2.parquet")
      LogicalFiles.write(path, seed = if (dictionary) 17 else 18, dictionary, v2)
      val lm = new LmFile(path)
      assert(lm.rowGroups > 2, s"${lm.rowGroups} row groups")
      try {
        var checked = 0
        for (pair <- LogicalFiles.pairs) {
          val col = lm.columnIndex(pair.column)
          // A pair this line's Spark reads differently from lmspark's rules (3.5: no widening) is
          // declined and read by Spark, so lmspark converts none of its metadata; on a line whose
          // rules are lmspark's, no pair is declined.
          val declined = lmspark.shim.LineReadRules.refusal(lm.descriptor(col), pair.sparkType)
          assert(declined.isEmpty || !TestLineApis.readRulesAreLmsparks, s"$pair declined: $declined")
          if (declined.isEmpty) {
            checked += 1
            var dictionaries = 0
            for (rg <- 0 until lm.rowGroups) {
              val what = s"$pair rg $rg"
              val out = checkChunk(what, lm, rg, col, pair.sparkType, pair.options)
              if (out.dictionaryChecked) dictionaries += 1
              if (pair.column == "i96") {
                assert(out.stats.min.isEmpty && out.stats.max.isEmpty, s"$what: INT96 bounds")
                assert(out.pagesChecked == 0, s"$what: INT96 has no usable column index")
              } else if (!out.hasNaN) assert(out.pagesChecked > 0, s"$what: no page index")
            }
            // parquet-java's v1 writer has no dictionary for BOOLEAN nor FIXED_LEN_BYTE_ARRAY.
            val primitive = lm.descriptor(col).getPrimitiveType.getPrimitiveTypeName
            if (dictionary && primitive != PrimitiveTypeName.BOOLEAN && (v2 || primitive != PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY))
              assert(dictionaries > 0, s"$pair: no dictionary checked")
          }
        }
        assert(checked > 0)
        info(s"$checked of ${LogicalFiles.pairs.size} pairs checked")
      } finally lm.close()
    }
  }

  test("FailOnAncient: an ancient bound is unknown, never an error; LEGACY rebasing of bounds is monotone") {
    val path = TestFiles.dir.resolve("logical-meta-ancient.parquet")
    LogicalFiles.write(path, seed = 23, dictionary = true, v2 = false)
    val lm = new LmFile(path)
    try {
      var ancientMins = 0
      for (name <- Seq("d", "ts_us", "ts_ms"); rg <- 0 until lm.rowGroups) {
        val col = lm.columnIndex(name)
        val t = if (name == "d") DateType else TimestampType
        val failing = SparkValues.forColumn(lm.descriptor(col), t, ColumnReadOptions(RebaseCheck.FailOnAncient)).get
        val corrected = SparkValues.forColumn(lm.descriptor(col), t, ColumnReadOptions()).get
        val stats: org.apache.parquet.column.statistics.Statistics[_] = lm.chunk(rg, col).getStatistics
        val a = failing.statistics(stats, lm.rowCount(rg)).fold(w => fail(w), identity)
        val b = corrected.statistics(stats, lm.rowCount(rg)).fold(w => fail(w), identity)
        val limit: Long = if (name == "d") SparkRebase.lastSwitchJulianDay.toLong else SparkRebase.lastSwitchJulianTs
        def ancient(x: Any) = (x match { case i: Int => i.toLong; case l: Long => l; case o => fail(s"$o") }) < limit
        if (ancient(b.min.get)) { ancientMins += 1; assert(a.min.isEmpty && !a.minExact, s"$name rg $rg: $a") }
        else assert(a.min == b.min)
        if (ancient(b.max.get)) assert(a.max.isEmpty) else assert(a.max == b.max)
        assert(a.nullCount == b.nullCount)
      }
      assert(ancientMins > 0)
    } finally lm.close()
  }

  test("entry blocks: 64, then doubling; they partition the entries and blockOf names each entry's") {
    import SparkValues.Entries
    val r = new scala.util.Random(31)
    for (length <- (1 to 600) ++ Seq(4095, 4096, 4097, 1 << 20, Int.MaxValue)) {
      val last = Entries.blockOf(length - 1)
      val blocks = (0 to last).map(Entries.block(_, length))
      assert(blocks.head.start == 0 && blocks.last.end == length, s"$length: $blocks")
      blocks.sliding(2).foreach { case Seq(a, b) => assert(a.end == b.start && a.nonEmpty && b.nonEmpty, s"$length: $blocks") case _ => }
      assert(blocks.dropRight(1).zipWithIndex.forall { case (b, k) => b.size == (if (k <= 1) Entries.FirstBlock else Entries.FirstBlock << (k - 1)) })
      for (i <- Seq(0, length - 1) ++ Seq.fill(20)(r.nextInt(length))) assert(blocks(Entries.blockOf(i)).contains(i), s"$length: entry $i")
    }
  }

  test("dictionary entries convert a block at a time, in any read order; under FailOnAncient only blocks holding an ancient value fail") {
    val path = TestFiles.dir.resolve("logical-meta-ancient-dict.parquet")
    LogicalFiles.write(path, seed = 23, dictionary = true, v2 = false)
    val lm = new LmFile(path)
    val r = new scala.util.Random(29)
    try {
      var failed = 0
      var converted = 0
      for (name <- Seq("d", "ts_us", "ts_ms", "i32", "s"); rg <- 0 until lm.rowGroups) {
        val col = lm.columnIndex(name)
        val desc = lm.descriptor(col)
        val chunk = lm.chunk(rg, col)
        if (chunk.hasDictionaryPage) {
          val in = new LocalInputFile(lm.path).newStream()
          val d = try Sources.dictionary(in, chunk, desc, lm.path.toString, verifyChecksums = true).get finally in.close()
          val t = name match { case "d" => DateType; case "i32" => IntegerType; case "s" => StringType; case _ => TimestampType }
          val corrected = SparkValues.forColumn(desc, t, ColumnReadOptions()).get.dictionary(d).get
          val failing = SparkValues.forColumn(desc, t, ColumnReadOptions(RebaseCheck.FailOnAncient)).get.dictionary(d).get
          assert(corrected.size == d.size && failing.size == d.size)
          // Read in a random order, each entry twice: the same value as a sequential read of a fresh conversion.
          val sequential = SparkValues.forColumn(desc, t, ColumnReadOptions()).get.dictionary(d).get.toVector
          for (k <- r.shuffle((0 until d.size) ++ (0 until d.size)))
            assert(LogicalFiles.comparable(corrected(k)) == LogicalFiles.comparable(sequential(k)), s"$name rg $rg entry $k")
          val limit: Long = if (name == "d") SparkRebase.lastSwitchJulianDay.toLong else SparkRebase.lastSwitchJulianTs
          def ancient(x: Any) = t match {
            case DateType => x.asInstanceOf[Int].toLong < limit
            case TimestampType => x.asInstanceOf[Long] < limit
            case _ => false
          }
          val blocks = (0 to SparkValues.Entries.blockOf(d.size - 1)).map(SparkValues.Entries.block(_, d.size))
          assert(blocks.flatten == (0 until d.size), s"$name rg $rg: blocks $blocks")
          for (block <- blocks) {
            val k = block(r.nextInt(block.size))
            if (block.exists(j => ancient(corrected(j)))) {
              intercept[SparkValues.Unconvertible](failing(k))
              failed += 1
            } else {
              assert(LogicalFiles.comparable(failing(k)) == LogicalFiles.comparable(corrected(k)), s"$name rg $rg entry $k")
              converted += 1
            }
          }
        }
      }
      assert(failed > 0 && converted > 0, s"$failed blocks failed, $converted converted")
    } finally lm.close()
  }
}

object SparkValuesSuite extends org.scalatest.Assertions {

  /** What [[checkChunk]] checked. */
  final case class Checked(stats: ColumnStats, pagesChecked: Int, dictionaryChecked: Boolean, hasNaN: Boolean)

  /** Reads chunk (`rg`, `col`) of `lm` as `t` with `options` and checks [[SparkValues]]' statistics,
    * page index and dictionary against the values read. */
  def checkChunk(what: String, lm: LmFile, rg: Int, col: Int, t: DataType, options: ColumnReadOptions): Checked = {
    val chunk = lm.chunk(rg, col)
    val desc = lm.descriptor(col)
    val rows = lm.rowCount(rg)
    val values = LmReading.readAll(lm.reader(rg, col, t, options), t, rows.toInt, 4096).map(LogicalFiles.toCatalyst(t, _))
    val sv = SparkValues.forColumn(desc, t, options).getOrElse(fail(s"$what: no converter"))
    val ord = TypeUtils.getInterpretedOrdering(t)
    val floating = Set(PrimitiveTypeName.FLOAT, PrimitiveTypeName.DOUBLE)(desc.getPrimitiveType.getPrimitiveTypeName)
    val binaryLike = Set(PrimitiveTypeName.BINARY, PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY)(desc.getPrimitiveType.getPrimitiveTypeName)
    val trusted = sv.boundsUnusable.isEmpty

    /** Bounds of `vs` (the rows of a chunk or page) as metadata gives them. */
    def checkBounds(where: String, vs: IndexedSeq[Any], s: ColumnStats, exactExpected: Boolean): Unit = {
      val nulls = vs.count(_ == null)
      assert(s.nullCount.contains(nulls.toLong), s"$where: null count ${s.nullCount}, the rows have $nulls")
      assert(s.rowCount == vs.size, s"$where: row count")
      assert(s.mayHaveNaN == floating, s"$where: mayHaveNaN")
      val ordered = vs.filter(x => x != null && !LogicalFiles.isNaN(x))
      if (ordered.isEmpty) assert(s.min.isEmpty && s.max.isEmpty || vs.exists(LogicalFiles.isNaN), s"$where: bounds of no value")
      else if (trusted && !(floating && vs.exists(LogicalFiles.isNaN) && s.min.isEmpty)) {
        assert(s.min.isDefined && s.max.isDefined, s"$where: no bounds")
        val lo = ordered.min(ord)
        val hi = ordered.max(ord)
        assert(ord.equiv(s.min.get, lo), s"$where: min ${show(s.min.get)}, the rows' min is ${show(lo)}")
        assert(ord.equiv(s.max.get, hi), s"$where: max ${show(s.max.get)}, the rows' max is ${show(hi)}")
        assert(s.minExact == exactExpected && s.maxExact == exactExpected, s"$where: exactness")
      }
      if (floating) {
        s.min.foreach(m => assert(!(m == 0.0 || m == 0.0f) || show(m).startsWith("-"), s"$where: zero min not -0.0"))
        s.max.foreach(m => assert(!(m == 0.0 || m == 0.0f) || !show(m).startsWith("-"), s"$where: zero max not +0.0"))
      }
      for (lo <- s.min; hi <- s.max) {
        assert(ord.lteq(lo, hi), s"$where: min > max")
        ordered.foreach(x => assert(ord.lteq(lo, x) && ord.lteq(x, hi), s"$where: ${show(x)} outside the bounds"))
      }
    }

    val stats = sv.statistics(chunk.getStatistics, rows).fold(why => fail(s"$what: statistics rejected: $why"), identity)
    checkBounds(s"$what chunk", values, stats, exactExpected = !binaryLike)

    // Page index
    val ctx = new ChunkContext(lm.path.toString, desc.getPath.mkString("."), rg)
    val raw = PageIndexes.read(lm.in, chunk, ctx).fold(why => fail(s"$what: page index rejected: $why"), identity)
    var pagesChecked = 0
    for (ci <- raw.columnIndex; oi <- raw.offsetIndex) {
      val loc = PageIndexes.locations(oi, chunk, rows).fold(why => fail(s"$what: offset index rejected: $why"), identity)
      val pages = sv.pages(ci, loc, Some(stats)).fold(why => fail(s"$what: column index rejected: $why"), identity)
      for (i <- 0 until loc.pages) {
        assert(pages.firstRow(i) == loc.firstRow(i) && pages.endRow(i) == loc.endRow(i))
        val s = pages.stats(i)
        checkBounds(s"$what page $i", values.slice(loc.firstRow(i).toInt, loc.endRow(i).toInt), s, exactExpected = false)
        assert(!s.minExact && !s.maxExact)
        pagesChecked += 1
      }
    }
    if (raw.columnIndex.isEmpty && raw.offsetIndex.isDefined)
      assert(raw.columnIndexProblem.isDefined || chunk.getColumnIndexReference == null, what)

    // Dictionary
    var dictionaryChecked = false
    if (chunk.hasDictionaryPage) {
      val in = new RecordingInputStream(new LocalInputFile(lm.path).newStream())
      try {
        val d = Sources.dictionary(in, chunk, desc, lm.path.toString, verifyChecksums = true)
          .getOrElse(fail(s"$what: no dictionary page"))
        assert(in.reads.forall { case (o, n) => o >= chunk.getStartingPos && o + n <= chunk.getFirstDataPageOffset },
          s"$what: the dictionary read ${in.reads} outside [${chunk.getStartingPos}, ${chunk.getFirstDataPageOffset})")
        sv.dictionary(d) match {
          case None =>
            assert(desc.getPrimitiveType.getPrimitiveTypeName == PrimitiveTypeName.BOOLEAN, s"$what: dictionary not converted")
          case Some(entries) =>
            assert(entries.size == d.size)
            val entrySet = entries.map(LogicalFiles.comparable).toSet
            val valueSet = values.filter(_ != null).map(LogicalFiles.comparable).toSet
            val missing = valueSet.diff(entrySet)
            if (ChunkDictionary.allPagesDictionaryEncoded(chunk)) {
              assert(missing.isEmpty, s"$what: values not in the dictionary: ${missing.take(3)}")
              assert(entrySet == valueSet, s"$what: dictionary entries not in the chunk: ${entrySet.diff(valueSet).take(3)}")
            } else assert(entrySet.diff(valueSet).isEmpty, s"$what: dictionary entries not in the chunk")
            dictionaryChecked = true
        }
      } finally in.close()
    }
    Checked(stats, pagesChecked, dictionaryChecked, values.exists(LogicalFiles.isNaN))
  }

  def show(v: Any): String = v match {
    case b: Array[Byte] => TestTypes.show(TestTypes.bytes(b))
    case other => String.valueOf(other)
  }
}
