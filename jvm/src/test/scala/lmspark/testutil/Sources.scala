package lmspark.testutil

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.io.SeekableInputStream

import lmspark.column.ChunkDictionary
import lmspark.decode.Dictionary
import lmspark.io.{ChunkContext, ChunkInput, PageSource}
import lmspark.selection.PageLocations

/** Page sources and dictionaries of one chunk for tests that read chunks directly: the chunk is
  * named by its path, its leaf and its row-group ordinal as parquet-java gives it (the files tests
  * write number their row groups). */
object Sources {

  def input(in: SeekableInputStream, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor, path: String,
      verifyChecksums: Boolean = false, windowBytes: Int = PageSource.DefaultWindowBytes): ChunkInput =
    ChunkInput(in, chunk, new ChunkContext(path, descriptor.getPath.mkString("."), chunk.getRowGroupOrdinal),
      verifyChecksums, windowBytes)

  def forChunk(in: SeekableInputStream, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor, path: String,
      verifyChecksums: Boolean = false, windowBytes: Int = PageSource.DefaultWindowBytes): PageSource =
    PageSource.forChunk(input(in, chunk, descriptor, path, verifyChecksums, windowBytes))

  def forPages(in: SeekableInputStream, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor, path: String,
      verifyChecksums: Boolean, locations: PageLocations, kept: Array[Int], maxGap: Long,
      windowBytes: Int = PageSource.DefaultWindowBytes): PageSource =
    PageSource.forPages(input(in, chunk, descriptor, path, verifyChecksums, windowBytes),
      descriptor.getMaxRepetitionLevel == 0, locations, kept, maxGap)

  /** The chunk's dictionary page, decoded, and the bytes read for it. */
  def dictionaryCounted(in: SeekableInputStream, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor,
      path: String, verifyChecksums: Boolean): (Option[Dictionary], Long) = {
    val (loaded, bytes) = ChunkDictionary.read(input(in, chunk, descriptor, path, verifyChecksums), descriptor.getPrimitiveType)
    (loaded.map(_.dictionary), bytes)
  }

  def dictionary(in: SeekableInputStream, chunk: ColumnChunkMetaData, descriptor: ColumnDescriptor, path: String,
      verifyChecksums: Boolean): Option[Dictionary] =
    dictionaryCounted(in, chunk, descriptor, path, verifyChecksums)._1
}
