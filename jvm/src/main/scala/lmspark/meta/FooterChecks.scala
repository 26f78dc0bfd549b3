package lmspark.meta

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, ColumnPath, ParquetMetadata}

import lmspark.io.ChunkContext

/** Checks the footer fields of the column chunks a scan will read, before any of them is used to
  * seek or to size an allocation: for each of the split's row groups holding rows and each leaf
  * read (projected or filtered), the row group has exactly one chunk of that leaf; the chunk's byte
  * range `[starting pos, + total_compressed_size)` lies after the leading magic and before the
  * footer (so a chunk buffer is bounded by the file's length); its first data page offset lies
  * inside that range; its sizes and `num_values` are not negative; and for a flat leaf (max
  * repetition level 0) `num_values` equals the row group's row count, as every value is one row; for
  * a repeated leaf it is at least the row count (every row has at least one level entry).
  *
  * Chunks of other columns are not checked: a chunk that is never touched cannot hurt the answer,
  * and Spark answers such queries. Nor are the chunks of a row group without rows: nothing is read
  * from them, and writers leave their offsets as they like (pyarrow writes 0). The row groups
  * themselves are checked for the whole file by [[RowGroupTable]]. A violation is a
  * [[lmspark.column.ParquetDecodeException]] naming the file, the row group (the file's index), the
  * column and the footer field (no page applies). Pure: reads nothing. */
object FooterChecks {

  /** A file's length and where its data ends (the footer's first byte). */
  final case class FileBounds(fileSize: Long, dataEnd: Long)

  /** Length of `PAR1` (before the first chunk). */
  private val Magic = 4L

  def check(file: OpenFile, leaves: Seq[ColumnDescriptor]): Unit =
    check(file.path.toString, file.footer, FileBounds(file.fileSize, file.dataEnd), file.rowGroupIndex, leaves)

  /** The same checks on a split's footer alone (at planning, before any stream is open):
    * `rowGroupIndex` gives the file's index of the split's `i`-th row group. */
  def check(path: String, footer: ParquetMetadata, bounds: FileBounds, rowGroupIndex: Int => Int,
      leaves: Seq[ColumnDescriptor]): Unit = {
    val blocks = footer.getBlocks
    var i = 0
    while (i < blocks.size) {
      val block = blocks.get(i)
      val rows = block.getRowCount
      if (rows > 0) leaves.foreach { leaf =>
        val column = ColumnPath.get(leaf.getPath: _*)
        val ctx = new ChunkContext(path, column.toDotString, rowGroupIndex(i))
        block.getColumns.asScala.filter(_.getPath == column).toList match {
          case c :: Nil => checkChunk(c, leaf, rows, bounds, ctx)
          case found => throw ctx.error(s"malformed footer: the row group has ${found.size} chunks of the column " +
            "(page: not applicable)")
        }
      }
      i += 1
    }
  }

  private def checkChunk(c: ColumnChunkMetaData, leaf: ColumnDescriptor, rows: Long, file: FileBounds,
      ctx: ChunkContext): Unit = {
    def bad(what: String): Nothing = throw ctx.error(s"malformed footer: $what (page: not applicable)")
    val start = c.getStartingPos
    val size = c.getTotalSize
    val end = start + size
    if (size < 0) bad(s"total_compressed_size $size is negative")
    if (c.getTotalUncompressedSize < 0) bad(s"total_uncompressed_size ${c.getTotalUncompressedSize} is negative")
    if (start < Magic || end > file.dataEnd || end < start)
      bad(s"the column chunk [$start, $end) (from dictionary_page_offset ${c.getDictionaryPageOffset}, " +
        s"data_page_offset ${c.getFirstDataPageOffset} and total_compressed_size $size) does not lie between the " +
        s"leading magic and the footer (at ${file.dataEnd}) of the ${file.fileSize}-byte file")
    val first = c.getFirstDataPageOffset
    if (size > 0 && (first < start || first >= end))
      bad(s"data_page_offset $first lies outside the column chunk [$start, $end)")
    val values = c.getValueCount
    if (values < 0) bad(s"num_values $values is negative")
    if (leaf.getMaxRepetitionLevel == 0 && values != rows)
      bad(s"num_values $values of a flat column differs from the row group's num_rows $rows")
    if (leaf.getMaxRepetitionLevel > 0 && values < rows)
      bad(s"num_values $values of a repeated column is below the row group's num_rows $rows (every row has a value entry)")
  }
}
