package lmspark.meta

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData, ParquetMetadata}
import org.apache.parquet.schema.MessageType

import lmspark.column.ParquetDecodeException
import lmspark.io.ChunkContext

/** Checks the structural fields of a footer's row groups before any of them is used to seek or to
  * size an allocation: row counts are not negative; every column chunk's byte range
  * `[starting pos, + total_compressed_size)` lies after the leading magic and before the footer
  * (so a chunk buffer is bounded by the file's length); its first data page offset lies inside that
  * range; its sizes and `num_values` are not negative; and for a flat column (max repetition level
  * 0) `num_values` equals the row group's row count, as every value is one row. The chunks of a
  * row group without rows are not checked: nothing is read from them. A violation is a
  * [[ParquetDecodeException]] naming the file, the row group, the column and the footer field (no
  * page applies). Pure: reads nothing. */
object FooterChecks {

  /** Length of `PAR1` (before the first chunk) and of the footer length + `PAR1` (after the footer). */
  private val Magic = 4L
  private val Tail = 8L

  def check(footer: ParquetMetadata, path: String, fileSize: Long): Unit = {
    val schema = footer.getFileMetaData.getSchema
    footer.getBlocks.asScala.foreach(block => checkBlock(block, schema, path, fileSize))
  }

  private def checkBlock(block: BlockMetaData, schema: MessageType, path: String, fileSize: Long): Unit = {
    val rows = block.getRowCount
    val columns = block.getColumns.asScala
    val rg = if (columns.nonEmpty) columns.head.getRowGroupOrdinal else block.getOrdinal
    if (rows < 0)
      throw new ParquetDecodeException(s"footer field num_rows of row group $rg is negative ($rows) (file $path, " +
        s"row group $rg)")
    // A row group without rows is never read, and writers leave its chunks' offsets as they like
    // (pyarrow writes 0 for them; parquet-java and Spark read such files).
    if (rows > 0) columns.foreach(c => checkChunk(c, rows, schema, path, fileSize))
  }

  private def checkChunk(c: ColumnChunkMetaData, rows: Long, schema: MessageType, path: String, fileSize: Long): Unit = {
    val ctx = new ChunkContext(path, c.getPath.toDotString, c.getRowGroupOrdinal)
    def bad(what: String): Nothing = throw ctx.error(s"malformed footer: $what (page: not applicable)")
    val start = c.getStartingPos
    val size = c.getTotalSize
    val end = start + size
    if (size < 0) bad(s"total_compressed_size $size is negative")
    if (c.getTotalUncompressedSize < 0) bad(s"total_uncompressed_size ${c.getTotalUncompressedSize} is negative")
    if (start < Magic || end > fileSize - Tail || end < start)
      bad(s"the column chunk [$start, $end) (from dictionary_page_offset ${c.getDictionaryPageOffset}, " +
        s"data_page_offset ${c.getFirstDataPageOffset} and total_compressed_size $size) does not lie between the " +
        s"leading magic and the footer of the $fileSize-byte file")
    val first = c.getFirstDataPageOffset
    if (size > 0 && (first < start || first >= end))
      bad(s"data_page_offset $first lies outside the column chunk [$start, $end)")
    val values = c.getValueCount
    if (values < 0) bad(s"num_values $values is negative")
    val maxRepetition =
      try schema.getColumnDescription(c.getPath.toArray).getMaxRepetitionLevel
      catch { case NonFatal(_) => -1 } // a chunk the schema does not name: the read plan reports it
    if (maxRepetition == 0 && values != rows)
      bad(s"num_values $values of a flat column differs from the row group's num_rows $rows")
  }
}
