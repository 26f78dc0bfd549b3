package lmspark.plan

import scala.reflect.ClassTag

import org.apache.spark.{NarrowDependency, Partition, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.execution.datasources.FilePartition

/**
 * A scan's input RDD with its splits regrouped at planning: those split pruning dropped taken out,
 * and those left packed by the bytes lmspark reads ([[lmspark.scan.SplitPacker]]). Its partitions
 * are `kept` (each a `FilePartition` of splits of `files`), and each is read by the wrapped scan's
 * own `FileScanRDD` (`files`), with its preferred locations. Nothing else of the scan changes: the
 * same reader, the same splits, partition values and corrupt / missing file handling.
 *
 * Invariant: every split of `kept` is a split of `files`; a kept partition depends on the
 * partitions of `files` its splits came from (`parents`), so stage planning sees a narrow dependency.
 */
final class KeptSplitsRDD[T: ClassTag](@transient files: RDD[T], kept: Seq[FilePartition], parents: Seq[Seq[Int]])
  extends RDD[T](files.context, Seq(new NarrowDependency[T](files) {
    override def getParents(partitionId: Int): Seq[Int] = parents(partitionId)
  })) {
  require(kept.length == parents.length, "one parent partition per kept partition")

  private val reader: RDD[T] = files

  override protected def getPartitions: Array[Partition] = kept.toArray

  override def compute(split: Partition, context: TaskContext): Iterator[T] = reader.compute(split, context)

  override protected def getPreferredLocations(split: Partition): Seq[String] =
    split.asInstanceOf[FilePartition].preferredLocations().toSeq
}
