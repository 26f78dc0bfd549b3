package lmspark.decode

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** PLAIN decoders: bulk reads, skips, and bounds. */
class PlainDecodersSuite extends AnyFunSuite {

  test("fixed width: ints and doubles with skips, then a clean error at the end") {
    val bb = ByteBuffer.allocate(2 + 40).order(ByteOrder.LITTLE_ENDIAN)
    bb.position(2)
    for (i <- 0 until 10) bb.putInt(i * 1000 - 5000)
    val dec = new PlainFixedWidthDecoder(4)
    dec.init(bb.array, 2, 40, 10)
    val v = new OnHeapColumnVector(10, IntegerType)
    dec.skip(3)
    dec.readInts(5, v, 1)
    assert((1 to 5).map(v.getInt) == (3 until 8).map(_ * 1000 - 5000))
    val e = intercept[DecodeException](dec.readInts(3, v, 0))
    assert(e.getMessage.contains("ended early"))
    v.close()
  }

  test("byte arrays: lengths are validated") {
    val bb = ByteBuffer.allocate(4 + 3 + 4 + 0 + 4).order(ByteOrder.LITTLE_ENDIAN)
    bb.putInt(3).put("abc".getBytes).putInt(0).putInt(100)
    val dec = new PlainByteArrayDecoder
    dec.init(bb.array, 0, bb.capacity, 3)
    val v = new OnHeapColumnVector(3, StringType)
    dec.readBinaries(2, v, 0)
    assert(v.getUTF8String(0).toString == "abc" && v.getUTF8String(1).toString == "")
    assert(intercept[DecodeException](dec.skip(1)).getMessage.contains("runs past"))
    v.close()
  }

  test("booleans: bit order and skips") {
    val bytes = Array[Byte](0x05, 0x80.toByte) // bits: 1,0,1,0,0,0,0,0, 0,0,0,0,0,0,0,1
    val dec = new PlainBooleanDecoder
    dec.init(bytes, 0, 2, 16)
    val v = new OnHeapColumnVector(16, BooleanType)
    dec.readBooleans(3, v, 0)
    dec.skip(12)
    dec.readBooleans(1, v, 3)
    assert((0 until 4).map(v.getBoolean) == Seq(true, false, true, true))
    assertThrows[DecodeException](dec.readBooleans(1, v, 0))
    v.close()
  }
}
