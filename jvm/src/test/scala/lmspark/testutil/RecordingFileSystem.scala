package lmspark.testutil

import java.net.URI
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FSDataInputStream, FSInputStream, Path, PositionedReadable, RawLocalFileSystem, Seekable}

/** The local file system under the scheme `recording:`, recording every byte range any reader (Spark's
  * listing, parquet-java's footer reader, lmspark's page reads) reads from every file. Register it with
  * `spark.hadoop.fs.recording.impl` and read `recording://<absolute path>`; the log is global (tests run
  * Spark in local mode, one JVM), so a suite clears it before each query it measures. */
final class RecordingFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("recording:///")
  override def getScheme: String = "recording"

  override def open(f: Path, bufferSize: Int): FSDataInputStream = {
    val inner = super.open(f, bufferSize)
    new FSDataInputStream(new RecordingFileSystem.Recording(pathToFile(f).getAbsolutePath, inner))
  }
}

object RecordingFileSystem {
  /** One read: `length` bytes at `offset` of the file at local path `file`. */
  final case class Read(file: String, offset: Long, length: Int) {
    def end: Long = offset + length
  }

  private val log = new ConcurrentLinkedQueue[Read]()

  def clear(): Unit = log.clear()

  /** Reads of the local file `file` since the last `clear`, in order. */
  def reads(file: String): Seq[Read] = log.asScala.filter(_.file == file).toSeq

  def conf: Map[String, String] = Map(
    "spark.hadoop.fs.recording.impl" -> classOf[RecordingFileSystem].getName,
    "spark.hadoop.fs.recording.impl.disable.cache" -> "true")

  private final class Recording(file: String, in: FSDataInputStream) extends FSInputStream {
    override def seek(pos: Long): Unit = in.seek(pos)
    override def getPos: Long = in.getPos
    override def seekToNewSource(targetPos: Long): Boolean = false
    override def read(): Int = {
      val at = in.getPos
      val b = in.read()
      if (b >= 0) log.add(Read(file, at, 1))
      b
    }
    override def read(b: Array[Byte], off: Int, len: Int): Int = {
      val at = in.getPos
      val n = in.read(b, off, len)
      if (n > 0) log.add(Read(file, at, n))
      n
    }
    override def read(position: Long, b: Array[Byte], off: Int, len: Int): Int = {
      val n = in.read(position, b, off, len)
      if (n > 0) log.add(Read(file, position, n))
      n
    }
    override def available(): Int = in.available()
    override def close(): Unit = in.close()
  }
}
