package lmspark

/**
 * File metadata access through parquet-java: footers, page indexes and bloom filters, each checked
 * before it is trusted (an unusable structure is a `Left` with the reason, never an exception).
 * Converting their values to Spark's is `lmspark.column.SparkValues`'s job.
 *
 * Files:
 *  - `FooterReader.scala`: opens a file, reads its footer (one speculative tail read), and keeps the
 *    row groups of one split (`OpenFile`, with the file's index of each).
 *  - `RowGroupTable.scala`: the row-group table of the whole file, checked in every split so that
 *    each row group holding rows is read by exactly one split; the midpoint rule.
 *  - `FooterChecks.scala`: the footer fields of the column chunks a scan reads (ranges, counts),
 *    checked before use.
 *  - `PageIndexes.scala`: a chunk's column / offset index, and the offset index checked against the
 *    chunk as `lmspark.selection.PageLocations`.
 *  - `BloomFilters.scala`: a chunk's split-block bloom filter, after checking its header.
 *  - `MetadataCache.scala`: the executor-wide, byte-bounded LRU cache of parsed footers, page
 *    indexes, bloom filter bitsets and dictionaries, keyed by path, length and modification time.
 */
package object meta
