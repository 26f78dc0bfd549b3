package lmspark

/**
 * Reading one file split: deciding per file whether lmspark reads it, and assembling batches.
 *
 * Files:
 *  - `LmParquetFileFormat.scala`: the per-file dispatch between lmspark's reader and Spark's, and the
 *    count of files `ignoreCorruptFiles` skips.
 *  - `ScanSettings.scala`: the per-scan settings fixed at planning time.
 *  - `FileReadPlan.scala`: which leaf each requested column reads, judged from the footer.
 *  - `ChunkSources.scala`: how each column chunk of a split is opened (whole, some pages, past a
 *    dictionary read already), named by the file's row-group index.
 *  - `RowGroupPruner.scala`: per row group, what checked metadata proves (statistics, guarantees,
 *    dictionaries, bloom filters, page indexes): skip it, or read it with a residual predicate, a
 *    page-index row selection and the pages to fetch per column ([[RowGroupPlan]]).
 *  - `LateMaterialization.scala`: what a task learns about its filters (selectivity per column) and
 *    the per-row-group choice between filter-first and decode-whole.
 *  - `FilterFirstPass.scala`: decodes a row group's filtered columns one after the other on the
 *    surviving rows, narrowing the selection with vectorized filters.
 *  - `PredicateCache.scala`: the filtered columns' decoded batches, reused by the output.
 *  - `FileBatchReader.scala`: row groups to `ColumnarBatch`es through the column readers and the
 *    predicate cache, walking the row group's selection.
 *  - `BatchRowWriter.scala`: batches to `UnsafeRow`s, when the scan's consumer takes rows.
 */
package object scan
