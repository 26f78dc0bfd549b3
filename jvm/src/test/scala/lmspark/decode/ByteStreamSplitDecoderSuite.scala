package lmspark.decode

import lmspark.testutil.ScalaCompat.ArraySeq
import scala.util.Random

import org.apache.parquet.column.values.ValuesWriter
import org.apache.parquet.column.values.bytestreamsplit.ByteStreamSplitValuesWriter._
import org.apache.parquet.io.api.Binary
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.IntegerType
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.TestLineApis
import lmspark.decode.DecoderHarness._

/** BYTE_STREAM_SPLIT for FLOAT, DOUBLE, INT32, INT64 and FIXED_LEN_BYTE_ARRAY(k): values encoded by
  * parquet-java's writers, decoded by ours under read / skip patterns and batch sizes; malformed
  * sizes and reads past the end end in [[DecodeException]]. */
class ByteStreamSplitDecoderSuite extends AnyFunSuite {

  private val counts = Seq(0, 1, 2, 127, 128, 129, 1000, 5000)

  private def floats(r: Random, n: Int): IndexedSeq[Float] = IndexedSeq.fill(n)(
    if (r.nextInt(4) == 0) Seq(Float.NaN, -0.0f, 0.0f, Float.PositiveInfinity, Float.NegativeInfinity, Float.MinValue,
      Float.MaxValue, Float.MinPositiveValue, java.lang.Float.intBitsToFloat(0x7fc00123))(r.nextInt(9))
    else r.nextFloat() * 2e6f - 1e6f)

  private def doubles(r: Random, n: Int): IndexedSeq[Double] = IndexedSeq.fill(n)(
    if (r.nextInt(4) == 0) Seq(Double.NaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity, Double.MinValue,
      Double.MaxValue, Double.MinPositiveValue)(r.nextInt(8))
    else r.nextGaussian() * 1e9)

  /** parquet-java's writer for the newer BYTE_STREAM_SPLIT types; the test cancels on a line whose
    * parquet-java lacks it. */
  private def bss(kind: String, width: Int): ValuesWriter =
    TestLineApis.byteStreamSplitWriter(kind, width, 64, 1 << 20, alloc)
      .getOrElse(cancel(s"this line's parquet-java has no BYTE_STREAM_SPLIT writer for $kind"))

  test("FLOAT and DOUBLE: NaN, -0.0, infinities and extremes, every pattern and batch size") {
    val r = new Random(21)
    for (n <- counts) {
      val fs = floats(r, n)
      val fe = encode(new FloatByteStreamSplitValuesWriter(64, 1 << 20, alloc), fs)(_.writeFloat(_))
      val (fb, fo) = embed(fe, r)
      check(s"FLOAT x $n", Kind.Floats, new ByteStreamSplitDecoder(4), fb, fo, fe.length, n + r.nextInt(3), fs,
        r.nextLong())
      val ds = doubles(r, n)
      val de = encode(new DoubleByteStreamSplitValuesWriter(64, 1 << 20, alloc), ds)(_.writeDouble(_))
      val (db, dof) = embed(de, r)
      check(s"DOUBLE x $n", Kind.Doubles, new ByteStreamSplitDecoder(8), db, dof, de.length, n, ds, r.nextLong())
    }
  }

  test("INT32 and INT64: extremes, every pattern and batch size, vector and array reads") {
    val r = new Random(22)
    for (n <- counts) {
      val is = IndexedSeq.fill(n)(if (r.nextInt(4) == 0) Seq(Int.MinValue, Int.MaxValue, 0, -1)(r.nextInt(4)) else r.nextInt())
      val ie = encode(bss("INT32", 4), is)(_.writeInteger(_))
      val (ib, io) = embed(ie, r)
      check(s"INT32 x $n", Kind.Ints, new ByteStreamSplitDecoder(4), ib, io, ie.length, n, is, r.nextLong())
      val ls = IndexedSeq.fill(n)(if (r.nextInt(4) == 0) Seq(Long.MinValue, Long.MaxValue, 0L, -1L)(r.nextInt(4))
        else r.nextLong())
      val le = encode(bss("INT64", 8), ls)(_.writeLong(_))
      val (lb, lo) = embed(le, r)
      check(s"INT64 x $n", Kind.Longs, new ByteStreamSplitDecoder(8), lb, lo, le.length, n + 1, ls, r.nextLong())
    }
  }

  test("FIXED_LEN_BYTE_ARRAY(k): every pattern and batch size") {
    val r = new Random(23)
    for (k <- Seq(1, 3, 5, 16); n <- counts) {
      val vs = IndexedSeq.fill(n) { val a = new Array[Byte](k); r.nextBytes(a); ArraySeq.unsafeWrapArray(a) }
      val e = encode(bss("FIXED_LEN_BYTE_ARRAY", k), vs)(
        (w, b) => w.writeBytes(Binary.fromConstantByteArray(b.toArray)))
      assert(e.length == n * k)
      val (b, o) = embed(e, r)
      check(s"FLBA($k) x $n", Kind.Binaries, new ByteStreamSplitDecoder(k), b, o, e.length, n, vs, r.nextLong())
    }
  }

  test("malformed sizes and reads past the end are DecodeExceptions") {
    val d = new ByteStreamSplitDecoder(4)
    assert(intercept[DecodeException](d.init(new Array[Byte](10), 0, 10, 10)).getMessage.contains("not a multiple"))
    assert(intercept[DecodeException](d.init(new Array[Byte](16), 0, 16, 3)).getMessage.contains("at most 3"))
    assert(intercept[DecodeException](d.init(new Array[Byte](16), 4, 16, 4)).getMessage.contains("outside"))
    d.init(new Array[Byte](16), 0, 16, 4)
    d.skip(3)
    val v = new OnHeapColumnVector(4, IntegerType)
    try {
      assert(intercept[DecodeException](d.readInts(2, v, 0)).getMessage.contains("ended early"))
      assertThrows[DecodeException](d.skip(2))
      assertThrows[DecodeException](d.skip(-1))
      d.readInts(1, v, 0)
      assertThrows[DecodeException](d.readIntArray(1, new Array[Int](1), 0))
    } finally v.close()
  }
}
