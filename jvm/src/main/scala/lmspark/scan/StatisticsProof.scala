package lmspark.scan

import scala.collection.mutable

import org.apache.parquet.hadoop.metadata.BlockMetaData

import lmspark.column.SparkValues
import lmspark.predicate.{ColumnStats, Guarantees, Predicate}

/**
 * The first and cheapest proof of row-group pruning, on its own: what a row group's footer
 * statistics (checked by [[SparkValues]]; unusable ones ignored) prove about the scan's predicate.
 * It needs the footer alone, no byte of the file besides, so tasks use it through
 * [[RowGroupPruner]] and the driver uses it at planning ([[SplitPruner]]) with the same answer.
 *
 * Owns the per-column value converters of one file's plan (not thread-safe: one per reader).
 * Invariant: `skip` says a row group is skipped only when its statistics (or the guarantee they give)
 * simplify the predicate to `False`, with the flags `pruneStatistics` / `pruneGuarantees`.
 */
final class StatisticsProof(plan: FileReadPlan, predicate: Predicate, settings: ScanSettings) {
  private[this] val predicateColumns: Array[Int] = Guarantees.columns(predicate).toArray.sorted
  private[this] val values = mutable.Map.empty[Int, Option[SparkValues]]

  /** Whether statistics may prune at all (a predicate, and statistics or guarantees on). */
  def enabled: Boolean = predicate != Predicate.True && (settings.pruneStatistics || settings.pruneGuarantees)

  /** Column `col`'s value converter, if it is a leaf the file has and lmspark can compare. */
  def sparkValues(col: Int): Option[SparkValues] = values.getOrElseUpdate(col, plan.columns(col) match {
    case ColumnPlan.Present(descriptor, sparkType, options) => SparkValues.forColumn(descriptor, sparkType, options)
    case _ => None
  })

  /** Checked statistics of the predicate's columns in `block`; `ignored` is called for each chunk
    * whose statistics fail the checks. */
  def stats(block: BlockMetaData, ignored: () => Unit = () => ()): Map[Int, ColumnStats] =
    predicateColumns.iterator.flatMap(col => columnStats(block, col, ignored).map(col -> _)).toMap

  /** Why `block` is skipped whole by its statistics (`Statistics`, or `Guarantee` with statistics
    * pruning off), if it is. */
  def skip(block: BlockMetaData): Option[PruneReason] =
    if (enabled && Guarantees.simplify(predicate, stats(block).get).predicate == Predicate.False)
      Some(if (settings.pruneStatistics) PruneReason.Statistics else PruneReason.Guarantee)
    else None

  /** Checked statistics of column `col` (a column the file lacks is all NULL). */
  private def columnStats(block: BlockMetaData, col: Int, ignored: () => Unit): Option[ColumnStats] = {
    val rowCount = block.getRowCount
    plan.columns(col) match {
      case ColumnPlan.Missing => Some(ColumnStats(None, None, Some(rowCount), rowCount))
      case _: ColumnPlan.Nested | ColumnPlan.RowIndex | ColumnPlan.RowMark => None // never a predicate column
      case ColumnPlan.Present(descriptor, _, _) =>
        val s: org.apache.parquet.column.statistics.Statistics[_] = FileReadPlan.chunkOf(block, descriptor).getStatistics
        if (s == null || s.isEmpty) None
        else sparkValues(col).flatMap { sv =>
          sv.statistics(s, rowCount) match {
            case Right(cs) => Some(cs)
            case Left(_) => ignored(); None
          }
        }
    }
  }
}
