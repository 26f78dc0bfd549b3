package lmspark.decode

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** BYTE_STREAM_SPLIT values of `width` bytes: FLOAT / INT32 (4), DOUBLE / INT64 (8) or
  * FIXED_LEN_BYTE_ARRAY(`width`). The page holds `width` streams of `count` bytes each; byte `s`
  * of value `i` is at `start + s * count + i`, and `count = length / width` (the page's bytes fix
  * it, since v1 pages do not give the non-null count).
  *
  * Reads gather up to `Chunk` values into `scratch` as little-endian
  * (or, for FIXED_LEN_BYTE_ARRAY, plain) values and hand them to the vector with bulk calls;
  * `skip(n)` only moves `index` (O(1)).
  *
  * Invariants: `0 <= index <= count`; `count * width` bytes from `start` are inside the page. */
final class ByteStreamSplitDecoder(width: Int) extends ValuesDecoder {
  require(width > 0, s"BYTE_STREAM_SPLIT width must be positive, was $width")
  /** Values gathered per step: up to 1024, and at most about 1 MiB of scratch for wide FLBA. */
  private[this] val Chunk = math.max(1, math.min(1024, (1 << 20) / width))

  private[this] var bytes: Array[Byte] = _
  private[this] var start: Int = 0
  private[this] var count: Int = 0
  private[this] var index: Int = 0
  private[this] var scratch: Array[Byte] = _

  override def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit = {
    if (offset < 0 || length < 0 || offset.toLong + length > bytes.length)
      throw new DecodeException(s"BYTE_STREAM_SPLIT data range [$offset, ${offset.toLong + length}) outside " +
        s"buffer of ${bytes.length} bytes")
    if (length % width != 0)
      throw new DecodeException(s"BYTE_STREAM_SPLIT data of $length bytes is not a multiple of the value width $width")
    val n = length / width
    if (n > numValues)
      throw new DecodeException(s"BYTE_STREAM_SPLIT data holds $n values of $width bytes, the page at most $numValues")
    this.bytes = bytes
    this.start = offset
    this.count = n
    this.index = 0
  }

  private def need(n: Int): Unit =
    if (n < 0 || n > count - index)
      throw new DecodeException(s"BYTE_STREAM_SPLIT values ended early: need $n values, ${count - index} remain")

  override def skip(n: Int): Unit = { need(n); index += n }

  /** Gathers the next `k` (at most Chunk) values into `scratch[0, k * width)` and moves on. */
  private def gather(k: Int): Array[Byte] = {
    if (scratch == null) scratch = new Array[Byte](Chunk * width)
    val out = scratch
    val b = bytes
    val w = width
    var s = 0
    while (s < w) {
      var src = start + s * count + index
      var dst = s
      val e = src + k
      while (src < e) { out(dst) = b(src); src += 1; dst += w }
      s += 1
    }
    index += k
    out
  }

  private def checkWidth(w: Int, what: String): Unit = if (width != w) unsupported(what)

  /** Runs `f(done, k)` over chunks of `n` values after checking `n`. */
  @inline private def chunks(n: Int)(f: (Int, Int) => Unit): Unit = {
    need(n)
    var done = 0
    while (done < n) {
      val k = math.min(n - done, Chunk)
      f(done, k)
      done += k
    }
  }

  override def readInts(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    checkWidth(4, "INT32")
    chunks(n)((done, k) => v.putIntsLittleEndian(rowId + done, k, gather(k), 0))
  }

  override def readLongs(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    checkWidth(8, "INT64")
    chunks(n)((done, k) => v.putLongsLittleEndian(rowId + done, k, gather(k), 0))
  }

  override def readFloats(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    checkWidth(4, "FLOAT")
    chunks(n)((done, k) => v.putFloatsLittleEndian(rowId + done, k, gather(k), 0))
  }

  override def readDoubles(n: Int, v: WritableColumnVector, rowId: Int): Unit = {
    checkWidth(8, "DOUBLE")
    chunks(n)((done, k) => v.putDoublesLittleEndian(rowId + done, k, gather(k), 0))
  }

  override def readIntArray(n: Int, dst: Array[Int], dstOff: Int): Unit = {
    checkWidth(4, "INT32")
    chunks(n) { (done, k) =>
      val g = gather(k)
      var i = 0
      while (i < k) { dst(dstOff + done + i) = LittleEndian.int32(g, 4 * i); i += 1 }
    }
  }

  override def readLongArray(n: Int, dst: Array[Long], dstOff: Int): Unit = {
    checkWidth(8, "INT64")
    chunks(n) { (done, k) =>
      val g = gather(k)
      var i = 0
      while (i < k) { dst(dstOff + done + i) = LittleEndian.int64(g, 8 * i); i += 1 }
    }
  }

  override def readBinaries(n: Int, v: WritableColumnVector, rowId: Int): Unit =
    chunks(n) { (done, k) =>
      val g = gather(k)
      var i = 0
      while (i < k) { v.putByteArray(rowId + done + i, g, i * width, width); i += 1 }
    }

  override def readBinaryValues(n: Int, sink: BinarySink, rowId: Int): Unit =
    chunks(n) { (done, k) =>
      val g = gather(k)
      var i = 0
      while (i < k) { sink.accept(rowId + done + i, g, i * width, width); i += 1 }
    }
}
