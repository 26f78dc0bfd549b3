package lmspark.decode

import lmspark.testutil.ScalaCompat.ArraySeq
import scala.util.Random

import org.apache.parquet.bytes.HeapByteBufferAllocator
import org.apache.parquet.column.values.ValuesWriter
import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.types._
import org.scalatest.Assertions._

/** What a decoder under test produces, and how to read it through both of the decoder's APIs
  * (vector writes, and arrays / [[BinarySink]]), in a form compared with `==` (floating point
  * values as their `floatToIntBits` / `doubleToLongBits`: NaN equals NaN, -0.0 differs from 0.0). */
sealed abstract class Kind(val sparkType: DataType) {
  def readVector(d: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit
  def get(v: WritableColumnVector, row: Int): Any
  /** Reads `n` values through the non-vector API (the vector one when there is none). */
  def readDirect(d: ValuesDecoder, n: Int, v: WritableColumnVector): IndexedSeq[Any]
  def norm(x: Any): Any = x
}

object Kind {
  case object Ints extends Kind(IntegerType) {
    def readVector(d: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = d.readInts(n, v, rowId)
    def get(v: WritableColumnVector, row: Int): Any = v.getInt(row)
    def readDirect(d: ValuesDecoder, n: Int, v: WritableColumnVector): IndexedSeq[Any] = {
      val a = new Array[Int](n + 2)
      d.readIntArray(n, a, 1)
      a.slice(1, n + 1).toIndexedSeq
    }
  }
  case object Longs extends Kind(LongType) {
    def readVector(d: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = d.readLongs(n, v, rowId)
    def get(v: WritableColumnVector, row: Int): Any = v.getLong(row)
    def readDirect(d: ValuesDecoder, n: Int, v: WritableColumnVector): IndexedSeq[Any] = {
      val a = new Array[Long](n + 2)
      d.readLongArray(n, a, 1)
      a.slice(1, n + 1).toIndexedSeq
    }
  }
  case object Floats extends Kind(FloatType) {
    def readVector(d: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = d.readFloats(n, v, rowId)
    def get(v: WritableColumnVector, row: Int): Any = java.lang.Float.floatToIntBits(v.getFloat(row))
    def readDirect(d: ValuesDecoder, n: Int, v: WritableColumnVector): IndexedSeq[Any] = {
      v.reset(); readVector(d, n, v, 0); (0 until n).map(get(v, _))
    }
    override def norm(x: Any): Any = java.lang.Float.floatToIntBits(x.asInstanceOf[Float])
  }
  case object Doubles extends Kind(DoubleType) {
    def readVector(d: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = d.readDoubles(n, v, rowId)
    def get(v: WritableColumnVector, row: Int): Any = java.lang.Double.doubleToLongBits(v.getDouble(row))
    def readDirect(d: ValuesDecoder, n: Int, v: WritableColumnVector): IndexedSeq[Any] = {
      v.reset(); readVector(d, n, v, 0); (0 until n).map(get(v, _))
    }
    override def norm(x: Any): Any = java.lang.Double.doubleToLongBits(x.asInstanceOf[Double])
  }
  case object Binaries extends Kind(BinaryType) {
    def readVector(d: ValuesDecoder, n: Int, v: WritableColumnVector, rowId: Int): Unit = d.readBinaries(n, v, rowId)
    def get(v: WritableColumnVector, row: Int): Any = ArraySeq.unsafeWrapArray(v.getBinary(row))
    def readDirect(d: ValuesDecoder, n: Int, v: WritableColumnVector): IndexedSeq[Any] = {
      val out = new Array[Any](n)
      d.readBinaryValues(n, new BinarySink {
        def accept(rowId: Int, bytes: Array[Byte], offset: Int, length: Int): Unit =
          out(rowId - 7) = ArraySeq.unsafeWrapArray(java.util.Arrays.copyOfRange(bytes, offset, offset + length))
      }, 7)
      out.toIndexedSeq
    }
  }
}

/** Differential decoding checks shared by the decoder suites: values encoded by parquet-java's
  * own writers, decoded by ours under read / skip patterns and batch sizes. */
object DecoderHarness {

  val batchSizes: Seq[Int] = Seq(1, 3, 7, 64, 4096)
  val patterns: Seq[String] = Seq("no-skip", "alternate", "random", "skip-all")

  /** The bytes parquet-java's `writer` produced for `write(value)` over `values`. */
  def encode[T](writer: ValuesWriter, values: Seq[T])(write: (ValuesWriter, T) => Unit): Array[Byte] = {
    values.foreach(write(writer, _))
    val b = writer.getBytes.toByteArray
    writer.close()
    b
  }

  val alloc: HeapByteBufferAllocator = HeapByteBufferAllocator.getInstance()

  /** `bytes` placed at a random offset in a larger array with random bytes around it, so that a
    * decoder that reads outside `[offset, offset + length)` gets garbage. */
  def embed(bytes: Array[Byte], r: Random): (Array[Byte], Int) = {
    val before = r.nextInt(9)
    val out = new Array[Byte](before + bytes.length + 16)
    r.nextBytes(out)
    System.arraycopy(bytes, 0, out, before, bytes.length)
    (out, before)
  }

  /** Ops: positive = read, negative = skip (0 as a skip of nothing). */
  def ops(pattern: String, count: Int, batch: Int, r: Random): IndexedSeq[(Boolean, Int)] = {
    val out = IndexedSeq.newBuilder[(Boolean, Int)]
    var pos = 0
    def add(read: Boolean, n: Int): Unit = { val k = math.min(n, count - pos); out += ((read, k)); pos += k }
    pattern match {
      case "no-skip" => while (pos < count) add(read = true, batch)
      case "alternate" =>
        var read = true
        while (pos < count) { add(read, batch); read = !read }
      case "random" =>
        while (pos < count) r.nextInt(6) match {
          case 0 => add(read = false, r.nextInt(2))
          case 1 => add(read = false, r.nextInt(3 * batch + 1))
          case 2 => add(read = false, r.nextInt(count / 2 + 1))
          case _ => add(read = true, 1 + r.nextInt(batch))
        }
      case "skip-all" =>
        add(read = false, count)
    }
    out.result()
  }

  /** Decodes `bytes[offset, offset + length)` holding `expected.size` values (of a page of
    * `numValues`) with `decoder`, re-`init`ed for every pattern x batch size, and compares. Reads
    * alternate between the vector and the array / sink API and land at varying row offsets.
    * Finally reading one more value must raise [[DecodeException]]. */
  def check(what: String, kind: Kind, decoder: ValuesDecoder, bytes: Array[Byte], offset: Int, length: Int,
      numValues: Int, expected: IndexedSeq[Any], seed: Long): Unit = {
    val r = new Random(seed)
    val want = expected.map(kind.norm)
    val v = new OnHeapColumnVector(batchSizes.max + 3, kind.sparkType)
    try {
      for (pattern <- patterns; batch <- batchSizes) {
        decoder.init(bytes, offset, length, numValues)
        val steps = ops(pattern, expected.size, batch, r)
        var pos = 0
        for (((read, n), i) <- steps.zipWithIndex) {
          def where = s"$what [$pattern batch $batch] op $i (${if (read) "read" else "skip"} $n at $pos)"
          if (read) {
            val got =
              if (i % 2 == 0) {
                val rowId = i % 3
                v.reset()
                kind.readVector(decoder, n, v, rowId)
                (0 until n).map(j => kind.get(v, rowId + j))
              } else kind.readDirect(decoder, n, v)
            val bad = (0 until n).find(j => got(j) != want(pos + j))
            bad.foreach(j => fail(s"$where: value ${pos + j} is ${got(j)}, expected ${want(pos + j)}"))
          } else decoder.skip(n)
          pos += n
        }
        assert(pos == expected.size)
        v.reset()
        intercept[DecodeException](kind.readVector(decoder, 1, v, 0))
      }
    } finally v.close()
  }

  /** Reads all `count` values through the vector API; returns what was thrown, if anything. */
  def readAll(kind: Kind, decoder: ValuesDecoder, bytes: Array[Byte], offset: Int, length: Int, numValues: Int,
      count: Int): Option[Throwable] = {
    val v = new OnHeapColumnVector(math.max(count, 1), kind.sparkType)
    try {
      decoder.init(bytes, offset, length, numValues)
      kind.readVector(decoder, count, v, 0)
      None
    } catch { case e: Throwable => Some(e) } finally v.close()
  }
}
