package lmspark.plan

import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat

import lmspark.shim.DeclinedFormat

/**
 * Why lmspark declined a scan, as data on the plan.
 *
 * A declined `FileSourceScanExec` stays Spark's own node, with two marks:
 *  - the tag [[Fallback.Reasons]], for code and tests;
 *  - its file format becomes a [[DeclinedFormat]] ([[DeclinedParquetFileFormat]], or for a Delta
 *    table the Delta shim's subclass of Delta's format), which reads exactly as the format it
 *    replaces but prints `Format: Parquet [lmspark fallback: ...]`, so that every `EXPLAIN` mode
 *    shows the reason.
 * Spark's `ParquetFileFormat` equals any other `ParquetFileFormat` (and Delta's format equals any
 * copy with the same schema settings), and a rule's result that equals its input is dropped, so
 * the relation also records the reasons in its options
 * ([[OptionKey]], which Spark's reader ignores); that makes the declined node a different node.
 * Invariant: a declined scan always carries at least one non-empty reason.
 */
object Fallback {
  val Reasons: TreeNodeTag[Seq[String]] = TreeNodeTag[Seq[String]]("lmspark.fallbackReasons")

  /** The relation option that records the reasons. */
  val OptionKey = "lmspark.fallbackReasons"

  def decline(scan: FileSourceScanExec, reasons: Seq[String]): FileSourceScanExec =
    decline(scan, reasons, new DeclinedParquetFileFormat(reasons))

  /** `scan` declined with `format`, a [[DeclinedFormat]] that reads as the scan's own format. */
  def decline(scan: FileSourceScanExec, reasons: Seq[String], format: FileFormat with DeclinedFormat): FileSourceScanExec = {
    require(reasons.nonEmpty && reasons.forall(_.trim.nonEmpty), "a decline needs a reason")
    val relation = scan.relation.copy(fileFormat = format,
      options = scan.relation.options + (OptionKey -> reasons.mkString("; ")))(scan.relation.sparkSession)
    val declined = scan.copy(relation = relation)
    declined.copyTagsFrom(scan)
    declined.setTagValue(Reasons, reasons)
    declined
  }

  /** The reasons a scan was declined, if lmspark declined it. */
  def reasonsOf(scan: FileSourceScanExec): Option[Seq[String]] =
    scan.getTagValue(Reasons).orElse(scan.relation.fileFormat match {
      case d: DeclinedFormat => Some(d.reasons)
      case _ => None
    })
}

/** Spark's `ParquetFileFormat`, unchanged in behaviour, that names why lmspark did not read it. */
final class DeclinedParquetFileFormat(val reasons: Seq[String]) extends ParquetFileFormat with DeclinedFormat {
  override def toString: String = DeclinedFormat.describe(reasons)
}
