package lmspark.decode

import scala.util.Random

import org.apache.parquet.bytes.HeapByteBufferAllocator
import org.apache.parquet.column.values.bitpacking.BitPackingValuesWriter
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridEncoder
import org.scalatest.funsuite.AnyFunSuite

/** The RLE / bit-packed hybrid and legacy BIT_PACKED decoders against parquet-java's encoders, with
  * seeded interleavings of reads, skips and counting skips. */
class LevelDecodersSuite extends AnyFunSuite {

  private val alloc = HeapByteBufferAllocator.getInstance

  /** Values with long runs and noisy stretches, so both RLE and bit-packed runs appear. */
  private def values(r: Random, n: Int, bitWidth: Int): Array[Int] = {
    val max = if (bitWidth == 0) 0L else (1L << bitWidth) - 1
    def any(): Int = if (max == 0) 0 else (r.nextLong() & max).toInt
    val out = new Array[Int](n)
    var i = 0
    while (i < n) {
      val len = math.min(n - i, 1 + r.nextInt(if (r.nextBoolean()) 40 else 3))
      if (r.nextBoolean()) { val v = any(); for (j <- 0 until len) out(i + j) = v }
      else for (j <- 0 until len) out(i + j) = any()
      i += len
    }
    out
  }

  private def exercise(dec: LevelDecoder, expected: Array[Int], r: Random): Unit = {
    var pos = 0
    val buf = new Array[Int](300)
    while (pos < expected.length) {
      val k = math.min(expected.length - pos, r.nextInt(4) match { case 0 => 1; case 1 => r.nextInt(300); case _ => r.nextInt(40) })
      // runOf never claims more than is true, consumes nothing, and finds long RLE runs.
      val probe = expected(pos)
      val run = dec.runOf(probe, k)
      assert(run >= 0 && run <= k && (pos until pos + run).forall(expected(_) == probe), s"runOf at $pos")
      r.nextInt(3) match {
        case 0 =>
          dec.readInts(k, buf, 0)
          for (i <- 0 until k) assert(buf(i) == expected(pos + i), s"value ${pos + i}")
        case 1 => dec.skip(k)
        case _ =>
          val target = expected(pos)
          assert(dec.skipCounting(k, target) == (pos until pos + k).count(expected(_) == target))
      }
      pos += k
    }
  }

  test("runOf sees a page of non-null levels, as parquet-java encodes it, as one run") {
    for (n <- Seq(1, 7, 8, 100, 20000)) {
      val enc = new RunLengthBitPackingHybridEncoder(1, 64, 1 << 20, alloc)
      (0 until n).foreach(_ => enc.writeInt(1))
      val bytes = enc.toBytes.toByteArray
      val dec = new RleBitPackedDecoder
      dec.init(bytes, 0, bytes.length, 1)
      val run = dec.runOf(1, n)
      // parquet-java bit-packs runs shorter than 8; longer ones are RLE
      if (n >= 8) assert(run == n, s"n=$n") else assert(run == 0 || run == n, s"n=$n")
      assert(dec.runOf(0, n) == 0)
      val out = new Array[Int](n)
      dec.readInts(n, out, 0)
      assert(out.forall(_ == 1))
    }
  }

  test("RLE / bit-packed hybrid, every bit width") {
    val r = new Random(1)
    for (bitWidth <- 0 to 32; trial <- 0 until 6) {
      val n = 1 + r.nextInt(3000)
      val vs = values(r, n, bitWidth)
      val enc = new RunLengthBitPackingHybridEncoder(bitWidth, 64, 1 << 20, alloc)
      vs.foreach(v => enc.writeInt(v))
      val bytes = enc.toBytes.toByteArray
      // Bytes after the data on even trials; none on odd ones (the last values are then loaded near
      // the array's end).
      val padded = new Array[Byte](bytes.length + 3 + (if (trial % 2 == 0) 4 else 0))
      System.arraycopy(bytes, 0, padded, 3, bytes.length)
      val dec = new RleBitPackedDecoder
      dec.init(padded, 3, bytes.length, bitWidth)
      exercise(dec, vs, r)
      if (bitWidth > 0) {
        // Everything consumed: one more value is an error, not garbage.
        assertThrows[DecodeException](dec.readInts(9, new Array[Int](9), 0))
      }
    }
  }

  test("RLE booleans straight into a vector") {
    import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
    import org.apache.spark.sql.types.BooleanType
    val r = new Random(2)
    val vs = values(r, 5000, 1)
    val enc = new RunLengthBitPackingHybridEncoder(1, 64, 1 << 20, alloc)
    vs.foreach(v => enc.writeInt(v))
    val rle = enc.toBytes.toByteArray
    val bytes = new Array[Byte](rle.length + 4)
    bytes(0) = (rle.length & 0xff).toByte; bytes(1) = ((rle.length >> 8) & 0xff).toByte
    System.arraycopy(rle, 0, bytes, 4, rle.length)
    val dec = new RleBooleanDecoder
    dec.init(bytes, 0, bytes.length, vs.length)
    val v = new OnHeapColumnVector(vs.length, BooleanType)
    dec.skip(10)
    dec.readBooleans(vs.length - 10, v, 0)
    for (i <- 10 until vs.length) assert(v.getBoolean(i - 10) == (vs(i) == 1), s"row $i")
    v.close()
  }

  test("legacy BIT_PACKED levels") {
    val r = new Random(3)
    for (bound <- Seq(1, 3, 7, 100); trial <- 0 until 5) {
      val bitWidth = 32 - Integer.numberOfLeadingZeros(bound)
      val n = 1 + r.nextInt(2000)
      val vs = Array.fill(n)(r.nextInt(bound + 1))
      val w = new BitPackingValuesWriter(bound, 64, 1 << 20, alloc)
      vs.foreach(v => w.writeInteger(v))
      val bytes = w.getBytes.toByteArray
      val dec = new LegacyBitPackedLevelDecoder
      dec.init(bytes, 0, bytes.length, bitWidth)
      exercise(dec, vs, r)
    }
  }

  test("malformed RLE input fails cleanly") {
    val dec = new RleBitPackedDecoder
    // A varint run header that never ends.
    dec.init(Array.fill[Byte](10)(0xff.toByte), 0, 10, 3)
    assertThrows[DecodeException](dec.readInts(1, new Array[Int](1), 0))
    // An RLE run whose value bytes are missing.
    dec.init(Array[Byte](0x10), 0, 1, 16)
    assertThrows[DecodeException](dec.readInts(1, new Array[Int](1), 0))
    // A bit-packed run header claiming far more groups than there are bytes, though the values asked
    // lie in the bytes present: rejected, as Spark's reader rejects it (the next test compares the two).
    dec.init(Array[Byte](0x7f, 0x01), 0, 2, 1)
    val out = new Array[Int](8)
    val e = intercept[DecodeException](dec.readInts(8, out, 0))
    assert(e.getMessage.contains("bit-packed run of 63 groups needs 63 bytes, but only 1 bytes are left"), e.getMessage)
    assertThrows[DecodeException](dec.init(new Array[Byte](4), 0, 4, 33))
  }

  test("a bit-packed run declaring more groups than its bytes hold fails, as in Spark's reader, even for values present") {
    val r = new Random(20261202L)
    var rejected = 0
    for (trial <- 0 until 300) {
      val bitWidth = 1 + r.nextInt(24)
      val groups = 1 + r.nextInt(40)
      val n = groups * 8
      // Values without repeats of 8, so parquet-java writes them as one bit-packed run.
      val vals = Array.tabulate(n)(i => ((i * 2654435761L + trial) & ((1L << bitWidth) - 1)).toInt)
      val enc = new RunLengthBitPackingHybridEncoder(bitWidth, 64, 64 * 1024, alloc)
      vals.foreach(enc.writeInt)
      val bytes = enc.toBytes.toByteArray
      assert(bytes.length == 1 + groups * bitWidth && (bytes(0) & 0xff) == ((groups << 1) | 1), s"trial $trial: one run")
      // The header now claims up to 22 more groups than the bytes hold (still a one-byte varint).
      val claimed = groups + 1 + r.nextInt(63 - groups min 22)
      val data = bytes.clone()
      data(0) = ((claimed << 1) | 1).toByte
      val asked = 1 + r.nextInt(n)
      // Spark's reader of dictionary ids and levels, over the run alone (no length prefix).
      def fromSpark(d: Array[Byte]) = scala.util.Try {
        val spark = new org.apache.spark.sql.execution.datasources.parquet.VectorizedRleValuesReader(bitWidth, false)
        spark.initFromPage(asked, org.apache.parquet.bytes.ByteBufferInputStream.wrap(java.nio.ByteBuffer.wrap(d)))
        (0 until asked).map(_ => spark.readInteger())
      }
      def fromLm(d: Array[Byte]) = scala.util.Try {
        val dec = new RleBitPackedDecoder
        dec.init(d, 0, d.length, bitWidth)
        val a = new Array[Int](asked); dec.readInts(asked, a, 0); a.toSeq
      }
      val what = s"trial $trial: bit width $bitWidth, $groups groups present, $claimed claimed, $asked values asked"
      // The intact run: both read the values written.
      assert(fromSpark(bytes).toOption.contains(vals.take(asked).toSeq) &&
        fromLm(bytes).toOption.contains(vals.take(asked).toSeq), what)
      (fromSpark(data), fromLm(data)) match {
        case (scala.util.Failure(_), scala.util.Failure(e)) =>
          assert(e.isInstanceOf[DecodeException] && e.getMessage.contains(s"bit-packed run of $claimed groups"),
            s"$what: $e"); rejected += 1
        case (a, b) => fail(s"$what: Spark's reader gave $a, lmspark's $b (both must fail)")
      }
    }
    assert(rejected == 300)
  }
}
