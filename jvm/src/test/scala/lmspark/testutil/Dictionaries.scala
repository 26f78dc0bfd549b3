package lmspark.testutil

import java.nio.{ByteBuffer, ByteOrder}

import lmspark.decode._

/** Fixed-width dictionaries built from arrays of values (over the PLAIN page bytes written here),
  * and their entries read back as sequences, for tests that start from values rather than pages. */
object Dictionaries {

  /** `n` little-endian values of `width` bytes, value `i` written by `put(buffer, i)`. */
  private def page(n: Int, width: Int)(put: (ByteBuffer, Int) => Unit): Array[Byte] = {
    val b = ByteBuffer.allocate(n * width).order(ByteOrder.LITTLE_ENDIAN)
    for (i <- 0 until n) put(b, i)
    b.array()
  }

  def ints(values: Array[Int]): IntDictionary =
    new IntDictionary(page(values.length, 4)((b, i) => b.putInt(values(i))), 0, values.length)
  def longs(values: Array[Long]): LongDictionary =
    new LongDictionary(page(values.length, 8)((b, i) => b.putLong(values(i))), 0, values.length)
  def floats(values: Array[Float]): FloatDictionary =
    new FloatDictionary(page(values.length, 4)((b, i) => b.putFloat(values(i))), 0, values.length)
  def doubles(values: Array[Double]): DoubleDictionary =
    new DoubleDictionary(page(values.length, 8)((b, i) => b.putDouble(values(i))), 0, values.length)

  def entries(d: IntDictionary): IndexedSeq[Int] = (0 until d.size).map(d.value)
  def entries(d: LongDictionary): IndexedSeq[Long] = (0 until d.size).map(d.value)
}
