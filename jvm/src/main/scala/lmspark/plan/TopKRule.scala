package lmspark.plan

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeSet, CreateNamedStruct, Expression, GetStructField, KnownNotNull, Literal, SortOrder}
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.catalyst.FileSourceOptions
import org.apache.spark.sql.execution.{ColumnarToRowExec, FilterExec, ProjectExec, SparkPlan, TakeOrderedAndProjectExec}
import org.apache.spark.sql.internal.SQLConf

import lmspark.LmConf

/**
 * Gives each `TakeOrderedAndProject` over an lmspark scan a scan that yields each task's top-k only
 * ([[TopKRead]]): `spark.lmspark.topK.enabled`. Between them may lie only row-wise operators that
 * cannot fail and keep the sort columns as they are: projections of columns, literals, structs of
 * them and their fields (`_metadata` and its fields), the table format's filter that drops its
 * flagged rows (Delta's `is_row_deleted = 0`, which the top-k scan applies itself: it never ranks
 * a flagged row), and the columnar-to-row transition if Spark put one there already. The top-k of
 * the rows they pass is then what they pass of the scan's top-k. Where the scan cannot, it keeps
 * the scan as it was and notes why (`LmTopK` in EXPLAIN).
 *
 * Idempotent: a scan with a top-k or a note is left alone.
 */
object TopKRule {

  def apply(plan: SparkPlan, conf: SQLConf): SparkPlan =
    if (!LmConf.TOP_K.get(conf)) plan
    else plan.transformUp {
      case t: TakeOrderedAndProjectExec => t.withNewChildren(Seq(between(t, t.child, Nil, conf)))
    }

  /** `plan` (under `t`, below the format filters `filters` met on the way) with its scan deciding
    * `t`'s top-k, through the operators the top-k may pass. */
  private def between(t: TakeOrderedAndProjectExec, plan: SparkPlan, filters: Seq[Expression], conf: SQLConf): SparkPlan =
    plan match {
      case p @ ProjectExec(list, child) if list.forall(cannotFail) =>
        p.withNewChildren(Seq(between(t, child, filters, conf)))
      case f @ FilterExec(condition, child) if LmParquetScanExec.markFilterColumn(condition).isDefined =>
        f.withNewChildren(Seq(between(t, child, filters :+ condition, conf)))
      case s: LmParquetScanExec if undecided(s) => decide(t, s, filters, conf)
      case c: ColumnarToRowExec => c.child match {
        case s: LmParquetScanExec if undecided(s) => decide(t, s, filters, conf) match {
          case ranked if ranked.topK => ranked
          case noted => c.withNewChildren(Seq(noted))
        }
        case _ => c
      }
      case other => other
    }

  /** Whether `e` is evaluated row by row and can raise no error: columns, literals, structs of them
    * (Delta's and Spark's `_metadata`) and their fields. A projection of these between the top-k
    * and the scan computes, for the rows of the top-k, what it would have for them among all rows. */
  private def cannotFail(e: Expression): Boolean = e match {
    case _: Attribute | _: Literal => true
    case a: Alias => cannotFail(a.child)
    case k: KnownNotNull => cannotFail(k.child)
    case c: CreateNamedStruct => c.children.forall(cannotFail)
    case g: GetStructField => cannotFail(g.child)
    case _ => false
  }

  private def undecided(s: LmParquetScanExec): Boolean = !s.topK && s.topKNote.isEmpty

  private def decide(t: TakeOrderedAndProjectExec, s: LmParquetScanExec, filters: Seq[Expression],
      conf: SQLConf): LmParquetScanExec =
    declineReason(t, s, filters, conf) match {
      case None => s.copy(topKLimit = t.limit, topKOrder = t.sortOrder)
      case Some(why) => s.copy(topKNote = Some(why))
    }

  /** Why the scan under `t` (below the format filters `filters`) cannot yield its tasks' top-k, if so. */
  private def declineReason(t: TakeOrderedAndProjectExec, s: LmParquetScanExec, filters: Seq[Expression],
      conf: SQLConf): Option[String] = {
    val maxRows = LmConf.TOP_K_MAX_ROWS.get(conf)
    val options = new FileSourceOptions(CaseInsensitiveMap(s.relation.options))
    val sortColumns = AttributeSet(t.sortOrder.flatMap(_.references))
    val dataColumns = s.output.take(s.requiredSchema.length)
    val mark = s.markAttribute
    if (t.limit > maxRows) Some(s"LIMIT ${t.limit} is above spark.lmspark.topK.maxRows ($maxRows)")
    else if (s.outputOrdering.nonEmpty && SortOrder.orderingSatisfies(s.outputOrdering, t.sortOrder))
      Some("the scan's rows come in that order already")
    else if (!t.sortOrder.forall(_.deterministic) || !t.projectList.forall(_.deterministic))
      Some("a sort or output expression is not deterministic")
    else if (!sortColumns.subsetOf(AttributeSet(s.output.diff(s.constantMetadataColumns))))
      Some("the sort order uses more than the scan's data and partition columns")
    else if (!filters.forall(s.isMarkFilter))
      Some("a filter between them is on another column than the table format's deleted rows")
    else if (!s.dataFilters.forall(s.isMarkFilter)) Some("the scan has filters")
    else if (mark.isDefined && filters.isEmpty) Some("no filter above the scan drops the table format's deleted rows")
    else if (!s.sparkConstantMetadataColumns.map(_.exprId).sameElements(
        s.constantMetadataColumns.map(_.exprId)))
      Some("the scan's metadata columns are not the file constants Spark's scan appends")
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
