package lmspark.testutil

import java.io.{BufferedOutputStream, FileOutputStream}
import java.nio.file.{Files, Path}

import org.apache.parquet.io.{OutputFile, PositionOutputStream}

/** A local file as a parquet-java `OutputFile`, with no Hadoop file system (so no checksum files
  * are written). parquet-java has its own since 1.14; the 3.5 line's 1.13 does not. */
final class LocalOutputFile(path: Path) extends OutputFile {
  override def create(blockSizeHint: Long): PositionOutputStream = {
    if (Files.exists(path)) throw new java.nio.file.FileAlreadyExistsException(path.toString)
    createOrOverwrite(blockSizeHint)
  }

  override def createOrOverwrite(blockSizeHint: Long): PositionOutputStream = new PositionOutputStream {
    private val out = new BufferedOutputStream(new FileOutputStream(path.toFile), 1 << 16)
    private var pos = 0L
    override def getPos: Long = pos
    override def write(b: Int): Unit = { out.write(b); pos += 1 }
    override def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); pos += len }
    override def flush(): Unit = out.flush()
    override def close(): Unit = out.close()
  }

  override def supportsBlockSize(): Boolean = false
  override def defaultBlockSize(): Long = 0L
  override def toString: String = path.toString
}
