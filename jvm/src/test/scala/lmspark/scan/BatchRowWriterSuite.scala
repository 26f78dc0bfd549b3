package lmspark.scan

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.vectorized.{ConstantColumnVector, OffHeapColumnVector, OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.SparkDictionary
import lmspark.shim.SparkInternals
import lmspark.testutil.TestLineApis

/** [[BatchRowWriter]] against Spark's own row conversion (`UnsafeProjection` over the batch's
  * generic rows, which the writer must not use itself) as the oracle: for random batches of every
  * type the scan can produce, with nulls, in plain, dictionary-encoded, constant and all-null
  * vectors, on and off heap, the rows are byte-for-byte Spark's. */
class BatchRowWriterSuite extends AnyFunSuite {

  private val types: Seq[DataType] = Seq(
    BooleanType, ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType,
    DecimalType(7, 2), DecimalType(9, 0), DecimalType(15, 3), DecimalType(18, 18), DecimalType(19, 2),
    DecimalType(28, 5), DecimalType(38, 0), StringType, BinaryType,
    DateType, TimestampType, TimestampNTZType, YearMonthIntervalType(), DayTimeIntervalType()) ++ lmspark.testutil.WriterLayouts.nullTypeVectors ++
    TestLineApis.collatedString

  /** A random Catalyst value of `t` (never null). */
  private def value(t: DataType, rnd: Random): Any = t match {
    case BooleanType => rnd.nextBoolean()
    case ByteType => rnd.nextInt().toByte
    case ShortType => rnd.nextInt().toShort
    case IntegerType | DateType | _: YearMonthIntervalType =>
      if (rnd.nextInt(8) == 0) Seq(Int.MinValue, Int.MaxValue, 0, -1)(rnd.nextInt(4)) else rnd.nextInt(100000) - 50000
    case LongType | TimestampType | TimestampNTZType | _: DayTimeIntervalType =>
      if (rnd.nextInt(8) == 0) Seq(Long.MinValue, Long.MaxValue, 0L)(rnd.nextInt(3)) else rnd.nextLong()
    case FloatType => Seq(Float.NaN, -0.0f, Float.NegativeInfinity, rnd.nextFloat() * 1e6f)(rnd.nextInt(4))
    case DoubleType => Seq(Double.NaN, -0.0, Double.MaxValue, rnd.nextGaussian() * 1e12)(rnd.nextInt(4))
    case d: DecimalType =>
      val digits = 1 + rnd.nextInt(d.precision)
      val unscaled = BigInt(4 * digits, rnd) mod BigInt(10).pow(digits)
      val signed = if (rnd.nextBoolean()) -unscaled else unscaled
      Decimal(new java.math.BigDecimal(signed.bigInteger, d.scale), d.precision, d.scale)
    case _: StringType =>
      val n = Seq(0, 1, 7, 8, 9, 40, 300)(rnd.nextInt(7))
      UTF8String.fromString((0 until n).map(_ => "aZ\u00e9\u4e2d\ud83d\ude00"(rnd.nextInt(5))).mkString)
    case BinaryType =>
      val n = Seq(0, 1, 8, 15, 100)(rnd.nextInt(5)); val b = new Array[Byte](n); rnd.nextBytes(b); b
    case other => throw new IllegalArgumentException(other.toString)
  }

  private def put(v: WritableColumnVector, i: Int, t: DataType, x: Any): Unit = (t, x) match {
    case (BooleanType, b: Boolean) => v.putBoolean(i, b)
    case (ByteType, b: Byte) => v.putByte(i, b)
    case (ShortType, s: Short) => v.putShort(i, s)
    case (_, n: Int) => v.putInt(i, n)
    case (_, n: Long) => v.putLong(i, n)
    case (_, f: Float) => v.putFloat(i, f)
    case (_, d: Double) => v.putDouble(i, d)
    case (d: DecimalType, x: Decimal) => v.putDecimal(i, x, d.precision)
    case (_, s: UTF8String) => v.putByteArray(i, s.getBytes)
    case (_, b: Array[Byte]) => v.putByteArray(i, b)
    case _ => throw new IllegalArgumentException(s"$t $x")
  }

  /** `values` as a dictionary-encoded vector (ids into distinct entries), if Spark's vectors
    * support a dictionary for `t`'s physical type. */
  private def dictionaryVector(t: DataType, values: IndexedSeq[Option[Any]], offHeap: Boolean): Option[WritableColumnVector] = {
    // Entries are told apart by bits (NaN is one entry, -0.0 is not 0.0) and bytes by content.
    def key(x: Any): Any = x match {
      case b: Array[Byte] => b.toSeq
      case f: Float => java.lang.Float.floatToRawIntBits(f)
      case d: Double => java.lang.Double.doubleToRawLongBits(d)
      case other => other
    }
    val seen = scala.collection.mutable.HashSet.empty[Any]
    val entries = values.flatten.filter(x => seen.add(key(x))).toIndexedSeq
    val ids = entries.map(key).zipWithIndex.toMap
    def idOf(x: Any): Int = ids(key(x))
    def bytesOf(x: Any): Array[Byte] = x match {
      case s: UTF8String => s.getBytes
      case b: Array[Byte] => b
      case d: Decimal => d.toJavaBigDecimal.unscaledValue.toByteArray
    }
    val dict: Option[SparkDictionary] = t match {
      case ByteType => Some(new SparkDictionary.Ints(entries.map(_.asInstanceOf[Byte].toInt).toArray))
      case ShortType => Some(new SparkDictionary.Ints(entries.map(_.asInstanceOf[Short].toInt).toArray))
      case IntegerType | DateType | _: YearMonthIntervalType => Some(new SparkDictionary.Ints(entries.map(_.asInstanceOf[Int]).toArray))
      case LongType | TimestampType | TimestampNTZType | _: DayTimeIntervalType =>
        Some(new SparkDictionary.Longs(entries.map(_.asInstanceOf[Long]).toArray))
      case FloatType => Some(new SparkDictionary.Floats(entries.map(_.asInstanceOf[Float]).toArray))
      case DoubleType => Some(new SparkDictionary.Doubles(entries.map(_.asInstanceOf[Double]).toArray))
      case d: DecimalType if d.precision <= 9 => Some(new SparkDictionary.Ints(entries.map(_.asInstanceOf[Decimal].toUnscaledLong.toInt).toArray))
      case d: DecimalType if d.precision <= 18 => Some(new SparkDictionary.Longs(entries.map(_.asInstanceOf[Decimal].toUnscaledLong).toArray))
      case _: DecimalType | _: StringType | BinaryType =>
        val bytes = entries.map(bytesOf)
        Some(new SparkDictionary.Binaries(bytes.scanLeft(0)(_ + _.length).toArray, bytes.flatten.toArray))
      case _ => None
    }
    dict.map { d =>
      val v = allocate(values.size, t, offHeap)
      val idVector = v.reserveDictionaryIds(values.size)
      values.indices.foreach { i => values(i) match {
        case None => v.putNull(i)
        case Some(x) => idVector.putInt(i, idOf(x))
      }}
      v.setDictionary(d)
      v
    }
  }

  private def allocate(n: Int, t: DataType, offHeap: Boolean): WritableColumnVector =
    if (offHeap) new OffHeapColumnVector(n, t) else new OnHeapColumnVector(n, t)

  /** One column of `n` rows of type `t` in a random representation, and its name. */
  private def column(t: DataType, n: Int, rnd: Random, offHeap: Boolean): (ColumnVector, String) = {
    val nullRate = Seq(0.0, 0.1, 0.5, 1.0)(rnd.nextInt(4))
    val values = IndexedSeq.fill(n)(if (t == NullType || rnd.nextDouble() < nullRate) None else Some(value(t, rnd)))
    rnd.nextInt(4) match {
      case 0 =>
        val c = new ConstantColumnVector(n, t)
        val x = if (t == NullType || rnd.nextInt(4) == 0) null else value(t, rnd)
        SparkInternals.populateConstant(c, InternalRow(x), 0)
        (c, "constant")
      case 1 if t != NullType =>
        // A column missing from the file: all null, marked constant.
        val v = allocate(n, t, offHeap)
        v.putNulls(0, n)
        v.setIsConstant()
        (v, "missing")
      case 2 if dictionaryVector(t, values, offHeap).isDefined => (dictionaryVector(t, values, offHeap).get, "dictionary")
      case _ =>
        val v = allocate(n, t, offHeap)
        values.indices.foreach { i => values(i).fold(v.putNull(i))(x => put(v, i, t, x)) }
        (v, "plain")
    }
  }

  private def check(schema: StructType, batches: Seq[ColumnarBatch], what: String): Unit = {
    val oracle = UnsafeProjection.create(schema)
    val writer = new BatchRowWriter(schema.fields.map(_.dataType))
    batches.zipWithIndex.foreach { case (batch, b) =>
      val rows = writer.rows(batch)
      var i = 0
      while (rows.hasNext) {
        val actual: UnsafeRow = rows.next()
        val expected = oracle(batch.getRow(i))
        assert(actual.getSizeInBytes == expected.getSizeInBytes && actual == expected,
          s"$what batch $b row $i:\n lmspark ${actual.toSeq(schema)}\n spark   ${expected.toSeq(schema)}")
        i += 1
      }
      assert(i == batch.numRows(), s"$what batch $b: $i rows written of ${batch.numRows()}")
    }
  }

  for (seed <- 1 to 12) test(s"random batches of every type are Spark's UnsafeRows, seed $seed") {
    val rnd = new Random(seed)
    val offHeap = seed % 3 == 0
    val fields = types ++ Seq.fill(rnd.nextInt(10))(types(rnd.nextInt(types.size)))
    val schema = StructType(rnd.shuffle(fields).zipWithIndex.map { case (t, i) => StructField(s"c$i", t) })
    val vectors = scala.collection.mutable.ArrayBuffer.empty[ColumnVector]
    val kinds = scala.collection.mutable.Set.empty[String]
    try {
      // Several batches through one writer: its buffer grows and shrinks with the strings.
      val batches = Seq(0, 1, 37, 200).map { n =>
        val cols = schema.fields.map(f => column(f.dataType, n, rnd, offHeap))
        vectors ++= cols.map(_._1)
        kinds ++= cols.map(_._2)
        val batch = new ColumnarBatch(cols.map(_._1))
        batch.setNumRows(n)
        batch
      }
      assert(kinds == Set("constant", "missing", "dictionary", "plain"), kinds)
      check(schema, batches, s"seed $seed")
    } finally vectors.foreach(_.close())
  }

  test("a row is a view of the writer's buffer: copies are independent, the batch width is checked") {
    val t = StructType(Seq(StructField("s", StringType), StructField("d", DecimalType(30, 2))))
    val s = new OnHeapColumnVector(3, StringType)
    val d = new OnHeapColumnVector(3, DecimalType(30, 2))
    Seq("a", "bb", "ccc").zipWithIndex.foreach { case (x, i) => s.putByteArray(i, x.getBytes("UTF-8")) }
    Seq(1, 2, 3).foreach(i => if (i == 2) d.putNull(i - 1) else d.putDecimal(i - 1, Decimal(i * 100L, 30, 2), 30))
    val batch = new ColumnarBatch(Array[ColumnVector](s, d), 3)
    val writer = new BatchRowWriter(t.fields.map(_.dataType))
    val copies = writer.rows(batch).map(_.copy()).toList
    val oracle = UnsafeProjection.create(t)
    assert(copies == (0 until 3).map(i => oracle(batch.getRow(i)).copy()).toList)
    // The null wide decimal keeps its 16 reserved bytes, so setDecimal can update it in place.
    val row = copies(1)
    row.setDecimal(1, Decimal(77777L, 30, 2), 30)
    assert(row.getDecimal(1, 30, 2) == Decimal(77777L, 30, 2))
    assert(intercept[IllegalArgumentException](new BatchRowWriter(Array(StringType)).rows(batch)).getMessage
      .contains("2 columns"))
    batch.close()
  }

  test("flat and nested types are writable; intervals and variants (also inside nested types) are not") {
    assert(types.forall(t => BatchRowWriter.fieldWriterFor(t, null).isDefined))
    for (t <- Seq(ArrayType(IntegerType), MapType(StringType, IntegerType), StructType(Seq(StructField("x", IntegerType)))))
      assert(BatchRowWriter.supports(StructType(Seq(StructField("a", IntegerType), StructField("b", t)))), t)
    for (t <- Seq(CalendarIntervalType, ArrayType(CalendarIntervalType), MapType(StringType, CalendarIntervalType),
        StructType(Seq(StructField("x", CalendarIntervalType)))) ++ TestLineApis.variantType) {
      assert(BatchRowWriter.fieldWriterFor(t, null).isEmpty, t)
      assert(!BatchRowWriter.supports(StructType(Seq(StructField("a", IntegerType), StructField("b", t)))), t)
      assert(intercept[IllegalArgumentException](new BatchRowWriter(Array(IntegerType, t))).getMessage
        .contains(t.catalogString))
    }
  }
}
