package lmspark.plan

import scala.jdk.CollectionConverters._

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.lmspark.SparkTopK
import org.apache.spark.sql.types.{DataType, LongType}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import lmspark.scan.{SplitRead, WantedRows}

/**
 * Late materialization for a top-k straight over a scan (`ORDER BY ... LIMIT k`), one task's files
 * at a time. Pass 1 reads the sort columns only (`ranked`: the sort columns, then the partition
 * columns) and runs Spark's own per-task top-k ([[SparkTopK]]) over those light rows, each carrying
 * its position (file, row ordinal), in the order Spark's scan yields the rows. Pass 2 reads every
 * column of the kept rows only ([[WantedRows]]) and yields them in the top-k's order.
 *
 * Invariant: the rows a task yields are exactly `Utils.takeOrdered(rows, limit)(ordering)` over the
 * rows Spark's scan yields in that task, in that order, ties included: the ordering compares the sort
 * columns alone, so it ranks each light row as it would rank its full row. `TakeOrderedAndProject`
 * above then keeps what it would have kept from Spark's scan.
 *
 * @param ranked pass 1's read; `rankedTypes` its batch's column types
 * @param full pass 2's read (the scan's output columns, `outputTypes`)
 * @param ordering the sort order bound to `rankedTypes` and a final LONG position column
 */
final class TopKRead(ranked: (PartitionedFile, WantedRows) => SplitRead, rankedTypes: Seq[DataType],
    full: (PartitionedFile, WantedRows) => SplitRead, outputTypes: Seq[DataType],
    ordering: LazilyGeneratedOrdering, limit: Int) extends Serializable {

  import TopKRead._

  /** The task's top `limit` rows of `files`, read in two passes; `rankedRows` counts pass 1's rows. */
  def rows(files: Seq[PartitionedFile], rankedRows: SQLMetric): Iterator[InternalRow] = {
    require(files.length < (1 << FileBits), s"a task of ${files.length} files")
    val opened = new java.util.ArrayList[AutoCloseable]
    Option(TaskContext.get()).foreach(_.addTaskCompletionListener[Unit](_ => opened.asScala.foreach(close)))
    val best = SparkTopK.takeOrdered(lightRows(files, opened, rankedRows), limit, ordering).toArray
    val position = rankedTypes.length
    val found = new java.util.HashMap[Long, InternalRow]
    best.map(_.getLong(position)).groupBy(_ >>> OrdinalBits).toSeq.sortBy(_._1).foreach { case (f, ps) =>
      val ordinals = ps.map(_ & OrdinalMask).sorted
      read(files(f.toInt), ordinals, opened).foreach { case (o, row) => found.put((f << OrdinalBits) | o, row) }
    }
    best.iterator.map { r =>
      val row = found.get(r.getLong(position))
      if (row == null) throw new IllegalStateException(s"internal error: top-k row ${r.getLong(position)} was not read again")
      row
    }
  }

  /** Pass 1: the rows of `files` Spark's top-k would keep as they come ([[TopKThreshold]]; the
    * others change nothing in it), each as an `UnsafeRow` of the sort columns and its position. */
  private def lightRows(files: Seq[PartitionedFile], opened: java.util.List[AutoCloseable],
      rankedRows: SQLMetric): Iterator[InternalRow] = {
    val project = UnsafeProjection.create((rankedTypes :+ LongType).toArray)
    val positions = new OnHeapColumnVector(4096, LongType)
    opened.add(positions)
    val threshold = new TopKThreshold(limit, ordering)
    files.iterator.zipWithIndex.flatMap { case (file, f) =>
      val read = ranked(file, null)
      remember(read, opened)
      var ordinal = 0L
      read.batches.flatMap { b =>
        val batch = b.asInstanceOf[ColumnarBatch]
        val n = batch.numRows()
        if (ordinal + n > OrdinalMask) throw new IllegalStateException(s"a split of more than $OrdinalMask rows")
        positions.reserve(n)
        var i = 0
        while (i < n) { positions.putLong(i, (f.toLong << OrdinalBits) | (ordinal + i)); i += 1 }
        ordinal += n
        rankedRows += n
        val columns = (0 until batch.numCols()).map(batch.column) :+ (positions: ColumnVector)
        val view = new ColumnarBatch(columns.toArray, n)
        Iterator.range(0, n).flatMap { r =>
          val row = view.getRow(r)
          if (!threshold.admits(row)) Iterator.empty
          else {
            val copy = project(row).copy()
            threshold.offered(copy)
            Iterator.single(copy: InternalRow)
          }
        }
      }
    }
  }

  /** Pass 2: the rows at `ordinals` (sorted) of `file`, every output column, with their ordinals. */
  private def read(file: PartitionedFile, ordinals: Array[Long], opened: java.util.List[AutoCloseable]): Seq[(Long, InternalRow)] = {
    val project = UnsafeProjection.create(outputTypes.toArray)
    val read = full(file, new WantedRows(ordinals))
    remember(read, opened)
    val out = Seq.newBuilder[(Long, InternalRow)]
    var next = 0 // the next wanted ordinal's index
    var ordinal = 0L // every row's ordinal, when the read yields them all
    read.batches.foreach { b =>
      val batch = b.asInstanceOf[ColumnarBatch]
      var i = 0
      while (i < batch.numRows()) {
        if (!read.everyRow) {
          if (next >= ordinals.length) throw new IllegalStateException(s"internal error: more rows than wanted from ${file.filePath}")
          out += ordinals(next) -> project(batch.getRow(i)).copy()
          next += 1
        } else {
          if (next < ordinals.length && ordinals(next) == ordinal) { out += ordinal -> project(batch.getRow(i)).copy(); next += 1 }
          ordinal += 1
        }
        i += 1
      }
    }
    close(read.batches)
    if (next != ordinals.length)
      throw new IllegalStateException(s"internal error: ${ordinals.length - next} wanted rows missing from ${file.filePath}")
    out.result()
  }

  private def remember(read: SplitRead, opened: java.util.List[AutoCloseable]): Unit = read.batches match {
    case c: AutoCloseable => opened.add(c)
    case _ =>
  }
}

object TopKRead {
  /** A position: the file's index among the task's files above `OrdinalBits`, the row's ordinal in it below. */
  private val OrdinalBits = 40
  private val OrdinalMask = (1L << OrdinalBits) - 1
  private val FileBits = 63 - OrdinalBits

  private def close(c: AnyRef): Unit = c match {
    case c: AutoCloseable => c.close()
    case _ =>
  }
}
