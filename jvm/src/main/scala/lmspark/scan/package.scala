package lmspark

/**
 * Reading one file split: deciding per file whether lmspark reads it, and assembling batches.
 *
 * Files:
 *  - `LmParquetFileFormat.scala`: the per-file dispatch between lmspark's reader and Spark's.
 *  - `ScanSettings.scala`: the per-scan settings fixed at planning time.
 *  - `FileReadPlan.scala`: which leaf each requested column reads, judged from the footer.
 *  - `RowGroupPruner.scala`: per row group, what checked metadata proves (statistics, guarantees,
 *    dictionaries, bloom filters, page indexes): skip it, or read it with a residual predicate, a
 *    page-index row selection and the pages to fetch per column ([[RowGroupPlan]]).
 *  - `FileBatchReader.scala`: row groups to `ColumnarBatch`es through the column readers, walking
 *    the row group's selection.
 */
package object scan
