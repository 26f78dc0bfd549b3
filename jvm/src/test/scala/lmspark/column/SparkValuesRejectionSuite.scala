package lmspark.column

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path => HPath}
import org.apache.parquet.bytes.BytesUtils
import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.column.statistics.{FloatStatistics, Statistics}
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.format.{FileMetaData, Util}
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.internal.column.columnindex.{BoundaryOrder, ColumnIndexBuilder}
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.{ColumnOrder, LogicalTypeAnnotation => LTA, MessageType, PrimitiveType, Types}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.parquet.schema.Type.Repetition
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.LocalInputFile
import lmspark.predicate.ColumnStats
import lmspark.selection.PageLocations
import lmspark.testutil.{LmFile, TestFiles, TestTypes}

/** Statistics and column indexes that must not be trusted, built by hand with parquet-java's own
  * builders (and one footer rewritten by hand for the deprecated signed `min` / `max` fields):
  * each is rejected (`Left`) or loses its bounds, for the documented reason, and the near-identical
  * consistent one is accepted. */
class SparkValuesRejectionSuite extends AnyFunSuite {

  private def leaf(t: PrimitiveType): ColumnDescriptor =
    new ColumnDescriptor(Array(t.getName), t, 0, if (t.getRepetition == Repetition.REQUIRED) 0 else 1)

  private val optInt = Types.optional(INT32).named("i")
  private val reqInt = Types.required(INT32).named("i")
  private val optString = Types.optional(BINARY).as(LTA.stringType()).named("s")

  private def values(t: PrimitiveType, sparkType: DataType) =
    SparkValues.forColumn(leaf(t), sparkType, ColumnReadOptions()).get

  private def int(i: Int): Array[Byte] = BytesUtils.intToBytes(i)

  private def stats(t: PrimitiveType, min: Array[Byte], max: Array[Byte], nulls: Long): Statistics[_] = {
    val b = Statistics.getBuilderForReading(t)
    if (min != null) b.withMin(min).withMax(max)
    if (nulls >= 0) b.withNumNulls(nulls)
    b.build()
  }

  private def rejected(e: Either[String, ColumnStats], why: String): Unit = e match {
    case Left(reason) => assert(reason.contains(why), reason)
    case Right(s) => fail(s"accepted $s, expected a rejection for '$why'")
  }

  test("chunk statistics: inconsistent ones are rejected whole, consistent ones converted") {
    val sv = values(optInt, IntegerType)
    assert(sv.statistics(stats(optInt, int(-3), int(9), 2), 10) ==
      Right(ColumnStats(Some(-3), Some(9), Some(2), 10, minExact = true, maxExact = true)))
    rejected(sv.statistics(stats(optInt, int(9), int(-3), 2), 10), "min 9 > max -3")
    rejected(sv.statistics(stats(optInt, int(-3), int(9), 11), 10), "null count 11 outside")
    rejected(sv.statistics(stats(optInt, int(-3), int(9), 10), 10), "bounds for a chunk of 10 rows")
    rejected(sv.statistics(stats(optInt, null, null, -1), 10), "no statistics")
    rejected(sv.statistics(stats(optInt, int(1), int(1), 0), -1), "negative row count")
    rejected(values(reqInt, IntegerType).statistics(stats(reqInt, int(-3), int(9), 1), 10), "in a REQUIRED column")
    // No bounds but a null count: the null count is used.
    assert(sv.statistics(stats(optInt, null, null, 4), 10) == Right(ColumnStats(None, None, Some(4), 10)))
    assert(sv.statistics(stats(optInt, null, null, 10), 10).map(_.allNull) == Right(true))
    // A converted type: the bounds go through the widening writer.
    assert(values(optInt, LongType).statistics(stats(optInt, int(-3), int(9), 0), 10).map(s => (s.min, s.max)) ==
      Right((Some(-3L), Some(9L))))
    assert(values(optInt, DecimalType(12, 2)).statistics(stats(optInt, int(-3), int(9), 0), 10).map(_.min) ==
      Right(Some(Decimal(BigDecimal(-3), 12, 2))))
  }

  test("FLOAT / DOUBLE: a NaN bound drops both bounds but keeps the null count; zeros widen; NaN may always hide") {
    val ft = Types.optional(FLOAT).named("f")
    val sv = values(ft, FloatType)
    val nan = Statistics.createStats(ft).asInstanceOf[FloatStatistics]
    nan.setMinMax(Float.NaN, 1.0f)
    nan.setNumNulls(2)
    assert(sv.statistics(nan, 10) == Right(ColumnStats(None, None, Some(2), 10, mayHaveNaN = true)))
    val nanMax = Statistics.createStats(ft).asInstanceOf[FloatStatistics]
    nanMax.setMinMax(-1.0f, Float.NaN)
    nanMax.setNumNulls(0)
    assert(sv.statistics(nanMax, 10).map(s => (s.min, s.max)) == Right((None, None)))
    val zeros = Statistics.createStats(ft).asInstanceOf[FloatStatistics]
    zeros.setMinMax(0.0f, -0.0f)
    zeros.setNumNulls(0)
    val z = sv.statistics(zeros, 10).toOption.get
    assert(java.lang.Float.floatToRawIntBits(z.min.get.asInstanceOf[Float]) == java.lang.Float.floatToRawIntBits(-0.0f))
    assert(java.lang.Float.floatToRawIntBits(z.max.get.asInstanceOf[Float]) == java.lang.Float.floatToRawIntBits(0.0f))
    assert(z.mayHaveNaN && z.minExact)
    // FLOAT read as DOUBLE: still floating.
    assert(values(ft, DoubleType).statistics(zeros, 10).map(s => (s.min, s.max, s.mayHaveNaN)) ==
      Right((Some(-0.0), Some(0.0), true)))
    // INT32 read as DOUBLE has no NaN.
    assert(values(optInt, DoubleType).statistics(stats(optInt, int(0), int(1), 0), 10).map(_.mayHaveNaN) == Right(false))
  }

  test("types without a usable order: INT96, undefined column order, collations; their null counts stay") {
    val i96 = Types.optional(INT96).named("t")
    val twelve = Array.fill[Byte](12)(1)
    val s96 = values(i96, TimestampType).statistics(stats(i96, twelve, twelve, 3), 10)
    assert(s96 == Right(ColumnStats(None, None, Some(3), 10)))
    val undefined = Types.optional(INT32).columnOrder(ColumnOrder.undefined()).named("u")
    val su = values(undefined, IntegerType)
    assert(su.boundsUnusable.isDefined)
    assert(su.statistics(stats(undefined, int(1), int(1), 0), 10) == Right(ColumnStats(None, None, Some(0), 10)))
    for (collated <- lmspark.testutil.TestLineApis.collatedString) { // lines with collations
      val lcase = values(optString, collated)
      assert(lcase.statistics(stats(optString, "A".getBytes, "b".getBytes, 0), 10).map(_.min) == Right(None))
    }
    assert(values(optString, StringType).statistics(stats(optString, "A".getBytes, "b".getBytes, 0), 10).map(_.min) ==
      Right(Some(UTF8String.fromString("A"))))
  }

  test("BINARY / FIXED_LEN_BYTE_ARRAY: bounds are never exact; string bounds in unsigned byte order") {
    val sv = values(optString, StringType)
    val s = sv.statistics(stats(optString, "a".getBytes("UTF-8"), "é".getBytes("UTF-8"), 0), 10).toOption.get
    assert(s.min.contains(UTF8String.fromString("a")) && s.max.contains(UTF8String.fromString("é")))
    assert(!s.minExact && !s.maxExact)
    // In unsigned byte order "é" (0xc3 0xa9) is above "a": the signed order's bounds are inconsistent.
    rejected(sv.statistics(stats(optString, "é".getBytes("UTF-8"), "a".getBytes("UTF-8"), 0), 10), "> max")
  }

  test("unsigned integers: bounds in signed order are detected as min > max, in unsigned order used") {
    val u32 = Types.optional(INT32).as(LTA.intType(32, false)).named("u")
    val sv = values(u32, LongType)
    assert(sv.statistics(stats(u32, int(7), int(-5), 0), 10).map(s => (s.min, s.max)) == Right((Some(7L), Some(4294967291L))))
    rejected(sv.statistics(stats(u32, int(-5), int(7), 0), 10), "min 4294967291 > max 7")
    val u64 = Types.optional(INT64).as(LTA.intType(64, false)).named("u")
    rejected(values(u64, DecimalType(20, 0)).statistics(stats(u64, BytesUtils.longToBytes(-1L), BytesUtils.longToBytes(1L), 0), 5),
      "> max")
  }

  test("truncating reads (INT32 as byte / short) use bounds only inside the target range") {
    val sv = values(optInt, ByteType)
    assert(sv.statistics(stats(optInt, int(-128), int(127), 0), 10).map(s => (s.min, s.max)) ==
      Right((Some(-128.toByte), Some(127.toByte))))
    assert(sv.statistics(stats(optInt, int(0), int(300), 1), 10) == Right(ColumnStats(None, None, Some(1), 10)))
    assert(values(optInt, ShortType).statistics(stats(optInt, int(-40000), int(5), 0), 10).map(_.min) == Right(None))
  }

  test("FIXED_LEN_BYTE_ARRAY decimals: two's complement bounds; a bound of the wrong length is unusable") {
    val f4 = Types.optional(FIXED_LEN_BYTE_ARRAY).length(4).as(LTA.decimalType(2, 9)).named("d")
    def be(i: Int) = ByteBuffer.allocate(4).putInt(i).array()
    val dt = DecimalType(9, 2)
    assert(values(f4, dt).statistics(stats(f4, be(-300), be(70000), 0), 10).map(s => (s.min, s.max)) ==
      Right((Some(Decimal(BigDecimal("-3.00"), 9, 2)), Some(Decimal(BigDecimal("700.00"), 9, 2)))))
    rejected(values(f4, dt).statistics(stats(f4, be(70000), be(-300), 0), 10), "> max")
    assert(values(f4, dt).statistics(stats(f4, Array[Byte](1, 2), be(5), 0), 10).map(_.min) == Right(None))
  }

  // ---- column indexes ----

  private def le(i: Int): ByteBuffer = ByteBuffer.wrap(int(i))
  private val empty = ByteBuffer.allocate(0)
  private def jl(xs: Long*) = xs.map(Long.box).asJava
  private def jb(xs: Boolean*) = xs.map(Boolean.box).asJava
  private def bufs(xs: ByteBuffer*) = xs.asJava
  /** Three pages of rows [0, 4), [4, 6), [6, 10). */
  private val loc = new PageLocations(10, Array(0L, 4L, 6L), Array(100L, 150L, 170L), Array(50, 20, 30))
  private val chunkStats = Some(ColumnStats(Some(-5), Some(50), Some(2), 10, minExact = true, maxExact = true))

  private def pagesRejected(e: Either[String, _], why: String): Unit = e match {
    case Left(reason) => assert(reason.contains(why), reason)
    case Right(p) => fail(s"accepted $p, expected a rejection for '$why'")
  }

  test("column index: a consistent one gives per-page statistics, inexact") {
    val ci = ColumnIndexBuilder.build(optInt, BoundaryOrder.UNORDERED, jb(false, true, false), jl(0, 2, 0),
      bufs(le(-5), empty, le(3)), bufs(le(7), empty, le(50)))
    val p = values(optInt, IntegerType).pages(ci, loc, chunkStats).fold(fail(_), identity)
    assert(p.firstRow.toSeq == Seq(0L, 4L, 6L) && p.endRow.toSeq == Seq(4L, 6L, 10L))
    assert(p.stats == IndexedSeq(ColumnStats(Some(-5), Some(7), Some(0), 4), ColumnStats(None, None, Some(2), 2),
      ColumnStats(Some(3), Some(50), Some(0), 4)))
    // Without null counts (optional in the format) and without chunk statistics.
    val noCounts = ColumnIndexBuilder.build(optInt, BoundaryOrder.UNORDERED, jb(false, false, false), null,
      bufs(le(-5), le(0), le(3)), bufs(le(7), le(1), le(50)))
    assert(values(optInt, IntegerType).pages(noCounts, loc, None).map(_.stats.map(_.nullCount)) == Right(Seq(None, None, None)))
  }

  test("column index: each inconsistency makes the whole index ignored") {
    val sv = values(optInt, IntegerType)
    def ci(nullPages: java.util.List[java.lang.Boolean], nullCounts: java.util.List[java.lang.Long],
        mins: java.util.List[ByteBuffer], maxs: java.util.List[ByteBuffer]) =
      ColumnIndexBuilder.build(optInt, BoundaryOrder.UNORDERED, nullPages, nullCounts, mins, maxs)
    pagesRejected(sv.pages(ci(jb(false, false), jl(0, 0), bufs(le(1), le(2)), bufs(le(3), le(4))), loc, None),
      "lists 2 pages")
    pagesRejected(sv.pages(ci(jb(false, true, false), null, bufs(le(1), empty, le(2)), bufs(le(3), empty, le(4))), loc, None),
      "page 1 is a null page but its null count is unknown")
    pagesRejected(sv.pages(ci(jb(false, true, false), jl(0, 1, 0), bufs(le(1), empty, le(2)), bufs(le(3), empty, le(4))), loc, None),
      "page 1 is a null page but its null count is 1 of 2 rows")
    pagesRejected(sv.pages(ci(jb(false, false, false), jl(5, 0, 0), bufs(le(1), le(1), le(2)), bufs(le(3), le(3), le(4))), loc, None),
      "page 0 has null count 5 outside [0, 4 rows]")
    pagesRejected(sv.pages(ci(jb(false, false, false), jl(0, 2, 0), bufs(le(1), le(1), le(2)), bufs(le(3), le(3), le(4))), loc, None),
      "page 1 is not a null page but all its 2 rows are null")
    pagesRejected(sv.pages(ci(jb(false, false, false), jl(0, 0, 0), bufs(le(1), le(9), le(2)), bufs(le(3), le(3), le(4))), loc, None),
      "page 1 has min 9 > max 3")
    pagesRejected(sv.pages(ci(jb(false, false, false), jl(0, 0, 2), bufs(le(1), le(-9), le(2)), bufs(le(3), le(-6), le(4))),
      loc, chunkStats), "page 1 has max -6 below the chunk's min -5")
    pagesRejected(sv.pages(ci(jb(false, false, false), jl(0, 0, 2), bufs(le(1), le(51), le(2)), bufs(le(3), le(60), le(4))),
      loc, chunkStats), "page 1 has min 51 above the chunk's max 50")
    pagesRejected(sv.pages(ci(jb(false, false, false), jl(0, 1, 0), bufs(le(1), le(1), le(2)), bufs(le(3), le(3), le(4))),
      loc, chunkStats), "null counts add up to 1, the chunk's statistics say 2")
    val req = values(reqInt, IntegerType)
    pagesRejected(req.pages(ColumnIndexBuilder.build(reqInt, BoundaryOrder.UNORDERED, jb(false, true, false), jl(0, 2, 0),
      bufs(le(1), empty, le(2)), bufs(le(3), empty, le(4))), loc, None), "null count 2")
    pagesRejected(req.pages(ColumnIndexBuilder.build(reqInt, BoundaryOrder.UNORDERED, jb(false, true, false), null,
      bufs(le(1), empty, le(2)), bufs(le(3), empty, le(4))), loc, None), "page 1 of a REQUIRED column is a null page")
  }

  // ---- deprecated min / max fields ----

  /** `path` with its footer rewritten by `edit` (the data and page indexes stay byte-identical). */
  private def rewriteFooter(path: Path, out: Path)(edit: FileMetaData => Unit): Unit = {
    val bytes = Files.readAllBytes(path)
    val n = bytes.length
    val footerLength = ByteBuffer.wrap(bytes, n - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt
    val footerStart = n - 8 - footerLength
    val fmd = Util.readFileMetaData(new ByteArrayInputStream(bytes, footerStart, footerLength))
    edit(fmd)
    val footer = new ByteArrayOutputStream()
    Util.writeFileMetaData(fmd, footer)
    val o = new ByteArrayOutputStream()
    o.write(bytes, 0, footerStart)
    footer.writeTo(o)
    o.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(footer.size).array())
    o.write("PAR1".getBytes("US-ASCII"))
    Files.write(out, o.toByteArray)
  }

  test("statistics only in the deprecated signed min / max fields: parquet-java drops them for strings, " +
    "unsigned integers and decimals, keeps them for signed integers") {
    val schema = new MessageType("t", optString, optInt,
      Types.optional(INT32).as(LTA.intType(32, false)).named("u"),
      Types.optional(FIXED_LEN_BYTE_ARRAY).length(4).as(LTA.decimalType(0, 9)).named("d"))
    val path = TestFiles.dir.resolve("deprecated-stats-src.parquet")
    Files.deleteIfExists(path)
    val w = ExampleParquetWriter.builder(new HPath(path.toString)).withType(schema).withConf(new Configuration()).build()
    val f = new SimpleGroupFactory(schema)
    val strings = Seq("a", "é", "zz", "Ω")
    try for (i <- 0 until 40) {
      val g = f.newGroup()
      g.add("s", strings(i % strings.size))
      g.add("i", i - 20)
      g.add("u", if (i % 2 == 0) i else -i) // unsigned: both halves of the range
      g.add("d", Binary.fromConstantByteArray(TestTypes.padded(java.math.BigInteger.valueOf(if (i % 2 == 0) 1 else 255), 4)))
      w.write(g)
    } finally w.close()
    // Signed byte-wise order, as writers before PARQUET-686 used for every binary column.
    def signedBytes(a: Array[Byte], b: Array[Byte]): Int = {
      val k = (0 until math.min(a.length, b.length)).find(i => a(i) != b(i))
      k.fold(a.length - b.length)(i => a(i) - b(i))
    }
    for (createdBy <- Seq("parquet-mr version 1.8.1 (build 4aba4dae7bb0d4edbcf7923ae1339f28fd3f7fcf)",
        "parquet-mr version 1.16.0 (build x)")) {
      val out = TestFiles.dir.resolve("deprecated-stats.parquet")
      rewriteFooter(path, out) { fmd =>
        fmd.setCreated_by(createdBy)
        for (rg <- fmd.row_groups.asScala; cc <- rg.columns.asScala) {
          val st = cc.meta_data.statistics
          val name = cc.meta_data.path_in_schema.get(0)
          val (min, max) = name match {
            case "s" | "d" =>
              val all = if (name == "s") strings.map(_.getBytes("UTF-8"))
                else Seq(1, 255).map(v => TestTypes.padded(java.math.BigInteger.valueOf(v), 4))
              (all.min(Ordering.fromLessThan[Array[Byte]](signedBytes(_, _) < 0)),
                all.max(Ordering.fromLessThan[Array[Byte]](signedBytes(_, _) < 0)))
            case _ => (st.getMin_value, st.getMax_value) // signed int order: what old writers wrote
          }
          st.unsetMin_value(); st.unsetMax_value()
          st.setMin(min); st.setMax(max)
        }
      }
      val lm = new LmFile(out)
      try {
        val fmd = lm.footer.getFileMetaData
        assert(fmd.getCreatedBy == createdBy)
        def sv(c: Int, t: DataType) = SparkValues.forColumn(lm.descriptor(c), t, ColumnReadOptions()).get
        def st(c: Int): Statistics[_] = lm.chunk(0, c).getStatistics
        // Strings: parquet-java keeps only the null count (or drops everything for PARQUET-251 writers).
        val s = sv(0, StringType).statistics(st(0), 40)
        assert(s.forall(x => x.min.isEmpty && x.max.isEmpty), s"$createdBy: string bounds from deprecated fields: $s")
        // Signed INT32: the deprecated fields are right and used.
        assert(sv(1, IntegerType).statistics(st(1), 40).map(x => (x.min, x.max)) == Right((Some(-20), Some(19))), createdBy)
        // Unsigned INT32: dropped by parquet-java.
        assert(sv(2, LongType).statistics(st(2), 40).map(x => (x.min, x.max)) == Right((None, None)), createdBy)
        // FIXED_LEN_BYTE_ARRAY decimal: parquet-java's order for decimals is unknown, so the signed
        // byte-wise bounds (min 255, max 1: wrong) are dropped too.
        val d = sv(3, DecimalType(9, 0)).statistics(st(3), 40)
        assert(d.map(x => (x.min, x.max, x.nullCount)) == Right((None, None, Some(0L))), s"$createdBy: $d")
      } finally lm.close()
    }
  }
}
