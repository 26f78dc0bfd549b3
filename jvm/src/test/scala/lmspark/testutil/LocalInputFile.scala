package lmspark.testutil

import java.io.RandomAccessFile
import java.nio.channels.Channels
import java.nio.file.{Files, Path}

import org.apache.parquet.io.{DelegatingSeekableInputStream, InputFile, SeekableInputStream}

/** A local file as a parquet-java `InputFile`, with no Hadoop file system (so no checksum files
  * are consulted). parquet-java has its own since 1.14; the 3.5 line's 1.13 does not. */
final class LocalInputFile(path: Path) extends InputFile {
  override def getLength: Long = Files.size(path)

  override def newStream(): SeekableInputStream = {
    val file = new RandomAccessFile(path.toFile, "r")
    new DelegatingSeekableInputStream(Channels.newInputStream(file.getChannel)) {
      override def getPos: Long = file.getFilePointer
      override def seek(newPos: Long): Unit = file.seek(newPos)
    }
  }

  override def toString: String = path.toString
}
