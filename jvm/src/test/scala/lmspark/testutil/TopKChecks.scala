package lmspark.testutil

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering
import org.apache.spark.sql.execution.{SparkPlan, TakeOrderedAndProjectExec}
import org.apache.spark.sql.lmspark.SparkTopK
import org.apache.spark.sql.types.DataType
import org.scalatest.funsuite.AnyFunSuite

import lmspark.plan.LmParquetScanExec

/**
 * The differential check of a top-k scan ([[lmspark.plan.TopKRead]]): task by task, the rows under
 * `TakeOrderedAndProject` are exactly what Spark's own per-task top-k leaves of vanilla Spark's rows
 * there (lmspark off, pushdown off), in that order; and the query's rows are vanilla's.
 */
trait TopKChecks { self: AnyFunSuite with LmSparkSession =>

  /** The query's `TakeOrderedAndProject`. */
  protected def topKNode(plan: SparkPlan): TakeOrderedAndProjectExec = {
    val nodes = collect(plan) { case t: TakeOrderedAndProjectExec => t }
    assert(nodes.size == 1, s"no single TakeOrderedAndProject:\n$plan")
    nodes.head
  }

  /** The rows each task hands to `TakeOrderedAndProject`, rendered, by task. */
  private def perTask(df: DataFrame, lmspark: Boolean): (SparkPlan, Seq[Seq[String]]) = {
    val plan = df.queryExecution.executedPlan
    val t = topKNode(plan)
    val types = t.child.output.map(_.dataType)
    val rows =
      if (lmspark) t.child.execute().mapPartitions(it => Iterator(it.map(TopKChecks.rendered(_, types)).toVector)).collect().toSeq
      else {
        val (order, output, limit) = (t.sortOrder, t.child.output, t.limit)
        t.child.execute().mapPartitions { it =>
          val ordering = new LazilyGeneratedOrdering(order, output)
          Iterator(SparkTopK.takeOrdered(it.map(_.copy()), limit, ordering).map(TopKChecks.rendered(_, types)).toVector)
        }.collect().toSeq
      }
    (plan, rows)
  }

  protected def inOrder(rows: Array[Row]): Seq[String] =
    rows.toSeq.map(_.toSeq.map(LmSparkSession.render).mkString("(", ",", ")"))

  /** Task by task and in the end, lmspark's rows are vanilla's; returns lmspark's top-k scan. */
  protected def checkTopK(query: => DataFrame, context: => String): LmParquetScanExec = {
    val (_, expected) = withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
      perTask(query, lmspark = false)
    }
    val expectedRows = withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
      inOrder(query.rdd.collect())
    }
    val (plan, actual) = perTask(query, lmspark = true)
    val scan = lmScans(topKNode(plan)) match {
      case Seq(s) if s.topK => s
      case _ => fail(s"$context: no top-k scan under TakeOrderedAndProject:\n$plan")
    }
    assert(actual.size == expected.size, s"$context: ${actual.size} tasks against ${expected.size}")
    actual.zip(expected).zipWithIndex.foreach { case ((a, e), task) =>
      assert(a == e, s"$context: task $task yields\n${a.take(8)}\nSpark's scan and top-k leave\n${e.take(8)}\n$plan")
    }
    val actualRows = inOrder(query.rdd.collect())
    assert(actualRows == expectedRows, s"$context: the query's rows differ\n$plan")
    scan
  }
}

object TopKChecks {
  /** A row's values, rendered to compare (NaN, -0.0 by value). */
  def rendered(row: InternalRow, types: Seq[DataType]): String =
    types.indices.map(i => LmSparkSession.render(row.get(i, types(i)))).mkString("(", ",", ")")
}
