package lmspark.scan

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.internal.Logging
import org.apache.spark.sql.execution.datasources.PartitionedFile

import lmspark.meta.{FooterChecks, FooterReader}
import lmspark.predicate.{ColumnRef, ColumnStats, Guarantees, Predicate, Term}

/** One row group of a file split as a split of its own: `split` reads that row group alone; its
  * rows are the parent split's rows `[firstRow, firstRow + rowCount)` (ordinals counted over the
  * parent's row groups in file order, as [[WantedRows]] counts them), and the file's rows from
  * `fileRow` (`_metadata.row_index`); `stats` are the checked statistics of the column the slices
  * were made for, if usable. */
final case class RowGroupSlice(split: PartitionedFile, firstRow: Long, rowCount: Long, stats: Option[ColumnStats],
    fileRow: Long)

/**
 * The row groups of one file split, each as a split of its own (`[midpoint, midpoint + 1)`, which
 * the midpoint rule gives that row group alone), with one column's checked statistics: so that a
 * top-k's first pass can read the row groups most likely to hold its rows first and leave those
 * whose statistics prove they hold none.
 *
 * Invariant: `slices` are the split's row groups that hold rows, in file order, each reading
 * exactly one row group; [[noneMatch]] is true only when the statistics prove no row of the slice
 * satisfies the predicate, with statistics or guarantees pruning on.
 */
final class SplitSlices private (val slices: IndexedSeq[RowGroupSlice], settings: ScanSettings) {

  /** Whether `slice`'s statistics prove that none of its rows satisfies `predicate` (a predicate on
    * the slices' column alone). */
  def noneMatch(slice: RowGroupSlice, predicate: Predicate): Boolean = predicate == Predicate.False ||
    (settings.pruneStatistics || settings.pruneGuarantees) && slice.stats.isDefined &&
      Guarantees.simplify(predicate, _ => slice.stats).predicate == Predicate.False
}

object SplitSlices extends Logging {

  /**
   * The row groups of `split` as slices, with the checked statistics of the requested column at
   * `column` (`settings.requiredSchema`); None when statistics and guarantees pruning are both off,
   * when the footer cannot be had through the metadata cache (with the cache off, every slice would
   * read the footer again), lmspark would not read the file, a footer check fails (the split's own
   * read then raises it), or two row groups share a midpoint (no slice would read one alone).
   */
  def of(split: PartitionedFile, conf: Configuration, settings: ScanSettings, column: Int): Option[SplitSlices] = {
    if (settings.open.metadataCacheMaxBytes <= 0 || !(settings.pruneStatistics || settings.pruneGuarantees)) return None
    val path = split.toPath
    try {
      val f = FooterReader.fileFooter(conf, path, split.fileSize, split.modificationTime, settings.open)
      FileReadPlan.build(f.footer, settings.fileSchema, settings, f.unknownLogicalTypes).toOption.flatMap { plan =>
        FooterChecks.check(path.toString, f.footer, FooterChecks.FileBounds(split.fileSize, f.footerStart), f.index,
          plan.leaves)
        val field = settings.requiredSchema(column)
        val proof = new StatisticsProof(plan, Predicate.IsNotNull(Term(ColumnRef(column, field.name, field.dataType))), settings)
        val groups = f.assignment.groupsOf(split.start, split.length)
        val alone = groups.forall(g => f.assignment.groupsOf(f.assignment.midpointOf(g), 1).sameElements(Array(g)))
        var firstRow = 0L
        val slices = groups.toIndexedSeq.flatMap { g =>
          val block = f.footer.getBlocks.get(g)
          val start = firstRow
          firstRow += block.getRowCount
          if (block.getRowCount == 0) Nil
          else Seq(RowGroupSlice(split.copy(start = f.assignment.midpointOf(g), length = 1), start, block.getRowCount,
            proof.stats(block).get(column), f.firstRow(g)))
        }
        if (alone) Some(new SplitSlices(slices, settings)) else None
      }
    } catch {
      case NonFatal(e) => logInfo(s"lmspark reads the split of $path whole in the top-k's first pass: $e"); None
    }
  }
}
