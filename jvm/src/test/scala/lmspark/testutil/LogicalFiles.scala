package lmspark.testutil

import java.math.BigInteger
import java.nio.file.{Files, Path}

import lmspark.testutil.ScalaCompat.ArraySeq
import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path => HPath}
import org.apache.parquet.column.ParquetProperties.WriterVersion
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.{LogicalTypeAnnotation => LTA, MessageType, PrimitiveType, Types}
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import lmspark.column.{ColumnReadOptions, RebaseCheck}

/** A column of a [[LogicalFiles]] file read as `sparkType` with `options`. */
final case class ReadPair(column: String, sparkType: DataType, options: ColumnReadOptions = ColumnReadOptions()) {
  override def toString: String = s"$column as ${sparkType.catalogString}" +
    (if (options == ColumnReadOptions()) "" else s" ($options)")
}

/** parquet-java files (written with its example writer, so with its own statistics, page indexes
  * and, on request, bloom filters) holding one optional column per logical type a flat column can
  * have, several row groups of small pages, seeded values over each type's whole range (unsigned
  * integers with the top bit set, dates and timestamps before 1582, NaN and signed zeros, long
  * decimals); and the (column, Spark type, options) pairs lmspark reads them as: the types Spark
  * infers, its read-side widenings, LEGACY datetime rebasing and INT96 conversions. Also helpers
  * between the test value forms ([[TestTypes.fromVector]]) and Catalyst values. */
object LogicalFiles {

  val schema: MessageType = {
    def opt(t: PrimitiveType.PrimitiveTypeName) = Types.optional(t)
    new MessageType("logical",
      opt(BOOLEAN).named("bool"),
      opt(INT32).as(LTA.intType(8, false)).named("u8"),
      opt(INT32).as(LTA.intType(16, false)).named("u16"),
      opt(INT32).as(LTA.intType(32, false)).named("u32"),
      opt(INT64).as(LTA.intType(64, false)).named("u64"),
      opt(INT32).as(LTA.intType(8, true)).named("i8"),
      opt(INT32).as(LTA.intType(16, true)).named("i16"),
      opt(INT32).named("i32"),
      opt(INT64).named("i64"),
      opt(FLOAT).named("f32"),
      opt(DOUBLE).named("f64"),
      opt(INT32).as(LTA.dateType()).named("d"),
      opt(INT64).as(LTA.timestampType(true, TimeUnit.MILLIS)).named("ts_ms"),
      opt(INT64).as(LTA.timestampType(true, TimeUnit.MICROS)).named("ts_us"),
      opt(INT64).as(LTA.timestampType(false, TimeUnit.MILLIS)).named("ntz_ms"),
      opt(INT64).as(LTA.timestampType(false, TimeUnit.MICROS)).named("ntz_us"),
      opt(INT96).named("i96"),
      opt(BINARY).as(LTA.stringType()).named("s"),
      opt(BINARY).as(LTA.enumType()).named("e"),
      opt(BINARY).as(LTA.jsonType()).named("j"),
      opt(BINARY).named("raw"),
      opt(FIXED_LEN_BYTE_ARRAY).length(7).named("fixed"),
      opt(INT32).as(LTA.decimalType(2, 9)).named("dec_i32"),
      opt(INT64).as(LTA.decimalType(4, 18)).named("dec_i64"),
      opt(FIXED_LEN_BYTE_ARRAY).length(5).as(LTA.decimalType(3, 10)).named("dec_f5"),
      opt(FIXED_LEN_BYTE_ARRAY).length(3).as(LTA.decimalType(1, 5)).named("dec_f3"),
      opt(FIXED_LEN_BYTE_ARRAY).length(16).as(LTA.decimalType(6, 38)).named("dec_f16"),
      opt(BINARY).as(LTA.decimalType(5, 25)).named("dec_bin"),
      opt(BINARY).as(LTA.decimalType(2, 12)).named("dec_bin12"))
  }

  private val legacyLa = ColumnReadOptions(rebaseCheck = RebaseCheck.Legacy("America/Los_Angeles"))
  private val legacyUtc = ColumnReadOptions(rebaseCheck = RebaseCheck.Legacy("UTC"))

  /** Every pair: the Spark type Spark infers for each column, the widenings Spark allows (as
    * TypeConversionSuite lists them), LEGACY rebasing, INT96 with rebasing and a time zone shift. */
  val pairs: Seq[ReadPair] = Seq(
    ReadPair("bool", BooleanType), ReadPair("u8", ShortType), ReadPair("u16", IntegerType), ReadPair("u32", LongType),
    ReadPair("u64", DecimalType(20, 0)), ReadPair("i8", ByteType), ReadPair("i16", ShortType),
    ReadPair("i32", IntegerType), ReadPair("i64", LongType), ReadPair("f32", FloatType), ReadPair("f64", DoubleType),
    ReadPair("d", DateType), ReadPair("ts_ms", TimestampType), ReadPair("ts_us", TimestampType),
    ReadPair("ntz_ms", TimestampNTZType), ReadPair("ntz_us", TimestampNTZType), ReadPair("i96", TimestampType),
    ReadPair("s", StringType), ReadPair("e", StringType), ReadPair("j", StringType), ReadPair("raw", BinaryType),
    ReadPair("fixed", BinaryType), ReadPair("dec_i32", DecimalType(9, 2)), ReadPair("dec_i64", DecimalType(18, 4)),
    ReadPair("dec_f5", DecimalType(10, 3)), ReadPair("dec_f3", DecimalType(5, 1)), ReadPair("dec_f16", DecimalType(38, 6)),
    ReadPair("dec_bin", DecimalType(25, 5)), ReadPair("dec_bin12", DecimalType(12, 2)),
    // widenings
    ReadPair("i8", IntegerType), ReadPair("i8", LongType), ReadPair("i8", DoubleType), ReadPair("i16", IntegerType),
    ReadPair("u8", IntegerType), ReadPair("i32", LongType), ReadPair("i32", DoubleType),
    ReadPair("i32", DecimalType(10, 0)), ReadPair("i32", DecimalType(12, 2)), ReadPair("i32", DecimalType(20, 0)),
    ReadPair("i32", DecimalType(38, 10)), ReadPair("u16", LongType), ReadPair("u16", DoubleType),
    ReadPair("i64", DecimalType(20, 0)), ReadPair("i64", DecimalType(24, 4)), ReadPair("i64", DecimalType(38, 0)),
    ReadPair("f32", DoubleType), ReadPair("d", TimestampNTZType), ReadPair("ntz_us", TimestampType),
    ReadPair("ntz_ms", TimestampType),
    ReadPair("dec_i32", DecimalType(12, 2)), ReadPair("dec_i32", DecimalType(12, 5)), ReadPair("dec_i32", DecimalType(20, 2)),
    ReadPair("dec_i32", DecimalType(30, 10)), ReadPair("dec_i64", DecimalType(19, 4)), ReadPair("dec_i64", DecimalType(22, 6)),
    ReadPair("dec_i64", DecimalType(38, 4)), ReadPair("dec_f3", DecimalType(7, 1)), ReadPair("dec_f3", DecimalType(9, 4)),
    ReadPair("dec_f3", DecimalType(15, 1)), ReadPair("dec_f3", DecimalType(25, 3)), ReadPair("dec_f5", DecimalType(12, 3)),
    ReadPair("dec_f5", DecimalType(19, 3)), ReadPair("dec_f5", DecimalType(14, 7)), ReadPair("dec_f5", DecimalType(30, 3)),
    ReadPair("dec_bin", DecimalType(30, 5)), ReadPair("dec_bin", DecimalType(30, 10)), ReadPair("dec_bin", DecimalType(38, 18)),
    ReadPair("dec_bin12", DecimalType(14, 2)), ReadPair("dec_bin12", DecimalType(14, 4)),
    ReadPair("dec_bin12", DecimalType(22, 2)), ReadPair("i96", TimestampNTZType), ReadPair("s", BinaryType),
    ReadPair("raw", StringType), ReadPair("j", BinaryType), ReadPair("e", BinaryType),
    // LEGACY rebasing (hybrid-calendar values of ancient dates and timestamps)
    ReadPair("d", DateType, legacyLa), ReadPair("d", TimestampNTZType, legacyLa), ReadPair("ts_ms", TimestampType, legacyLa),
    ReadPair("ts_us", TimestampType, legacyLa), ReadPair("ts_us", TimestampType, legacyUtc),
    ReadPair("i96", TimestampType, ColumnReadOptions(int96Rebase = RebaseCheck.Legacy("America/Los_Angeles"))),
    ReadPair("i96", TimestampType, ColumnReadOptions(int96ConvertTz = Some(java.time.ZoneId.of("Asia/Kolkata")))))

  private def bin(a: Array[Byte]): Binary = Binary.fromConstantByteArray(a)

  /** Writes the file: `rows` rows, row groups of about `rowGroupBytes`, pages of at most 97 rows;
    * dictionary or not; data pages v1 or v2; bloom filters on every column they apply to when
    * asked. Low-cardinality stretches give dictionary pages, other stretches random values. */
  def write(path: Path, seed: Long, dictionary: Boolean, v2: Boolean, bloom: Boolean = false, rows: Int = 4000,
      rowGroupBytes: Long = 24 * 1024L): Unit = {
    Files.deleteIfExists(path)
    val r = new Random(seed)
    val b = ExampleParquetWriter.builder(new HPath(path.toString)).withType(schema).withConf(new Configuration())
      .withDictionaryEncoding(dictionary)
      .withWriterVersion(if (v2) WriterVersion.PARQUET_2_0 else WriterVersion.PARQUET_1_0)
      .withCompressionCodec(CompressionCodecName.SNAPPY)
      .withPageSize(1024).withPageRowCountLimit(97).withRowGroupSize(rowGroupBytes)
      .withDictionaryPageSize(2048)
    if (bloom) for (c <- schema.getColumns.toArray.map(_.asInstanceOf[org.apache.parquet.column.ColumnDescriptor])
      if !Set("bool", "i96").contains(c.getPath.head)) b.withBloomFilterEnabled(c.getPath.head, true)
    val w = b.build()
    val f = new SimpleGroupFactory(schema)
    val pools = collection.mutable.Map.empty[String, IndexedSeq[Any]]
    def pooled[T](name: String, fresh: => T): T = {
      val pool = pools.getOrElseUpdate(name, IndexedSeq.fill(5)(fresh))
      if (r.nextInt(4) != 0) pool(r.nextInt(pool.size)).asInstanceOf[T] else fresh
    }
    def dec(bits: Int): BigInteger = { val x = new BigInteger(bits, r.self); if (r.nextBoolean()) x.negate() else x }
    val ancientDay = -200000 // about 1422
    try for (row <- 0 until rows) {
      // Stretches of 300 rows alternate between few distinct values and fresh ones.
      val low = (row / 300) % 2 == 0
      def v[T](name: String, fresh: => T): T = if (low) pooled(name, fresh) else fresh
      val g = f.newGroup()
      def put(name: String)(add: => Unit): Unit = if (r.nextInt(6) != 0) add
      put("bool")(g.add("bool", r.nextBoolean()))
      put("u8")(g.add("u8", v("u8", r.nextInt(256))))
      put("u16")(g.add("u16", v("u16", r.nextInt(65536))))
      put("u32")(g.add("u32", v("u32", r.nextInt())))
      put("u64")(g.add("u64", v("u64", r.nextLong())))
      put("i8")(g.add("i8", v("i8", r.nextInt(256) - 128)))
      put("i16")(g.add("i16", v("i16", r.nextInt(65536) - 32768)))
      put("i32")(g.add("i32", v("i32", if (r.nextInt(20) == 0) Int.MinValue else r.nextInt())))
      put("i64")(g.add("i64", v("i64", r.nextLong())))
      put("f32")(g.add("f32", v("f32", r.nextInt(25) match {
        case 0 => Float.NaN
        case 1 => -0.0f
        case 2 => 0.0f
        case 3 => Float.NegativeInfinity
        case _ => r.nextFloat() * 2e6f - 1e6f
      })))
      put("f64")(g.add("f64", v("f64", r.nextInt(25) match {
        case 0 => Double.NaN
        case 1 => -0.0
        case 2 => 0.0
        case 3 => Double.PositiveInfinity
        case _ => r.nextGaussian() * 1e9
      })))
      val days = v("d", if (r.nextInt(3) == 0) ancientDay + r.nextInt(100000) else r.nextInt(40000) - 10000)
      put("d")(g.add("d", days))
      put("ts_ms")(g.add("ts_ms", v("ts_ms", days * 86400000L + r.nextInt(86400000))))
      put("ts_us")(g.add("ts_us", v("ts_us", days * 86400000000L + r.nextLong() % 86400000000L)))
      put("ntz_ms")(g.add("ntz_ms", v("ntz_ms", r.nextLong() % 4000000000000L)))
      put("ntz_us")(g.add("ntz_us", v("ntz_us", r.nextLong() % 4000000000000000L)))
      put("i96") {
        val bb = java.nio.ByteBuffer.allocate(12).order(java.nio.ByteOrder.LITTLE_ENDIAN)
        bb.putLong((r.nextDouble() * 86400e9).toLong).putInt(2440588 + days)
        g.add("i96", bin(bb.array()))
      }
      put("s")(g.add("s", v("s", Seq("", "a", "é", "漢字", "zz", "\u0000", "😀")(r.nextInt(7)) + r.alphanumeric.take(r.nextInt(6)).mkString)))
      put("e")(g.add("e", v("e", "E" + r.nextInt(40))))
      put("j")(g.add("j", s"""{"k": ${r.nextInt(100)}}"""))
      put("raw")(g.add("raw", bin(v("raw", Array.fill(r.nextInt(9))(r.nextInt(256).toByte)))))
      put("fixed")(g.add("fixed", bin(v("fixed", Array.fill(7)(r.nextInt(256).toByte)))))
      put("dec_i32")(g.add("dec_i32", v("dec_i32", r.nextInt(1999999999) - 999999999)))
      put("dec_i64")(g.add("dec_i64", v("dec_i64", r.nextLong() % 999999999999999999L)))
      put("dec_f5")(g.add("dec_f5", bin(v("dec_f5", TestTypes.padded(dec(33), 5)))))
      put("dec_f3")(g.add("dec_f3", bin(v("dec_f3", TestTypes.padded(BigInteger.valueOf(r.nextInt(199999) - 99999L), 3)))))
      put("dec_f16")(g.add("dec_f16", bin(v("dec_f16", TestTypes.padded(dec(1 + r.nextInt(120)), 16)))))
      put("dec_bin")(g.add("dec_bin", bin(v("dec_bin", dec(1 + r.nextInt(82)).toByteArray))))
      put("dec_bin12")(g.add("dec_bin12", bin(v("dec_bin12", BigInteger.valueOf(r.nextLong() % 999999999999L).toByteArray))))
      w.write(g)
    } finally w.close()
  }

  /** A test-form value ([[TestTypes.fromVector]]) as a Catalyst value of `t`. */
  def toCatalyst(t: DataType, v: Any): Any = (t, v) match {
    case (_, null) => null
    case (_: StringType, b: ArraySeq[_]) => UTF8String.fromBytes(b.asInstanceOf[ArraySeq[Byte]].toArray)
    case (BinaryType, b: ArraySeq[_]) => b.asInstanceOf[ArraySeq[Byte]].toArray
    case (d: DecimalType, bd: java.math.BigDecimal) => Decimal(bd, d.precision, d.scale)
    case (_, x) => x
  }

  /** A Catalyst value in a form with structural equality (bytes as ArraySeq, decimals as
    * java.math.BigDecimal at their scale, floats by their bits: NaN equals NaN and -0.0 differs
    * from 0.0). */
  def comparable(v: Any): Any = v match {
    case s: UTF8String => TestTypes.bytes(s.getBytes)
    case b: Array[Byte] => TestTypes.bytes(b)
    case d: Decimal => d.toJavaBigDecimal.setScale(d.scale)
    case f: Float => ("float", java.lang.Float.floatToIntBits(f))
    case d: Double => ("double", java.lang.Double.doubleToLongBits(d))
    case other => other
  }

  def isNaN(v: Any): Boolean = v match {
    case f: Float => f.isNaN
    case d: Double => d.isNaN
    case _ => false
  }
}
