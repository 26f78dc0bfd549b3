package lmspark.plan

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.execution._
import org.apache.spark.sql.execution.aggregate.{HashAggregateExec, ObjectHashAggregateExec, SortAggregateExec}
import org.apache.spark.sql.execution.exchange.{BroadcastExchangeExec, ShuffleExchangeExec}
import org.apache.spark.sql.execution.joins.{BroadcastHashJoinExec, ShuffledHashJoinExec, SortMergeJoinExec}
import org.apache.spark.sql.types._

/**
 * Which struct fields of a scan's nested output columns nothing above the scan can observe, found
 * from the physical plan. Spark's own nested schema pruning stops at an `explode` whose array is
 * also tested (`size(a) > 0`, which Spark infers for every `explode`), so `explode(lineitems)`
 * followed by `li.l_quantity` reads every field of `lineitems`; lmspark reads only the leaves the
 * plan uses, and the others read as nulls in the (unchanged) output type.
 *
 * Soundness: a value of a scan column reaches the query's result only through expressions of the
 * nodes above the scan that reference its attribute, or an attribute derived from it (an alias of
 * one of its fields in a `Project`, the element an `explode` of it produces). The walk goes up the
 * scan's ancestors, tracking those attributes by expression id:
 *  - an expression that is a field path of a tracked attribute (`GetStructField`,
 *    `GetArrayStructFields`, `GetArrayItem` chains) uses that path whole (`a.f` of a list of
 *    structs uses `a.element.f`, and so does its `explode`'s element); `size`, `isnull` and
 *    `isnotnull` of a path use only its structure (the reader keeps a leaf under every struct that
 *    has one, so structure is always read); any other reference uses the whole column;
 *  - only nodes whose output attributes keep their children's values under the same expression
 *    ids (or are computed by expressions the walk visits) are walked through; any other node the
 *    tracked attributes reach (a union, an expand, a Python or Scala UDF operator, a write) uses
 *    them whole, as does the plan's root;
 *  - a plan fragment (one AQE stage) has the fragment's root as its root, so it prunes nothing
 *    its consumers might use. An exchange reused for another consumer is matched by its
 *    canonical form, which includes the fields the scan leaves unread.
 * Map values and keys are never pruned: a map is used whole or not at all.
 */
object NestedFieldUse {

  /** Per scan of `plan` (by identity), the struct-field paths of its output columns left unread
    * (a column's name, then field names, `element` inside an array); absent when none is. */
  def unread(plan: SparkPlan): java.util.IdentityHashMap[FileSourceScanExec, Set[Seq[String]]] = {
    val out = new java.util.IdentityHashMap[FileSourceScanExec, Set[Seq[String]]]()
    val used = new java.util.IdentityHashMap[FileSourceScanExec, Use]()
    def visitPlan(p: SparkPlan, ancestors: List[SparkPlan]): Unit = p match {
      case scan: FileSourceScanExec =>
        val u = usedPaths(scan, ancestors)
        used.put(scan, Option(used.get(scan)).fold(u)(v => Use(v.whole ++ u.whole, v.shaped ++ u.shaped)))
      case _ => p.children.foreach(visitPlan(_, p :: ancestors))
    }
    visitPlan(plan, Nil)
    used.forEach { (scan, u) =>
      val unreadPaths = scan.requiredSchema.fields.toSeq.flatMap { f =>
        if (u.whole.contains(Seq(f.name))) Nil else unreadUnder(Seq(f.name), f.dataType, u)
      }.toSet
      if (unreadPaths.nonEmpty) out.put(scan, unreadPaths)
    }
    out
  }

  /** A node of a scan column (`path`: its name, field names, `element` inside a list), or with
    * `lifted` the list of that node's values over the elements of the list above it. */
  private final case class Node(path: Seq[String], lifted: Boolean)

  /** Paths of a scan's columns used whole, and paths whose structure alone is used (nullness, list
    * lengths: `isnull`, `size`, `explode`). */
  private final case class Use(whole: Set[Seq[String]], shaped: Set[Seq[String]])

  /** What `scan`'s ancestors (nearest first) use of its columns. Flat columns count as used whole. */
  private def usedPaths(scan: FileSourceScanExec, ancestors: List[SparkPlan]): Use = {
    val used = mutable.Set.empty[Seq[String]]
    val shaped = mutable.Set.empty[Seq[String]]
    val tracked = mutable.Map.empty[ExprId, Node]
    scan.output.foreach { a =>
      if (isNested(a.dataType)) tracked(a.exprId) = Node(Seq(a.name), lifted = false) else used += Seq(a.name)
    }

    // What the value of `e` is: a node of a column, or (`lifted`) the list of one node's values over
    // the elements of a list: `a.f` of a list of structs `a` is the list of `a.element.f`.
    def nodeOf(e: Expression): Option[Node] = e match {
      case a: Attribute => tracked.get(a.exprId)
      case g: GetStructField => nodeOf(g.child).filter(!_.lifted).map(n => Node(n.path :+ g.childSchema(g.ordinal).name, lifted = false))
      case g: GetArrayStructFields => elementsOf(g.child).map(p => Node(p :+ g.field.name, lifted = true))
      case g: GetArrayItem => elementsOf(g.child).map(Node(_, lifted = false))
      case _ => None
    }
    def elementsOf(e: Expression): Option[Seq[String]] = nodeOf(e).map(n => if (n.lifted) n.path else n.path :+ "element")
    def pathOf(e: Expression): Option[Seq[String]] = nodeOf(e).map(_.path)
    def structureOf(e: Expression): Option[Seq[String]] = e match {
      case IsNotNull(c) => pathOf(c)
      case IsNull(c) => pathOf(c)
      case s: Size => pathOf(s.child)
      case _ => None
    }
    def visit(e: Expression): Unit =
      pathOf(e) match {
        case Some(p) => used += p
        case None => structureOf(e) match {
          case Some(p) => shaped += p
          case None => e.children.foreach(visit)
        }
      }
    def result = Use(used.toSet, shaped.toSet)

    var child: SparkPlan = scan
    var rest = ancestors
    def reaching: Seq[Attribute] = child.output.filter(a => tracked.contains(a.exprId))
    def useWhole(a: Attribute): Unit = used += tracked(a.exprId).path
    while (reaching.nonEmpty) {
      rest match {
        case Nil => // the root: its output is observed
          reaching.foreach(useWhole)
          return result
        case node :: above =>
          node match {
            case p: ProjectExec =>
              p.projectList.foreach {
                case _: Attribute => // passes through
                case a @ Alias(c, _) if nodeOf(c).isDefined => tracked(a.exprId) = nodeOf(c).get
                case e => visit(e)
              }
            case g: GenerateExec =>
              g.generator match {
                case x: ExplodeBase if x.child.dataType.isInstanceOf[ArrayType] && pathOf(x.child).isDefined =>
                  shaped += pathOf(x.child).get
                  tracked(g.generatorOutput.last.exprId) = Node(elementsOf(x.child).get, lifted = false)
                case other => visit(other)
              }
            case _: FilterExec | _: SortExec | _: ShuffleExchangeExec | _: BroadcastExchangeExec |
                 _: ColumnarToRowExec | _: InputAdapter | _: WholeStageCodegenExec | _: CollectLimitExec |
                 _: LocalLimitExec | _: GlobalLimitExec | _: TakeOrderedAndProjectExec |
                 _: HashAggregateExec | _: ObjectHashAggregateExec | _: SortAggregateExec |
                 _: BroadcastHashJoinExec | _: SortMergeJoinExec | _: ShuffledHashJoinExec =>
              node.expressions.foreach(visit)
            case _ => // a node the walk does not know: it observes what reaches it
              reaching.foreach(useWhole)
              return result
          }
          child = node
          rest = above
      }
    }
    result
  }

  /** Struct-field paths under `path` (of type `dt`) that no used path needs: a field is unread when
    * no used path lies inside it or contains it, and a structure use (`shaped`) keeps the field
    * (its own fields may still go unread: the reader keeps one leaf for its structure). */
  private def unreadUnder(path: Seq[String], dt: DataType, use: Use): Seq[Seq[String]] = dt match {
    case st: StructType => st.fields.toSeq.flatMap { f =>
        val fp = path :+ f.name
        if (use.whole.exists(u => fp.startsWith(u))) Nil
        else if (!use.whole.exists(_.startsWith(fp)) && !use.shaped.exists(_.startsWith(fp))) Seq(fp)
        else unreadUnder(fp, f.dataType, use)
      }
    case at: ArrayType => unreadUnder(path :+ "element", at.elementType, use)
    case _ => Nil
  }

  private def isNested(dt: DataType): Boolean =
    dt.isInstanceOf[StructType] || dt.isInstanceOf[ArrayType] || dt.isInstanceOf[MapType]
}
