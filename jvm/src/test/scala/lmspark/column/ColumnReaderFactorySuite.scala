package lmspark.column

import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.column.values.factory.DefaultV2ValuesWriterFactory
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, ColumnPath, CompressionCodecName}
import org.apache.parquet.schema.{LogicalTypeAnnotation, MessageType, Type, Types}
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.SparkThrowable
import org.apache.spark.sql.execution.datasources.DataSourceUtils
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil._

/** Type dispatch: what is supported, what is refused before reading and why, and the rebase check. */
class ColumnReaderFactorySuite extends AnyFunSuite {

  private def leaf(t: PrimitiveTypeName, ann: LogicalTypeAnnotation = null, length: Int = 0,
      repetition: Type.Repetition = Type.Repetition.OPTIONAL): ColumnDescriptor = {
    val b = Types.primitive(t, repetition)
    if (length > 0) b.length(length)
    if (ann != null) b.as(ann)
    new MessageType("m", b.named("c")).getColumns.get(0)
  }

  test("every matrix pairing is supported") {
    for (s <- TestTypes.all; n <- Nulls.all) {
      val d = new MessageType("m", TestFileWriter.primitiveType(s, n.repetition, "c")).getColumns.get(0)
      assert(ColumnReaderFactory.unsupportedReason(d, s.sparkType).isEmpty, s"${s.name}")
    }
  }

  test("unsupported pairings name both types") {
    val cases = Seq(
      leaf(PrimitiveTypeName.INT96) -> LongType,
      leaf(PrimitiveTypeName.INT32) -> StringType,
      leaf(PrimitiveTypeName.INT64) -> IntegerType,
      leaf(PrimitiveTypeName.INT64, LogicalTypeAnnotation.intType(64, false)) -> DecimalType(20, 1),
      leaf(PrimitiveTypeName.INT64, LogicalTypeAnnotation.timestampType(true, TimeUnit.NANOS)) -> TimestampType,
      leaf(PrimitiveTypeName.INT64, LogicalTypeAnnotation.timestampType(true, TimeUnit.MICROS)) -> TimestampNTZType,
      leaf(PrimitiveTypeName.INT64, LogicalTypeAnnotation.decimalType(2, 12)) -> DecimalType(12, 3),
      leaf(PrimitiveTypeName.INT32) -> DecimalType(9, 0),
      leaf(PrimitiveTypeName.FLOAT) -> LongType,
      leaf(PrimitiveTypeName.DOUBLE) -> FloatType,
      leaf(PrimitiveTypeName.BINARY, LogicalTypeAnnotation.stringType()) -> IntegerType)
    for ((d, t) <- cases) {
      val reason = ColumnReaderFactory.unsupportedReason(d, t)
      assert(reason.isDefined, s"$d as $t")
      assert(reason.get.contains(d.getPrimitiveType.getPrimitiveTypeName.name) && reason.get.contains(t.toString),
        reason.get)
    }
    assert(ColumnReaderFactory.unsupportedReason(leaf(PrimitiveTypeName.INT96), LongType).get ==
      "INT96 as LongType is not supported")
  }

  test("unknown or unsupported logical types are refused with the type named, whatever the Spark type") {
    val cases = Seq(
      leaf(PrimitiveTypeName.INT32, LogicalTypeAnnotation.timeType(true, TimeUnit.MILLIS)) -> IntegerType,
      leaf(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, LogicalTypeAnnotation.IntervalLogicalTypeAnnotation.getInstance(),
        length = 12) -> BinaryType) ++
      TestLineApis.float16.map(f16 => leaf(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, f16, length = 2) -> BinaryType)
    for ((d, t) <- cases) {
      val reason = ColumnReaderFactory.unsupportedReason(d, t)
      assert(reason.exists(_.contains(d.getPrimitiveType.getLogicalTypeAnnotation.toString)), s"$d as $t: $reason")
    }
  }

  test("Spark's read-side conversions are accepted (values are checked against Spark in TypeConversionSuite)") {
    val cases = Seq(
      leaf(PrimitiveTypeName.INT96) -> TimestampType,
      leaf(PrimitiveTypeName.INT96) -> TimestampNTZType,
      leaf(PrimitiveTypeName.INT32) -> LongType,
      leaf(PrimitiveTypeName.INT32) -> DoubleType,
      leaf(PrimitiveTypeName.INT32) -> DecimalType(10, 0),
      leaf(PrimitiveTypeName.INT32, LogicalTypeAnnotation.intType(32, false)) -> LongType,
      leaf(PrimitiveTypeName.INT64, LogicalTypeAnnotation.intType(64, false)) -> DecimalType(20, 0),
      leaf(PrimitiveTypeName.INT32, LogicalTypeAnnotation.dateType()) -> TimestampNTZType,
      leaf(PrimitiveTypeName.FLOAT) -> DoubleType,
      leaf(PrimitiveTypeName.INT64, LogicalTypeAnnotation.decimalType(2, 12)) -> DecimalType(14, 4),
      leaf(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, LogicalTypeAnnotation.uuidType(), length = 16) -> BinaryType,
      leaf(PrimitiveTypeName.BINARY, LogicalTypeAnnotation.jsonType()) -> StringType,
      leaf(PrimitiveTypeName.BINARY, LogicalTypeAnnotation.bsonType()) -> BinaryType) ++
      // UNKNOWN (always null) by its physical type, as Spark's vectorized reader reads it.
      UnknownLogicalType.annotation.toSeq.flatMap(u => Seq(
        leaf(PrimitiveTypeName.BINARY, u) -> BinaryType, leaf(PrimitiveTypeName.INT32, u) -> IntegerType))
    for ((d, t) <- cases) assert(ColumnReaderFactory.unsupportedReason(d, t).isEmpty, s"$d as $t")
  }

  test("repeated and nested leaves pair with Spark types as flat ones do (the reader kind follows their levels)") {
    val repeated = leaf(PrimitiveTypeName.INT32, repetition = Type.Repetition.REPEATED)
    assert(ColumnReaderFactory.unsupportedReason(repeated, IntegerType).isEmpty)
    assert(ColumnReaderFactory.unsupportedReason(repeated, StringType).isDefined)
    val nested = new MessageType("m",
      Types.optionalGroup().addField(Types.optional(PrimitiveTypeName.INT32).named("x")).named("g")).getColumns.get(0)
    assert(ColumnReaderFactory.unsupportedReason(nested, IntegerType).isEmpty)
  }

  test("chunk checks: codec and encodings") {
    val d = leaf(PrimitiveTypeName.INT64)
    def chunk(codec: CompressionCodecName, encodings: Encoding*): ColumnChunkMetaData =
      ColumnChunkMetaData.get(ColumnPath.get("c"), d.getPrimitiveType, codec, null,
        new java.util.HashSet[Encoding](java.util.Arrays.asList(encodings: _*)), null, 4L, 0L, 10L, 100L, 100L)
    assert(ColumnReaderFactory.unsupportedReason(d, LongType,
      chunk(CompressionCodecName.SNAPPY, Encoding.PLAIN, Encoding.RLE, Encoding.BIT_PACKED)).isEmpty)
    for (codec <- Seq(CompressionCodecName.BROTLI, CompressionCodecName.LZ4)) // read since the codecs work
      assert(ColumnReaderFactory.unsupportedReason(d, LongType, chunk(codec, Encoding.PLAIN)).isEmpty, codec)
    assert(ColumnReaderFactory.unsupportedReason(d, LongType,
      chunk(CompressionCodecName.LZO, Encoding.PLAIN)).get.contains("LZO"))
    assert(ColumnReaderFactory.unsupportedReason(d, LongType,
      chunk(CompressionCodecName.UNCOMPRESSED, Encoding.BYTE_STREAM_SPLIT, Encoding.DELTA_BINARY_PACKED)).isEmpty)
    assert(ColumnReaderFactory.unsupportedReason(d, LongType,
      chunk(CompressionCodecName.UNCOMPRESSED, Encoding.DELTA_LENGTH_BYTE_ARRAY)).get
      .contains("encoding DELTA_LENGTH_BYTE_ARRAY is not supported for INT64"))
  }

  test("a v2 file with DELTA encodings (parquet-java's v2 writer) is accepted") {
    val specs = TestTypes.all.filter(s => Set("int32", "int64", "string").contains(s.name))
    val cols = specs.toIndexedSeq.map(s =>
      TestColumn(s, Nulls.SomeNulls, TestFileWriter.generate(s, Nulls.SomeNulls, EncMode.Plain, 5L)))
    val path = TestFiles.dir.resolve("delta.parquet")
    TestFileWriter.write(path, FileConfig(CompressionCodecName.SNAPPY, v2 = true, EncMode.Plain), cols,
      valuesWriterFactory = Some(new DefaultV2ValuesWriterFactory))
    val lm = new LmFile(path)
    try {
      val reasons = cols.indices.map(i => ColumnReaderFactory.unsupportedReason(lm.descriptor(i), specs(i).sparkType,
        lm.chunk(0, i)))
      assert(reasons.forall(_.isEmpty), reasons)
      assert(lm.chunk(0, 0).getEncodings.contains(Encoding.DELTA_BINARY_PACKED))
      assert(lm.chunk(0, 1).getEncodings.contains(Encoding.DELTA_BINARY_PACKED))
      assert(lm.chunk(0, 2).getEncodings.contains(Encoding.DELTA_BYTE_ARRAY))
    } finally lm.close()
  }

  test("FailOnAncient throws Spark's rebase exception for dates and LTZ timestamps only") {
    def spec(name: String, t: PrimitiveTypeName, ann: LogicalTypeAnnotation, st: DataType, v: Any) =
      TypeSpec(name, t, 0, ann, st, _ => v,
        if (name.startsWith("millis")) (x: Any) => x.asInstanceOf[Long] * 1000L else identity)
    val ancientDay = SparkRebase.lastSwitchJulianDay - 1
    val ancientMicros = SparkRebase.lastSwitchJulianTs - 1
    val specs = Seq(
      spec("date_old", PrimitiveTypeName.INT32, LogicalTypeAnnotation.dateType(), DateType, ancientDay),
      spec("micros_old", PrimitiveTypeName.INT64, LogicalTypeAnnotation.timestampType(true, TimeUnit.MICROS),
        TimestampType, ancientMicros),
      spec("millis_old", PrimitiveTypeName.INT64, LogicalTypeAnnotation.timestampType(true, TimeUnit.MILLIS),
        TimestampType, Math.floorDiv(ancientMicros, 1000L)),
      spec("ntz_old", PrimitiveTypeName.INT64, LogicalTypeAnnotation.timestampType(false, TimeUnit.MICROS),
        TimestampNTZType, ancientMicros),
      spec("date_new", PrimitiveTypeName.INT32, LogicalTypeAnnotation.dateType(), DateType,
        SparkRebase.lastSwitchJulianDay),
      spec("millis_new", PrimitiveTypeName.INT64, LogicalTypeAnnotation.timestampType(true, TimeUnit.MILLIS),
        TimestampType, Math.floorDiv(SparkRebase.lastSwitchJulianTs, 1000L) + 1))
    val cols = specs.toIndexedSeq.map(s => TestColumn(s, Nulls.SomeNulls, TestFileWriter.generate(s, Nulls.SomeNulls,
      EncMode.Dict, 9L)))
    val path = TestFiles.dir.resolve("ancient.parquet")
    TestFileWriter.write(path, FileConfig(CompressionCodecName.UNCOMPRESSED, v2 = false, EncMode.Dict), cols)
    val expected = DataSourceUtils.newRebaseExceptionInRead("Parquet")
    val lm = new LmFile(path)
    try {
      for ((s, i) <- specs.zipWithIndex) {
        val rows = lm.rowCount(0).toInt
        val plain = LmReading.readAll(lm.reader(0, i, s.sparkType), s.sparkType, rows, 500)
        assert(plain.filter(_ != null).forall(_ == s.toSpark(s.gen(null))), s.name)
        val strict = lm.reader(0, i, s.sparkType, ColumnReadOptions(RebaseCheck.FailOnAncient))
        if (s.name.endsWith("_old") && s.sparkType != TimestampNTZType) {
          // SparkUpgradeException is private[spark] for Scala callers: compare classes and conditions.
          val e = intercept[RuntimeException](LmReading.readAll(strict, s.sparkType, rows, 500))
          assert(e.getClass == expected.getClass && e.getClass.getName == "org.apache.spark.SparkUpgradeException")
          assert(e.getMessage == expected.getMessage)
          assert(TestLineApis.condition(e.asInstanceOf[SparkThrowable]) == TestLineApis.condition(expected.asInstanceOf[SparkThrowable]))
        } else {
          assert(LmReading.readAll(strict, s.sparkType, rows, 500) == plain, s.name)
        }
      }
    } finally lm.close()
  }

  test("reading past the row count is an error, read(0) and skip(0) are no-ops") {
    val f = TestFiles.matrixFile(TestFiles.configs.head)
    val lm = new LmFile(f.path)
    try {
      val r = lm.reader(0, 0, f.columns(0).spec.sparkType)
      val v = new OnHeapColumnVector(10, f.columns(0).spec.sparkType)
      r.read(0, v); r.skip(0)
      assert(r.pagesRead == 0)
      r.skip(lm.rowCount(0) - 5)
      val e = intercept[ParquetDecodeException](r.read(10, v))
      assert(e.getMessage.contains("only 5 of"), e.getMessage)
      r.read(5, v)
      v.close(); r.close()
    } finally lm.close()
  }
}
