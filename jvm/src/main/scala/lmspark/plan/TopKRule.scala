package lmspark.plan

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, SortOrder}
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.catalyst.FileSourceOptions
import org.apache.spark.sql.execution.{ColumnarToRowExec, ProjectExec, SparkPlan, TakeOrderedAndProjectExec}
import org.apache.spark.sql.internal.SQLConf

import lmspark.LmConf

/**
 * Gives each `TakeOrderedAndProject` straight over an lmspark scan (through a projection that
 * only drops columns, and the columnar-to-row transition if Spark put one there already) a scan that yields each task's top-k only
 * ([[TopKRead]]): `spark.lmspark.topK.enabled`. Where the scan cannot, it keeps the scan as it was
 * and notes why (`LmTopK` in EXPLAIN).
 *
 * Idempotent: a scan with a top-k or a note is left alone.
 */
object TopKRule {

  def apply(plan: SparkPlan, conf: SQLConf): SparkPlan =
    if (!LmConf.TOP_K.get(conf)) plan
    else plan.transformUp {
      case t: TakeOrderedAndProjectExec => t.child match {
        // Columns dropped between (a partitioned table's partition columns, say): the top-k of the
        // projected rows is the projection of the top-k, since the order reads kept columns only.
        case p @ ProjectExec(list, child) if list.forall(_.isInstanceOf[Attribute]) =>
          t.withNewChildren(Seq(p.withNewChildren(Seq(overScan(t, child, conf)))))
        case child => t.withNewChildren(Seq(overScan(t, child, conf)))
      }
    }

  /** `child` (the plan under `t`, a projection aside) with its scan deciding `t`'s top-k. */
  private def overScan(t: TakeOrderedAndProjectExec, child: SparkPlan, conf: SQLConf): SparkPlan = child match {
    case s: LmParquetScanExec if undecided(s) => decide(t, s, conf)
    case c: ColumnarToRowExec => c.child match {
      case s: LmParquetScanExec if undecided(s) => decide(t, s, conf) match {
        case ranked if ranked.topK => ranked
        case noted => c.withNewChildren(Seq(noted))
      }
      case _ => c
    }
    case other => other
  }

  private def undecided(s: LmParquetScanExec): Boolean = !s.topK && s.topKNote.isEmpty

  private def decide(t: TakeOrderedAndProjectExec, s: LmParquetScanExec, conf: SQLConf): LmParquetScanExec =
    declineReason(t, s, conf) match {
      case None => s.copy(topKLimit = t.limit, topKOrder = t.sortOrder)
      case Some(why) => s.copy(topKNote = Some(why))
    }

  /** Why the scan under `t` cannot yield its tasks' top-k, if so. */
  private def declineReason(t: TakeOrderedAndProjectExec, s: LmParquetScanExec, conf: SQLConf): Option[String] = {
    val maxRows = LmConf.TOP_K_MAX_ROWS.get(conf)
    val options = new FileSourceOptions(CaseInsensitiveMap(s.relation.options))
    val sortColumns = AttributeSet(t.sortOrder.flatMap(_.references))
    val dataColumns = s.output.take(s.requiredSchema.length)
    if (t.limit > maxRows) Some(s"LIMIT ${t.limit} is above spark.lmspark.topK.maxRows ($maxRows)")
    else if (s.outputOrdering.nonEmpty && SortOrder.orderingSatisfies(s.outputOrdering, t.sortOrder))
      Some("the scan's rows come in that order already")
    else if (!t.sortOrder.forall(_.deterministic) || !t.projectList.forall(_.deterministic))
      Some("a sort or output expression is not deterministic")
    else if (!sortColumns.subsetOf(s.outputSet)) Some("the sort order uses more than the scan's columns")
    else if (s.dataFilters.nonEmpty) Some("the scan has filters")
    else if (s.output.length != s.requiredSchema.length + s.relation.partitionSchema.length)
      Some("the scan reads metadata columns")
    else if (options.ignoreCorruptFiles || options.ignoreMissingFiles)
      Some("ignoreCorruptFiles or ignoreMissingFiles is on (Spark's file scan skips those files)")
    else if (dataColumns.forall(sortColumns.contains)) Some("every column the scan reads is a sort column")
    else smallOnObjectStore(s, conf)
  }

  /** File systems where a request costs little beside the bytes it reads (local disk, HDFS). */
  private val NearSchemes = Set("file", "hdfs", "viewfs")

  /** The scheme of a table root on an object store (no near file system), if it has one. */
  private[plan] def farScheme(s: LmParquetScanExec): Option[String] =
    s.relation.location.rootPaths.map(p => Option(p.toUri.getScheme).getOrElse("file")).find(!NearSchemes(_))

  /** Why a table on an object store is too small for the second pass's round trips, if it is. */
  private def smallOnObjectStore(s: LmParquetScanExec, conf: SQLConf): Option[String] = {
    val min = LmConf.TOP_K_OBJECT_STORE_MIN_BYTES.get(conf)
    farScheme(s).flatMap { scheme =>
      val size = s.relation.location.sizeInBytes
      if (size >= min) None
      else Some(s"the table is on $scheme:, an object store, and its $size bytes are below " +
        s"${LmConf.TOP_K_OBJECT_STORE_MIN_BYTES.key} ($min): the second pass's round trips would cost more than they save")
    }
  }
}
