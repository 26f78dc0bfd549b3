package lmspark.column

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.io.SeekableInputStream

import lmspark.decode.Dictionary

/** A chunk's dictionary page read on its own (for dictionary pruning), and whether every data
  * page of the chunk is dictionary-encoded. TODO(meta helper). */
object ChunkDictionary {

  /** True only when the chunk's metadata proves that every data page is dictionary-encoded
    * (encoding stats, or parquet-java's rule on the encodings list when they are absent). */
  def allPagesDictionaryEncoded(chunk: ColumnChunkMetaData): Boolean = false

  /** The decoded dictionary page, reading only its bytes; None when the chunk has none. */
  def read(in: SeekableInputStream, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor,
      filePath: String, verifyChecksums: Boolean): Option[Dictionary] = None
}
