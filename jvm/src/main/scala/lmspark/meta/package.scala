package lmspark

/**
 * File metadata access through parquet-java: footers, page indexes and bloom filters, each checked
 * before it is trusted (an unusable structure is a `Left` with the reason, never an exception).
 * Converting their values to Spark's is `lmspark.column.SparkValues`'s job.
 *
 * Files:
 *  - `FooterReader.scala`: opens a file and reads the footer of one split's row groups.
 *  - `FooterChecks.scala`: the structural fields of those row groups (chunk ranges, counts),
 *    checked before use.
 *  - `PageIndexes.scala`: a chunk's column / offset index, and the offset index checked against the
 *    chunk as `lmspark.selection.PageLocations`.
 *  - `BloomFilters.scala`: a chunk's split-block bloom filter, after checking its header.
 */
package object meta
