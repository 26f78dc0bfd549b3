package lmspark

/**
 * Reading one file split: deciding per file whether lmspark reads it, and assembling batches.
 *
 * Files:
 *  - `LmParquetFileFormat.scala`: the per-file dispatch between lmspark's reader and Spark's.
 *  - `ScanSettings.scala`: the per-scan settings fixed at planning time.
 *  - `FileReadPlan.scala`: which leaf each requested column reads, judged from the footer.
 *  - `FileBatchReader.scala`: row groups to `ColumnarBatch`es through the column readers.
 */
package object scan
