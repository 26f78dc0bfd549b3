package lmspark.meta

import org.apache.parquet.column.values.bloomfilter.BloomFilter
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.io.SeekableInputStream

import lmspark.io.ChunkContext

/** Reads a chunk's split-block bloom filter with parquet-java, after checking its header (size,
  * algorithm, hash, compression) against the chunk. TODO(meta helper). */
object BloomFilters {
  /** None when the chunk has none; Left(reason) when it is present but unusable. */
  def read(in: SeekableInputStream, chunk: ColumnChunkMetaData, ctx: ChunkContext): Option[Either[String, BloomFilter]] =
    None
}
