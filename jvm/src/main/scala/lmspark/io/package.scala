package lmspark

/** Page source layer: reading one column chunk's bytes and cutting them into pages.
  *
  * Owns the chunk bytes, page-header parsing (parquet-java's thrift classes, size-bounded), page
  * CRC checks and decompression. Knows nothing of value encodings or Spark vectors.
  *
  * Files:
  *  - `ChunkContext.scala`: file path / column path / row group of a chunk, for error messages.
  *  - `ChunkInput.scala`: where and how one chunk is read (stream, metadata, context, window, and
  *    where to resume past a dictionary page read already).
  *  - `BoundedThrift.scala`: thrift structures (page headers, the footer) parsed with a size limit.
  *  - `Decompressors.scala`: the one codec dispatch (SNAPPY, GZIP, ZSTD, LZ4, LZ4_RAW, BROTLI).
  *  - `Page.scala`: the decompressed page model (dictionary page, data page v1 and v2).
  *  - `PageSource.scala`: the page iterator over one chunk (header peek, CRC check, read, skip), or
  *    over only some of its pages (`forPages`: byte ranges of the kept pages, coalesced; pruned
  *    pages yielded with their offset-index row count, to be skipped), or over its dictionary region
  *    alone (`forDictionary`). It reads the chunk through a
  *    bounded window (a few MiB, or one larger page) refilled as pages are consumed, so what a
  *    column holds does not grow with the row group.
  */
package object io
