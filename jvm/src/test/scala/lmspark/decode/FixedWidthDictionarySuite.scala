package lmspark.decode

import scala.util.Random

import org.apache.parquet.bytes.{BytesInput, HeapByteBufferAllocator}
import org.apache.parquet.column.{ColumnDescriptor, Encoding}
import org.apache.parquet.column.page.DictionaryPage
import org.apache.parquet.column.values.plain.PlainValuesWriter
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.parquet.schema.Types
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.SparkDictionary

/** Fixed-width dictionaries read per id from their page's bytes, against parquet-java's own PLAIN
  * dictionary over the same page (written by parquet-java's `PlainValuesWriter`): every entry, ids
  * looked up in random order into vectors and arrays, Spark's view of the dictionary, ids out of
  * range, and that the page array is all the dictionary holds (the heap a cache charges for it).
  * Seeded; the failing seed is in the clue. */
class FixedWidthDictionarySuite extends AnyFunSuite {

  private val types = Seq(PrimitiveTypeName.INT32, PrimitiveTypeName.INT64, PrimitiveTypeName.FLOAT,
    PrimitiveTypeName.DOUBLE)

  /** `n` random values of `t` (NaN, -0.0 and extremes among them) PLAIN-encoded by parquet-java, at
    * offset `pad` of a page array with `pad` bytes of noise on each side. */
  private def page(t: PrimitiveTypeName, n: Int, pad: Int, r: Random): Array[Byte] = {
    val w = new PlainValuesWriter(64, 1 << 20, HeapByteBufferAllocator.getInstance)
    for (_ <- 0 until n) t match {
      case PrimitiveTypeName.INT32 => w.writeInteger(if (r.nextInt(8) == 0) Int.MinValue else r.nextInt())
      case PrimitiveTypeName.INT64 => w.writeLong(if (r.nextInt(8) == 0) Long.MaxValue else r.nextLong())
      case PrimitiveTypeName.FLOAT => w.writeFloat(if (r.nextInt(8) == 0) Float.NaN else r.nextFloat() - 0.5f)
      case _ => w.writeDouble(if (r.nextInt(8) == 0) -0.0 else r.nextGaussian())
    }
    val body = w.getBytes.toByteArray
    w.close()
    val out = new Array[Byte](pad + body.length + pad)
    r.nextBytes(out)
    System.arraycopy(body, 0, out, pad, body.length)
    out
  }

  /** parquet-java's dictionary over the same bytes. */
  private def oracle(t: PrimitiveTypeName, bytes: Array[Byte], pad: Int, n: Int) = {
    val d = new ColumnDescriptor(Array("c"), Types.required(t).named("c"), 0, 0)
    val body = java.util.Arrays.copyOfRange(bytes, pad, bytes.length - pad)
    Encoding.PLAIN.initDictionary(d, new DictionaryPage(BytesInput.from(body), n, Encoding.PLAIN))
  }

  private def sparkType(t: PrimitiveTypeName): DataType = t match {
    case PrimitiveTypeName.INT32 => IntegerType
    case PrimitiveTypeName.INT64 => LongType
    case PrimitiveTypeName.FLOAT => FloatType
    case _ => DoubleType
  }

  test("entries, lookups and Spark's view equal parquet-java's dictionary; the heap held is the page's array") {
    for (seed <- 0 until 200; t <- types) withClue(s"seed $seed, $t: ") {
      val r = new Random(seed)
      val n = if (r.nextInt(10) == 0) r.nextInt(3) else 1 + r.nextInt(3000)
      val pad = r.nextInt(9)
      val bytes = page(t, n, pad, r)
      val want = oracle(t, bytes, pad, n)
      val d = Dictionary.decodePlain(t, 0, n, bytes, pad, bytes.length - 2 * pad).asInstanceOf[FixedWidthDictionary]
      assert(d.size == n)
      assert(d.heapBytes == bytes.length, "a new dictionary holds its page's array and nothing else")

      // Ids in random order, repeated, through the vector and array paths.
      val k = if (n == 0) 0 else r.nextInt(2 * n + 1)
      val ids = Array.fill(k)(r.nextInt(math.max(n, 1)))
      val v = new OnHeapColumnVector(math.max(k, 1), sparkType(t))
      // Each value as its raw bits: from the vector, Spark's view, the entry itself and parquet-java.
      val (fromVector, fromSpark, entry, expected) = d match {
        case i: IntDictionary =>
          i.writeInts(ids, k, v, 0)
          val a = new Array[Int](k + 1); i.writeIntArray(ids, k, a, 1)
          assert((0 until k).forall(j => a(j + 1) == v.getInt(j)), "array and vector lookups differ")
          val s = SparkDictionary.ints(i).get
          ((j: Int) => v.getInt(j).toLong, (id: Int) => s.decodeToInt(id).toLong, (id: Int) => i.value(id).toLong,
            (id: Int) => want.decodeToInt(id).toLong)
        case l: LongDictionary =>
          l.writeLongs(ids, k, v, 0)
          val a = new Array[Long](k + 1); l.writeLongArray(ids, k, a, 1)
          assert((0 until k).forall(j => a(j + 1) == v.getLong(j)), "array and vector lookups differ")
          val s = SparkDictionary.longs(l).get
          ((j: Int) => v.getLong(j), (id: Int) => s.decodeToLong(id), (id: Int) => l.value(id), (id: Int) => want.decodeToLong(id))
        case f: FloatDictionary =>
          f.writeFloats(ids, k, v, 0)
          val s = SparkDictionary.floats(f).get
          val bits = (x: Float) => java.lang.Float.floatToRawIntBits(x).toLong
          ((j: Int) => bits(v.getFloat(j)), (id: Int) => bits(s.decodeToFloat(id)), (id: Int) => bits(f.value(id)),
            (id: Int) => bits(want.decodeToFloat(id)))
        case x: DoubleDictionary =>
          x.writeDoubles(ids, k, v, 0)
          val s = SparkDictionary.doubles(x).get
          val bits = (y: Double) => java.lang.Double.doubleToRawLongBits(y)
          ((j: Int) => bits(v.getDouble(j)), (id: Int) => bits(s.decodeToDouble(id)), (id: Int) => bits(x.value(id)),
            (id: Int) => bits(want.decodeToDouble(id)))
      }
      for (j <- 0 until k) {
        assert(fromVector(j) == expected(ids(j)), s"row $j, id ${ids(j)}")
        assert(fromSpark(ids(j)) == expected(ids(j)), s"Spark's view, id ${ids(j)}")
      }
      assert((0 until n).map(entry) == (0 until n).map(expected), "the entries")
      assert(d.heapBytes == bytes.length, "lookups decoded the dictionary")
      v.close()
    }
  }

  test("an id outside the dictionary is an error, even where the page array has bytes for it") {
    for (t <- types) {
      val r = new Random(7)
      val bytes = page(t, 10, 8, r)
      val d = Dictionary.decodePlain(t, 0, 9, bytes, 8, bytes.length - 16) // one value of the page left out
      val v = new OnHeapColumnVector(1, sparkType(t))
      for (id <- Seq(9, 10, -1)) withClue(s"$t, id $id: ") {
        val e = intercept[DecodeException](t match {
          case PrimitiveTypeName.INT32 => d.writeInts(Array(id), 1, v, 0)
          case PrimitiveTypeName.INT64 => d.writeLongs(Array(id), 1, v, 0)
          case PrimitiveTypeName.FLOAT => d.writeFloats(Array(id), 1, v, 0)
          case _ => d.writeDoubles(Array(id), 1, v, 0)
        })
        assert(e.getMessage.contains(s"dictionary id $id out of range [0, 9)"), e.getMessage)
      }
      v.close()
    }
  }

  test("a page too short for its count is an error before anything is read") {
    for (t <- types) {
      val width = if (t == PrimitiveTypeName.INT32 || t == PrimitiveTypeName.FLOAT) 4 else 8
      val e = intercept[DecodeException](Dictionary.decodePlain(t, 0, 5, new Array[Byte](64), 30, 5 * width - 1))
      assert(e.getMessage.contains("too short"), e.getMessage)
    }
  }
}
