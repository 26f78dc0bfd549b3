package lmspark

/** Column readers: the page loop for one flat leaf of one row group, writing Spark vectors.
  *
  * Owns the pairing of Parquet physical/logical types with Spark types (all of it in
  * [[ColumnReaderFactory]]), definition levels, dictionary pages (including chunks that fall back
  * from dictionary to plain pages mid-chunk), data pages v1 and v2, row-level skipping, batches
  * assembled by appending reads, and pages removed by page pruning (skipped whole).
  *
  * Files:
  *  - `ColumnReader.scala`: the public reader trait, [[ColumnReadOptions]] and [[RebaseCheck]].
  *  - `ParquetDecodeException.scala`: the error for malformed or unexpected input, with context.
  *  - `ColumnReaderFactory.scala`: the one place that does type dispatch (`unsupportedReason`, `create`).
  *  - `FlatColumnReader.scala`: the page loop for max repetition level 0, max definition level 0 or 1.
  *  - `PageDecoders.scala`: a chunk's non-dictionary value decoders, one per encoding, built on first use.
  *  - `VectorWriter.scala`: physical values -> Spark vector representation (dates, timestamps,
  *    narrow ints, decimals), one writer per Parquet x Spark type pair; `ConvertingWriters` holds
  *    Spark's read-side conversions (widenings, unsigned ints, INT96, LEGACY rebase, rescaled decimals).
  *  - `SparkRebase.scala`: the only calls into Spark-private datetime helpers (rebase, INT96, time zones).
  *  - `SparkDictionary.scala`: a chunk's dictionary as Spark vector dictionary entries (lazy decoding).
  *  - `DictionaryPreservation.scala`: which batches stay dictionary-encoded, and undoing it mid-batch.
  *  - `SparkValues.scala`: a column's metadata (statistics, page index bounds, dictionary entries,
  *    bloom filter probes) as Catalyst values, converted through the column's own writer and checked.
  *  - `ChunkDictionary.scala`: a chunk's dictionary page read on its own, and whether every data
  *    page is dictionary-encoded (dictionary pruning).
  */
package object column
