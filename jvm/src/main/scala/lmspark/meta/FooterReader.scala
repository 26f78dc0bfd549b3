package lmspark.meta

import java.io.{FileNotFoundException, IOException}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.ParquetMetadata
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.io.SeekableInputStream

import lmspark.column.ParquetDecodeException

/** An open Parquet file: its input stream and the footer of the row groups in one split. */
final class OpenFile(val path: Path, val stream: SeekableInputStream, val footer: ParquetMetadata)
  extends AutoCloseable {
  override def close(): Unit = stream.close()
}

/**
 * Opens a file and reads its footer with parquet-java, keeping only the row groups whose midpoint
 * falls in the split `[start, start + length)`, as Spark's reader does. A footer that cannot be
 * read gives an `IOException` naming the file; a missing file stays a `FileNotFoundException`, so
 * that `ignoreMissingFiles` works. The split's row groups are then checked by [[FooterChecks]]
 * (a [[ParquetDecodeException]] naming file, row group, column and field).
 */
object FooterReader {
  def open(conf: Configuration, path: Path, fileSize: Long, modificationTime: Long,
      start: Long, length: Long): OpenFile = {
    val status = new FileStatus(fileSize, false, 0, 0L, modificationTime, path)
    val inputFile = HadoopInputFile.fromStatus(status, conf)
    val stream = inputFile.newStream()
    try {
      val options = HadoopReadOptions.builder(conf, path).withRange(start, start + length).build()
      val footer = ParquetFileReader.readFooter(inputFile, options, stream)
      FooterChecks.check(footer, path.toString, fileSize)
      new OpenFile(path, stream, footer)
    } catch {
      case e: FileNotFoundException => stream.close(); throw e
      case e: ParquetDecodeException => stream.close(); throw e
      case e: Exception =>
        stream.close()
        throw new IOException(s"Could not read the Parquet footer of $path: ${e.getMessage}", e)
    }
  }
}
