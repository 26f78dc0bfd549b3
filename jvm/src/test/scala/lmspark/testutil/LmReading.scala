package lmspark.testutil

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, ParquetMetadata}
import org.apache.parquet.io.SeekableInputStream
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.DataType

import lmspark.column.{ColumnReadOptions, ColumnReader, ColumnReaderFactory}
import lmspark.io.PageSource

/** Opens a file the way the scan layer will: footer from parquet-java, then our PageSource and
  * ColumnReaderFactory per chunk. */
final class LmFile(val path: Path) extends AutoCloseable {
  val footer: ParquetMetadata = {
    val r = ParquetFileReader.open(new LocalInputFile(path))
    try r.getFooter finally r.close()
  }
  val in: SeekableInputStream = new LocalInputFile(path).newStream()

  def descriptor(column: Int): ColumnDescriptor = footer.getFileMetaData.getSchema.getColumns.get(column)
  def chunk(rowGroup: Int, column: Int): ColumnChunkMetaData = footer.getBlocks.get(rowGroup).getColumns.get(column)
  def rowCount(rowGroup: Int): Long = footer.getBlocks.get(rowGroup).getRowCount
  def rowGroups: Int = footer.getBlocks.size
  def columnIndex(name: String): Int =
    footer.getFileMetaData.getSchema.getColumns.asScala.indexWhere(_.getPath.mkString(".") == name)

  def pages(rowGroup: Int, column: Int): PageSource =
    Sources.forChunk(in, chunk(rowGroup, column), descriptor(column), path.toString)

  def reader(rowGroup: Int, column: Int, sparkType: DataType,
      options: ColumnReadOptions = ColumnReadOptions()): ColumnReader =
    ColumnReaderFactory.create(descriptor(column), sparkType, pages(rowGroup, column), rowCount(rowGroup), options)

  override def close(): Unit = in.close()
}

object LmReading {

  /** Reads `rows` rows in batches of `batch` and returns them as TestTypes.fromVector values. */
  def readAll(reader: ColumnReader, sparkType: DataType, rows: Int, batch: Int): IndexedSeq[Any] = {
    val v = new OnHeapColumnVector(batch, sparkType)
    try {
      val out = IndexedSeq.newBuilder[Any]
      var done = 0
      while (done < rows) {
        val n = math.min(batch, rows - done)
        v.reset()
        reader.read(n, v)
        for (i <- 0 until n) out += TestTypes.fromVector(sparkType, v, i)
        done += n
      }
      out.result()
    } finally v.close()
  }
}
