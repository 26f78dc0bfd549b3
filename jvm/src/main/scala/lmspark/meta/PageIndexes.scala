package lmspark.meta

import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.internal.column.columnindex.{ColumnIndex, OffsetIndex}
import org.apache.parquet.io.SeekableInputStream

import lmspark.io.ChunkContext
import lmspark.selection.PageLocations

/** A chunk's page index as read from the file (either part may be absent). */
final case class RawPageIndex(columnIndex: Option[ColumnIndex], offsetIndex: Option[OffsetIndex])

/** Reads ColumnIndex / OffsetIndex structures with parquet-java and checks the offset index's
  * structure against the chunk. TODO(meta helper). */
object PageIndexes {

  /** The chunk's page index; an unreadable one is absent (with the reason in `Left`). */
  def read(in: SeekableInputStream, chunk: ColumnChunkMetaData, ctx: ChunkContext): Either[String, RawPageIndex] =
    Right(RawPageIndex(None, None))

  /** The offset index as [[PageLocations]] when it is consistent with the chunk (first row 0, rows
    * and offsets increasing, pages contiguous and inside the chunk's byte range, first page at the
    * chunk's first data page offset); otherwise why it is not. */
  def locations(oi: OffsetIndex, chunk: ColumnChunkMetaData, rowCount: Long): Either[String, PageLocations] =
    Left("not implemented")
}
