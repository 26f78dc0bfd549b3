package lmspark.testutil

import java.io.EOFException
import java.nio.ByteBuffer

import org.apache.parquet.io.SeekableInputStream

/** A [[SeekableInputStream]] over an in-memory "file", for tests that hand-build file bytes
  * (metadata structures at chosen offsets). Reads past the end raise `EOFException` as files do. */
final class ByteArraySeekableInputStream(bytes: Array[Byte]) extends SeekableInputStream {
  private[this] var pos = 0L

  override def getPos: Long = pos
  override def seek(newPos: Long): Unit = {
    if (newPos < 0) throw new java.io.IOException(s"negative position $newPos")
    pos = newPos
  }
  override def read(): Int = if (pos < bytes.length) { val b = bytes(pos.toInt) & 0xff; pos += 1; b } else -1
  override def read(b: Array[Byte], off: Int, len: Int): Int = {
    if (len == 0) return 0
    if (pos >= bytes.length) return -1
    val n = math.min(len.toLong, bytes.length - pos).toInt
    System.arraycopy(bytes, pos.toInt, b, off, n)
    pos += n
    n
  }
  override def readFully(b: Array[Byte]): Unit = readFully(b, 0, b.length)
  override def readFully(b: Array[Byte], start: Int, len: Int): Unit = {
    if (pos + len > bytes.length) throw new EOFException(s"$len bytes at $pos past the end (${bytes.length})")
    System.arraycopy(bytes, pos.toInt, b, start, len)
    pos += len
  }
  override def read(buf: ByteBuffer): Int = {
    val n = math.min(buf.remaining.toLong, math.max(0L, bytes.length - pos)).toInt
    if (n == 0 && buf.remaining > 0) return -1
    buf.put(bytes, pos.toInt, n)
    pos += n
    n
  }
  override def readFully(buf: ByteBuffer): Unit = {
    val n = buf.remaining
    if (pos + n > bytes.length) throw new EOFException(s"$n bytes at $pos past the end (${bytes.length})")
    buf.put(bytes, pos.toInt, n)
    pos += n
  }
}
