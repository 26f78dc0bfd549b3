package lmspark.testutil

import java.nio.ByteBuffer

import scala.collection.mutable.ArrayBuffer

import org.apache.parquet.io.SeekableInputStream

/** A [[SeekableInputStream]] that passes every call to `in` and records each read as a byte range
  * `(offset, length)` of the file (only bytes actually returned), so tests can check which bytes a
  * reader fetched. Not thread-safe. */
final class RecordingInputStream(in: SeekableInputStream) extends SeekableInputStream {
  private[this] val log = ArrayBuffer.empty[(Long, Int)]

  /** Every read so far, in order. */
  def reads: Seq[(Long, Int)] = log.toSeq

  /** Total bytes read so far. */
  def bytesRead: Long = log.iterator.map(_._2.toLong).sum

  def clear(): Unit = log.clear()

  /** Whether some byte of `[from, until)` was read. */
  def touched(from: Long, until: Long): Boolean = log.exists { case (o, n) => o < until && from < o + n }

  private def record(at: Long, n: Int): Unit = if (n > 0) log += ((at, n))

  override def getPos: Long = in.getPos
  override def seek(newPos: Long): Unit = in.seek(newPos)

  override def read(): Int = {
    val at = in.getPos
    val b = in.read()
    if (b >= 0) record(at, 1)
    b
  }

  override def read(b: Array[Byte], off: Int, len: Int): Int = {
    val at = in.getPos
    val n = in.read(b, off, len)
    record(at, n)
    n
  }

  override def readFully(bytes: Array[Byte]): Unit = readFully(bytes, 0, bytes.length)

  override def readFully(bytes: Array[Byte], start: Int, len: Int): Unit = {
    val at = in.getPos
    in.readFully(bytes, start, len)
    record(at, len)
  }

  override def read(buf: ByteBuffer): Int = {
    val at = in.getPos
    val n = in.read(buf)
    record(at, n)
    n
  }

  override def readFully(buf: ByteBuffer): Unit = {
    val at = in.getPos
    val n = buf.remaining
    in.readFully(buf)
    record(at, n)
  }

  override def close(): Unit = in.close()
}
