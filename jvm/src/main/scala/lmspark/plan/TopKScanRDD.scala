package lmspark.plan

import org.apache.spark.{Partition, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.FilePartition

/**
 * The rows of a top-k scan ([[TopKRead]]): one partition per split group of the wrapped scan's
 * input RDD (`files`, whose partitions are `FilePartition`s), the same groups in the same order, so
 * that each task ranks the rows Spark's scan task would have yielded. `rows` reads one group.
 */
final class TopKScanRDD(@transient files: RDD[InternalRow], rows: FilePartition => Iterator[InternalRow])
  extends RDD[InternalRow](files.context, Nil) {

  private val groups: Array[Partition] = files.partitions.map {
    case p: FilePartition => p
    case p => throw new IllegalStateException(s"internal error: a top-k scan over a split that is no FilePartition: $p")
  }

  override protected def getPartitions: Array[Partition] = groups

  override def compute(split: Partition, context: TaskContext): Iterator[InternalRow] =
    rows(split.asInstanceOf[FilePartition])

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    split.asInstanceOf[FilePartition].preferredLocations().toSeq
}
