package lmspark.scan

import java.io.File
import java.math.BigInteger

import scala.util.{Random, Try}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path => HPath}
import org.apache.parquet.column.ParquetProperties.WriterVersion
import org.apache.parquet.example.data.Group
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.{LogicalTypeAnnotation => LTA, MessageType, Types}
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.parquet.schema.Type.Repetition
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types._
import org.scalactic.source.Position
import org.scalatest.funsuite.AnyFunSuite

import lmspark.plan.LmMetrics
import lmspark.testutil.{LmSparkSession, TestTypes}
import lmspark.testutil.TestLineApis

/**
 * Spark's read-side type rules, differentially against vanilla Spark 4.1.3 (lmspark off, filter
 * pushdown off): every logical type a writer can put in a flat column (unsigned integers,
 * INT96, timestamps in every unit, ENUM / JSON / BSON / UUID, decimals on every physical type),
 * the widenings Spark allows when the read schema is wider than the file's, the datetime rebase
 * modes (writer footer keys and read confs, INT96 separately), binaryAsString and field-id
 * matching. Where Spark reads a pair, lmspark must read it itself (no file handed to Spark's
 * reader) with the same rows; where Spark fails, lmspark must fail too.
 */
class TypeConversionSuite extends AnyFunSuite with LmSparkSession {

  private val rows = 3000

  /** parquet-java file with one column per logical type; dictionary on or off, pages v1 or v2. */
  private def writeLogicalTypes(path: String, dictionary: Boolean, v2: Boolean, seed: Long): Unit = {
    def opt = Types.optional _
    val schema = new MessageType("logical",
      opt(INT32).as(LTA.intType(8, false)).named("u8"),
      opt(INT32).as(LTA.intType(16, false)).named("u16"),
      opt(INT32).as(LTA.intType(32, false)).named("u32"),
      opt(INT64).as(LTA.intType(64, false)).named("u64"),
      opt(INT32).as(LTA.intType(8, true)).named("i8"),
      opt(INT32).as(LTA.intType(16, true)).named("i16"),
      opt(INT32).named("i32"),
      opt(INT64).named("i64"),
      opt(FLOAT).named("f32"),
      opt(INT32).as(LTA.dateType()).named("d"),
      opt(INT64).as(LTA.timestampType(true, TimeUnit.MILLIS)).named("ts_ms"),
      opt(INT64).as(LTA.timestampType(true, TimeUnit.MICROS)).named("ts_us"),
      opt(INT64).as(LTA.timestampType(false, TimeUnit.MILLIS)).named("ntz_ms"),
      opt(INT64).as(LTA.timestampType(false, TimeUnit.MICROS)).named("ntz_us"),
      opt(INT96).named("i96"),
      opt(BINARY).as(LTA.stringType()).named("s"),
      opt(BINARY).as(LTA.enumType()).named("e"),
      opt(BINARY).as(LTA.jsonType()).named("j"),
      opt(BINARY).as(LTA.bsonType()).named("b"),
      opt(BINARY).named("raw"),
      opt(FIXED_LEN_BYTE_ARRAY).length(7).named("fixed"),
      opt(INT32).as(LTA.decimalType(2, 9)).named("dec_i32"),
      opt(INT64).as(LTA.decimalType(4, 18)).named("dec_i64"),
      opt(FIXED_LEN_BYTE_ARRAY).length(5).as(LTA.decimalType(3, 10)).named("dec_f5"),
      opt(FIXED_LEN_BYTE_ARRAY).length(3).as(LTA.decimalType(1, 5)).named("dec_f3"),
      opt(BINARY).as(LTA.decimalType(5, 25)).named("dec_bin"),
      opt(BINARY).as(LTA.decimalType(2, 12)).named("dec_bin12"))
    val r = new Random(seed)
    // A small pool makes dictionary pages; the rest of the values are random.
    def pooled[T](pool: IndexedSeq[T], fresh: => T): T = if (dictionary && r.nextInt(4) != 0) pool(r.nextInt(pool.size)) else fresh
    val ints = IndexedSeq.fill(6)(r.nextInt())
    val longs = IndexedSeq.fill(6)(r.nextLong())
    val conf = new Configuration()
    val w = ExampleParquetWriter.builder(new HPath(path)).withType(schema).withConf(conf)
      .withDictionaryEncoding(dictionary)
      .withWriterVersion(if (v2) WriterVersion.PARQUET_2_0 else WriterVersion.PARQUET_1_0)
      .withCompressionCodec(CompressionCodecName.SNAPPY)
      .withPageSize(2048).withRowGroupSize(64 * 1024L).build()
    val f = new SimpleGroupFactory(schema)
    def bin(a: Array[Byte]) = Binary.fromConstantByteArray(a)
    def fixed(bi: BigInteger, len: Int) = bin(TestTypes.padded(bi, len))
    try for (_ <- 0 until rows) {
      val g: Group = f.newGroup()
      def put(name: String)(v: Group => Unit): Unit = if (r.nextInt(7) != 0) v(g)
      put("u8")(_.add("u8", r.nextInt(256)))
      put("u16")(_.add("u16", r.nextInt(65536)))
      put("u32")(_.add("u32", pooled(ints, r.nextInt())))
      put("u64")(_.add("u64", pooled(longs, r.nextLong())))
      put("i8")(_.add("i8", r.nextInt(256) - 128))
      put("i16")(_.add("i16", r.nextInt(65536) - 32768))
      put("i32")(_.add("i32", pooled(ints, if (r.nextInt(20) == 0) Int.MinValue else r.nextInt())))
      put("i64")(_.add("i64", pooled(longs, r.nextLong())))
      put("f32")(_.add("f32", if (r.nextInt(30) == 0) Float.NaN else r.nextFloat() * 1e6f - 5e5f))
      put("d")(_.add("d", r.nextInt(40000) - 10000))
      put("ts_ms")(_.add("ts_ms", r.nextLong() % 4000000000000L))
      put("ts_us")(_.add("ts_us", r.nextLong() % 4000000000000000L))
      put("ntz_ms")(_.add("ntz_ms", r.nextLong() % 4000000000000L))
      put("ntz_us")(_.add("ntz_us", r.nextLong() % 4000000000000000L))
      put("i96") { g =>
        // nanos of day (little-endian long) + Julian day (little-endian int), days 1900..2100
        val b = java.nio.ByteBuffer.allocate(12).order(java.nio.ByteOrder.LITTLE_ENDIAN)
        b.putLong((r.nextDouble() * 86400e9).toLong).putInt(2415021 + r.nextInt(73000))
        g.add("i96", bin(b.array()))
      }
      put("s")(_.add("s", pooled(IndexedSeq("a", "bb", "ccc", "é漢"), r.alphanumeric.take(r.nextInt(12)).mkString)))
      put("e")(_.add("e", pooled(IndexedSeq("RED", "GREEN"), "C" + r.nextInt(50))))
      put("j")(_.add("j", s"""{"k": ${r.nextInt(100)}}"""))
      put("b")(_.add("b", bin(Array.fill(r.nextInt(9))(r.nextInt(256).toByte))))
      put("raw")(_.add("raw", bin(Array.fill(r.nextInt(9))(r.nextInt(256).toByte))))
      put("fixed")(_.add("fixed", bin(Array.fill(7)(r.nextInt(256).toByte))))
      put("dec_i32")(_.add("dec_i32", r.nextInt(1999999999) - 999999999))
      put("dec_i64")(_.add("dec_i64", r.nextLong() % 999999999999999999L))
      put("dec_f5")(_.add("dec_f5", fixed(new BigInteger(33, r.self).subtract(BigInteger.ONE.shiftLeft(32)), 5)))
      put("dec_f3")(_.add("dec_f3", fixed(BigInteger.valueOf(r.nextInt(199999) - 99999L), 3)))
      put("dec_bin")(_.add("dec_bin", bin(new BigInteger(1 + r.nextInt(82), r.self).toByteArray)))
      put("dec_bin12")(_.add("dec_bin12", bin(BigInteger.valueOf(r.nextLong() % 999999999999L).toByteArray)))
      w.write(g)
    } finally w.close()
  }

  /** Types Spark cannot infer a schema for: TIMESTAMP(NANOS) (unless nanosAsLong) and UUID. */
  private lazy val exoticFile: String = {
    val dir = newDir("exotic")
    new File(dir).mkdirs()
    val schema = new MessageType("exotic",
      Types.optional(INT64).as(LTA.timestampType(true, TimeUnit.NANOS)).named("ts_ns"),
      Types.optional(INT64).as(LTA.timestampType(false, TimeUnit.NANOS)).named("ntz_ns"),
      Types.optional(FIXED_LEN_BYTE_ARRAY).length(16).as(LTA.uuidType()).named("uuid"))
    val w = ExampleParquetWriter.builder(new HPath(s"$dir/part-0.parquet")).withType(schema).build()
    val f = new SimpleGroupFactory(schema)
    val r = new Random(11)
    try for (_ <- 0 until rows) {
      val g = f.newGroup()
      if (r.nextInt(5) != 0) g.add("ts_ns", r.nextLong())
      if (r.nextInt(5) != 0) g.add("ntz_ns", r.nextLong())
      if (r.nextInt(5) != 0) g.add("uuid", Binary.fromConstantByteArray(Array.fill(16)(r.nextInt(256).toByte)))
      w.write(g)
    } finally w.close()
    dir
  }

  private lazy val logicalFiles: Seq[(String, String)] =
    for ((dict, v2) <- Seq((true, false), (false, true), (true, true))) yield {
      val dir = newDir(s"logical-dict$dict-v2$v2")
      new File(dir).mkdirs()
      writeLogicalTypes(new File(dir, "part-0.parquet").getAbsolutePath, dict, v2, seed = if (dict) 7 else 8)
      (s"dictionary=$dict v2=$v2", dir)
    }

  private def fallbackFiles(plan: SparkPlan): Long =
    lmScans(plan).map(_.metrics(LmMetrics.FilesFallback).value).sum

  private def lmFiles(plan: SparkPlan): Long = lmScans(plan).map(_.metrics(LmMetrics.FilesRead).value).sum

  /** Reads Spark 4.1.3's vectorized reader fails on but its row-based (parquet-mr) reader answers. */
  private val beyondSpark = scala.collection.mutable.LinkedHashSet.empty[String]

  /** The reference rows: vanilla Spark's vectorized reader (lmspark off, pushdown off), or, where
    * that fails (Spark bugs such as an NPE on PLAIN BINARY decimals of precision <= 18), Spark's
    * row-based reader, or finally `alternative` (an exact cast of the column read as written). */
  private def expected(what: String, query: => DataFrame, alternative: Option[() => DataFrame]): Try[Seq[String]] =
    Try(normalized(referenceRows(query))).orElse {
      val rowReader = Try(withConf("spark.sql.parquet.enableVectorizedReader" -> "false") {
        normalized(referenceRows(query))
      }).orElse(Try(normalized(referenceRows(alternative.get()))))
      rowReader.foreach(_ => beyondSpark += what)
      rowReader
    }

  /** lmspark reads every file itself and gives the reference rows. On a line whose Spark reads some
    * pairs differently from lmspark's rules (3.5: no widening), lmspark declines those pairs, so
    * there the check is that its outcome is that line's vanilla Spark's (`checkSameOutcome`). */
  private def checkReadByLm(what: String, alternative: Option[() => DataFrame] = None)(query: => DataFrame)(
      implicit pos: Position): Unit = {
    if (!TestLineApis.readRulesAreLmsparks) { checkSameOutcome(what)(query); return }
    val reference = expected(what, query, alternative)
    reference.failed.foreach(e => fail(s"$what: no Spark reader can read this", e))
    val (actual, plan) = withConf("spark.lmspark.enabled" -> "true") {
      val df = query
      (normalized(df.collect()), df.queryExecution.executedPlan)
    }
    assertNoSilentDecline(plan)
    if (actual != reference.get) {
      fail(s"$what: lmspark's rows differ from Spark's; only in lmspark: ${actual.diff(reference.get).take(5)}; " +
        s"only in Spark: ${reference.get.diff(actual).take(5)}\n$plan")
    }
    assert(fallbackFiles(plan) == 0 && lmFiles(plan) > 0,
      s"$what: lmspark handed ${fallbackFiles(plan)} file(s) to Spark and read ${lmFiles(plan)}")
  }

  /** Either both fail, or both succeed with the same rows (lmspark may fall back with a reason). */
  private def checkSameOutcome(what: String)(query: => DataFrame)(implicit pos: Position): Boolean = {
    val reference = Try(referenceRows(query))
    val lm = withConf("spark.lmspark.enabled" -> "true") { Try(query.collect()) }
    (reference, lm) match {
      case (scala.util.Success(a), scala.util.Success(b)) =>
        assert(normalized(b) == normalized(a), s"$what: lmspark's rows differ from Spark's")
        true
      case (scala.util.Failure(_), scala.util.Failure(_)) => false
      case (scala.util.Success(_), scala.util.Failure(e)) => fail(s"$what: lmspark failed where Spark read", e)
      case (scala.util.Failure(e), scala.util.Success(_)) =>
        fail(s"$what: lmspark answered where Spark failed with ${e.getMessage.take(300)}")
    }
  }

  /** If a Spark reader reads it, lmspark reads it itself with the same rows; if none does, lmspark
    * fails too. */
  private def checkLikeSpark(what: String)(query: => DataFrame)(implicit pos: Position): Unit =
    if (!TestLineApis.readRulesAreLmsparks) checkSameOutcome(what)(query)
    else if (expected(what, query, None).isSuccess) checkReadByLm(what)(query)
    else assert(!checkSameOutcome(what)(query))

  test("every logical type, with the schema Spark infers, is read by lmspark itself") {
    for ((label, dir) <- logicalFiles) {
      val cols = spark.read.parquet(dir).columns.toSeq
      checkReadByLm(s"$label all columns")(spark.read.parquet(dir))
      for (c <- cols) checkReadByLm(s"$label column $c")(spark.read.parquet(dir).select(c))
    }
  }

  test("TIMESTAMP(NANOS) and UUID: read as Spark reads them, with and without nanosAsLong") {
    for (nanosAsLong <- Seq("true", "false")) withConf("spark.sql.legacy.parquet.nanosAsLong" -> nanosAsLong) {
      for (schema <- Seq("ts_ns long", "ntz_ns long", "uuid binary", "ts_ns long, uuid binary"))
        checkLikeSpark(s"nanosAsLong=$nanosAsLong $schema")(spark.read.schema(schema).parquet(exoticFile))
      checkLikeSpark(s"nanosAsLong=$nanosAsLong inferred")(spark.read.parquet(exoticFile))
    }
  }

  test("binaryAsString reads unannotated BINARY as strings") {
    withConf("spark.sql.parquet.binaryAsString" -> "true") {
      for ((label, dir) <- logicalFiles) {
        assert(spark.read.parquet(dir).schema("raw").dataType == StringType)
        checkReadByLm(label)(spark.read.parquet(dir).select("raw", "b"))
      }
    }
  }

  /** (column, read type) pairs Spark 4.1's vectorized reader converts. */
  private val widenings: Seq[(String, DataType)] = Seq(
    "i8" -> IntegerType, "i8" -> LongType, "i8" -> DoubleType, "i16" -> IntegerType, "u8" -> IntegerType,
    "i32" -> LongType, "i32" -> DoubleType, "i32" -> ByteType, "i32" -> ShortType,
    "i32" -> DecimalType(10, 0), "i32" -> DecimalType(12, 2), "i32" -> DecimalType(20, 0), "i32" -> DecimalType(38, 10),
    "u16" -> LongType, "u16" -> DoubleType,
    "i64" -> DecimalType(20, 0), "i64" -> DecimalType(24, 4), "i64" -> DecimalType(38, 0),
    "f32" -> DoubleType,
    "d" -> TimestampNTZType,
    "ts_ms" -> TimestampType, "ntz_us" -> TimestampType, "ntz_ms" -> TimestampType,
    "dec_i32" -> DecimalType(9, 2), "dec_i32" -> DecimalType(12, 2), "dec_i32" -> DecimalType(12, 5),
    "dec_i32" -> DecimalType(20, 2), "dec_i32" -> DecimalType(30, 10),
    "dec_i64" -> DecimalType(18, 4), "dec_i64" -> DecimalType(19, 4), "dec_i64" -> DecimalType(22, 6),
    "dec_i64" -> DecimalType(38, 4),
    "dec_f3" -> DecimalType(7, 1), "dec_f3" -> DecimalType(9, 4), "dec_f3" -> DecimalType(15, 1),
    "dec_f3" -> DecimalType(25, 3),
    "dec_f5" -> DecimalType(12, 3), "dec_f5" -> DecimalType(19, 3), "dec_f5" -> DecimalType(14, 7),
    "dec_f5" -> DecimalType(30, 3),
    "dec_bin" -> DecimalType(30, 5), "dec_bin" -> DecimalType(30, 10), "dec_bin" -> DecimalType(38, 18),
    "dec_bin12" -> DecimalType(14, 2), "dec_bin12" -> DecimalType(14, 4), "dec_bin12" -> DecimalType(22, 2),
    "i96" -> TimestampNTZType,
    "s" -> BinaryType, "raw" -> StringType, "fixed" -> BinaryType, "j" -> BinaryType, "e" -> BinaryType)

  /** Pairs Spark refuses (narrowings, scale losses, unrelated types). */
  private val refusals: Seq[(String, DataType)] = Seq(
    "i64" -> IntegerType, "f32" -> LongType, "dec_i64" -> DecimalType(18, 2), "dec_f5" -> DecimalType(9, 3),
    "dec_bin" -> DecimalType(20, 5), "i32" -> DecimalType(9, 0), "s" -> IntegerType, "d" -> TimestampType,
    "ts_us" -> DateType, "i96" -> LongType)

  /** Widenings whose values equal a Spark cast of the column read with its own type. */
  private def castIsExact(c: String, t: DataType): Boolean = t match {
    case ByteType | ShortType => false // Spark truncates on read; an ANSI cast would fail
    case _ => true
  }

  test("widenings Spark allows on read give Spark's values, read by lmspark itself") {
    for ((label, dir) <- logicalFiles; (c, t) <- widenings) {
      val cast = if (castIsExact(c, t)) Some(() => spark.read.parquet(dir).select(col(c).cast(t))) else None
      checkReadByLm(s"$label $c as ${t.catalogString}", cast)(
        spark.read.schema(StructType(Seq(StructField(c, t)))).parquet(dir))
    }
  }

  test("conversions Spark refuses fail with lmspark too") {
    for ((label, dir) <- logicalFiles; (c, t) <- refusals) {
      val read = checkSameOutcome(s"$label $c as ${t.catalogString}")(
        spark.read.schema(StructType(Seq(StructField(c, t)))).parquet(dir))
      assert(!read, s"$label $c as ${t.catalogString}: expected Spark to refuse the conversion")
    }
  }

  /** Dates and timestamps before 1582 written by Spark in LEGACY mode (hybrid calendar). */
  private lazy val ancientFiles: Map[String, String] = {
    val df = spark.range(0, 2000, 1, 1).select(
      col("id"),
      expr("date_add(DATE'1000-01-01', cast(id * 97 as int))").as("d"),
      expr("timestamp_micros(-30000000000000000 + id * 1234567890123)").as("ts"))
    Seq("LEGACY", "CORRECTED").map { mode =>
      val dir = newDir(s"ancient-$mode")
      withConf("spark.sql.parquet.datetimeRebaseModeInWrite" -> mode,
          "spark.sql.parquet.int96RebaseModeInWrite" -> mode) {
        for ((fmt, sub) <- Seq("INT96" -> "int96", "TIMESTAMP_MICROS" -> "micros", "TIMESTAMP_MILLIS" -> "millis"))
          withConf("spark.sql.parquet.outputTimestampType" -> fmt) { df.write.parquet(s"$dir/$sub") }
      }
      mode -> dir
    }.toMap
  }

  test("datetime rebase: files written in LEGACY and CORRECTED mode, read in every mode") {
    for ((writeMode, dir) <- ancientFiles; sub <- Seq("int96", "micros", "millis");
         readMode <- Seq("EXCEPTION", "CORRECTED", "LEGACY")) {
      withConf("spark.sql.parquet.datetimeRebaseModeInRead" -> readMode,
          "spark.sql.parquet.int96RebaseModeInRead" -> readMode) {
        val what = s"written $writeMode/$sub, read $readMode"
        // Spark's footer keys decide for files Spark wrote; the read mode for others.
        checkReadByLm(what)(spark.read.parquet(s"$dir/$sub"))
        checkReadByLm(s"$what, dates as timestamp_ntz")(
          spark.read.schema("id long, d timestamp_ntz").parquet(s"$dir/$sub"))
      }
    }
  }

  test("datetime rebase: parquet-java files without Spark's footer keys follow the read mode") {
    val dir = newDir("ancient-plain")
    new File(dir).mkdirs()
    val schema = new MessageType("t",
      Types.optional(INT32).as(LTA.dateType()).named("d"),
      Types.optional(INT64).as(LTA.timestampType(true, TimeUnit.MICROS)).named("ts"),
      Types.optional(INT64).as(LTA.timestampType(true, TimeUnit.MILLIS)).named("ms"),
      Types.optional(INT96).named("i96"))
    val w = ExampleParquetWriter.builder(new HPath(s"$dir/part-0.parquet")).withType(schema).build()
    val f = new SimpleGroupFactory(schema)
    val r = new Random(3)
    try for (i <- 0 until 1000) {
      val g = f.newGroup()
      // half before the 1582 switch, half after
      val days = if (i % 2 == 0) -200000 + r.nextInt(60000) else r.nextInt(20000)
      g.add("d", days)
      g.add("ts", days * 86400000000L + r.nextInt(86400000))
      g.add("ms", days * 86400000L + r.nextInt(86400000))
      val b = java.nio.ByteBuffer.allocate(12).order(java.nio.ByteOrder.LITTLE_ENDIAN)
      b.putLong(r.nextInt(86400) * 1000000000L).putInt(2440588 + days)
      g.add("i96", Binary.fromConstantByteArray(b.array()))
      w.write(g)
    } finally w.close()
    for (mode <- Seq("EXCEPTION", "CORRECTED", "LEGACY"); c <- Seq("d", "ts", "ms", "i96")) {
      withConf("spark.sql.parquet.datetimeRebaseModeInRead" -> mode,
          "spark.sql.parquet.int96RebaseModeInRead" -> mode) {
        val read = checkSameOutcome(s"$c read $mode")(spark.read.parquet(dir).select(c))
        assert(read == (mode != "EXCEPTION"), s"$c read $mode: expected ${if (read) "an error" else "rows"}")
        if (read) checkReadByLm(s"$c read $mode")(spark.read.parquet(dir).select(c))
      }
    }
  }

  test("field ids: columns match by id, whatever their names, when fieldId.read is enabled") {
    val dir = newDir("field-ids")
    withConf("spark.sql.parquet.fieldId.write.enabled" -> "true") {
      val schema = StructType(Seq(
        StructField("a", LongType, nullable = true, fieldIdMeta(1)),
        StructField("b", StringType, nullable = true, fieldIdMeta(2)),
        StructField("c", DoubleType, nullable = true, fieldIdMeta(3)),
        StructField("d", LongType, nullable = true)))
      val data = spark.range(0, 1000).select(col("id"), col("id").cast("string"), (col("id") / 7.0), col("id") * 3)
      spark.createDataFrame(data.rdd, schema).write.parquet(dir)
    }
    val renamed = StructType(Seq(
      StructField("x", LongType, nullable = true, fieldIdMeta(1)),
      StructField("y", StringType, nullable = true, fieldIdMeta(3 - 1)),
      StructField("c", DoubleType, nullable = true, fieldIdMeta(9)), // no such id: nulls
      StructField("d", LongType, nullable = true))) // no id: by name
    withConf("spark.sql.parquet.fieldId.read.enabled" -> "true") {
      checkReadByLm("by id")(spark.read.schema(renamed).parquet(dir))
      // One file column matched twice (by id and by name): lmspark leaves it to Spark, so the outcome
      // is Spark's (rows on 4.1, an error on 4.3).
      val twice = StructType(renamed.fields :+ StructField("a", LongType, nullable = true))
      checkSameOutcome("matched twice")(spark.read.schema(twice).parquet(dir))
    }
    withConf("spark.sql.parquet.fieldId.read.enabled" -> "false") {
      checkReadByLm("by name")(spark.read.schema(renamed).parquet(dir))
    }
  }

  test("field ids: a read schema with ids over a file without any fails as in Spark, unless ignoreMissing") {
    val dir = newDir("no-field-ids")
    spark.range(0, 100).write.parquet(dir)
    val withIds = StructType(Seq(StructField("id", LongType, nullable = true, fieldIdMeta(1))))
    withConf("spark.sql.parquet.fieldId.read.enabled" -> "true") {
      assert(!checkSameOutcome("no ids in file")(spark.read.schema(withIds).parquet(dir)))
      withConf("spark.sql.parquet.fieldId.read.ignoreMissing" -> "true") {
        checkReadByLm("ignoreMissing")(spark.read.schema(withIds).parquet(dir))
      }
    }
  }

  test("INT96 written by Spark, with and without dictionary, as timestamp and timestamp_ntz") {
    val dir = newDir("int96-spark")
    withConf("spark.sql.parquet.outputTimestampType" -> "INT96") {
      spark.range(0, 5000, 1, 2).select(col("id"),
        expr("timestamp_micros(id * 987654321987 - 1000000000000000)").as("t"),
        expr("timestamp_micros((id % 5) * 86400000000)").as("low")).write
        .option("parquet.enable.dictionary", "true").parquet(s"$dir/dict")
      spark.range(0, 5000, 1, 2).select(col("id"),
        expr("timestamp_micros(id * 987654321987 - 1000000000000000)").as("t")).write
        .option("parquet.enable.dictionary", "false").parquet(s"$dir/plain")
    }
    for (sub <- Seq("dict", "plain")) {
      checkReadByLm(sub)(spark.read.parquet(s"$dir/$sub"))
      checkReadByLm(s"$sub as ntz")(spark.read.schema("id long, t timestamp_ntz").parquet(s"$dir/$sub"))
      // parquet-mr wrote it, so int96TimestampConversion does not shift it
      withConf("spark.sql.parquet.int96TimestampConversion" -> "true",
          "spark.sql.session.timeZone" -> "America/Los_Angeles") {
        checkReadByLm(s"$sub with int96TimestampConversion")(spark.read.parquet(s"$dir/$sub"))
      }
    }
  }

  override protected def afterAll(): Unit = {
    // scalastyle:off println
    println(s"TypeConversionSuite: read where Spark's vectorized reader fails: ${beyondSpark.mkString("; ")}")
    super.afterAll()
  }

  private def fieldIdMeta(id: Int): Metadata =
    new MetadataBuilder().putLong("parquet.field.id", id.toLong).build()
}
