package lmspark.io

import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.io.SeekableInputStream

/** Where one column chunk is read from and how: the file's stream (shared by the file's columns;
  * every read positions it itself), the chunk's footer metadata, the context that names it in
  * errors, whether page CRCs are verified, the window size ([[PageSource.windowFor]]), and
  * `resumeAt`: when non-negative, the file offset just past the chunk's dictionary page, which the
  * caller has read and decoded already ([[lmspark.column.ChunkDictionary]]), so the walk starts
  * there and the dictionary's bytes are not read again. */
final case class ChunkInput(
    in: SeekableInputStream,
    chunk: ColumnChunkMetaData,
    context: ChunkContext,
    verifyChecksums: Boolean = false,
    windowBytes: Int = PageSource.DefaultWindowBytes,
    resumeAt: Long = -1L) {
  require(windowBytes > 0, s"window of $windowBytes bytes")
}
