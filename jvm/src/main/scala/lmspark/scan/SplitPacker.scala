package lmspark.scan

import org.apache.spark.sql.execution.datasources.{FilePartition, PartitionedFile}

/**
 * Packs a scan's splits into partitions by the bytes lmspark reads from them, not by their size in
 * the file. Spark sizes a file scan's partitions by file bytes (`spark.sql.files.maxPartitionBytes`
 * of them, each file costing `openCostInBytes` more); a scan that reads a few of a table's columns,
 * or rows of a few row groups, then runs many tasks that each read little, and pays the per-task
 * cost (scheduling, task setup, a footer and reader setup per split) many times over. Here a split
 * weighs what lmspark reads from it ([[SplitPruner]]'s weights: the chunks of the columns read, in
 * the row groups the split holds and statistics do not skip) plus the open cost, and the partitions
 * are as many as Spark's rule asks for that weight (at most `maxPartitionBytes` each), rounded up to
 * a multiple of the session's task slots so that no wave of tasks runs half empty, and balanced by
 * weight: the splits in file and offset order are cut into runs of about equal weight, so a file's
 * splits stay together.
 *
 * Splits are never cut or merged: each keeps its file range, so the row groups it reads, its
 * `input_file_name()` and block metadata, and how a corrupt or missing file is failed or skipped,
 * are exactly as before. Only which task reads it changes.
 *
 * Invariants of a packing: every input split is in exactly one output partition; the output
 * partitions are indexed 0 to n - 1, each non-empty, with its splits in file and offset order; n is
 * smaller than the input's partition count (otherwise the input is kept, with the reason).
 */
object SplitPacker {

  /** Spark's sizing for file scans: `maxPartitionBytes`, `openCostInBytes`, and the task slots its
    * rule spreads a scan over (`spark.sql.files.minPartitionNum`, else the leaf-node parallelism). */
  final case class Limits(maxPartitionBytes: Long, openCostInBytes: Long, slots: Int) {
    require(maxPartitionBytes > 0 && openCostInBytes >= 0 && slots > 0, s"invalid limits $this")
  }

  /** A packing: the new partitions, for each the indexes of the input RDD's partitions its splits
    * came from, and the bytes lmspark reads over all of them. */
  final case class Packed(partitions: Seq[FilePartition], parents: Seq[Seq[Int]], readBytes: Long, inputPartitions: Int,
      limits: Limits) {
    def decision: String =
      s"packed ${partitions.map(_.files.length).sum} splits of $inputPartitions partitions into ${partitions.size} by " +
        s"the ${mb(readBytes)} lmspark reads (at most ${mb(limits.maxPartitionBytes)} a partition with " +
        s"${mb(limits.openCostInBytes)} a split, a multiple of ${limits.slots} task slots)"
  }

  private def mb(bytes: Long): String = f"${bytes / 1048576.0}%.1f MB"

  /** The packing of `partitions` (the input RDD's partitions `parents`, one each), or why they stay
    * as they are: a split without a weight (`weights`), or no fewer partitions. */
  def pack(partitions: Seq[FilePartition], parents: Seq[Int], weights: PartitionedFile => Option[Long],
      limits: Limits): Either[String, Packed] = {
    require(partitions.length == parents.length, "one parent per partition")
    val splits = partitions.zip(parents).flatMap { case (p, parent) => p.files.toSeq.map(f => (f, parent)) }
    val weighed = splits.map { case (f, parent) => (f, parent, weights(f)) }
    if (weighed.exists(_._3.isEmpty)) Left(s"kept as Spark made them (${weighed.count(_._3.isEmpty)} of " +
      s"${splits.size} splits without a footer on the driver to weigh them by)")
    else {
      val items = weighed.map { case (f, parent, w) => Item(f, parent, w.get) }
      val total = items.iterator.map(_.weight + limits.openCostInBytes).sum
      val wanted = math.max(1L, ceilDiv(total, limits.maxPartitionBytes))
      val n = ceilDiv(wanted, limits.slots) * limits.slots
      if (n >= partitions.length)
        Left(s"kept as Spark made them (the ${mb(items.map(_.weight).sum)} lmspark reads ask for $n partitions, " +
          s"not fewer than ${partitions.length})")
      else Right(balance(items, n.toInt, partitions.length, limits))
    }
  }

  private final case class Item(file: PartitionedFile, parent: Int, weight: Long)

  private def ceilDiv(a: Long, b: Long): Long = (a + b - 1) / b

  /** Cuts the splits, in file and offset order, into `n` runs of about equal weight: run k ends at
    * the split boundary nearest to k / n of the total weight. A file's splits stay together (a task
    * reads one file's splits one after another, as Spark's own packing of a file's splits does), and
    * no run is off its share by more than about one split's weight. `n` <= the number of items, so
    * every run gets a split. */
  private def balance(items: Seq[Item], n: Int, inputPartitions: Int, limits: Limits): Packed = {
    val sorted = items.sortBy(i => (i.file.toPath.toString, i.file.start)).toIndexedSeq
    val prefix = sorted.scanLeft(0L)((acc, i) => acc + i.weight + limits.openCostInBytes) // prefix(j): weight of the first j
    val total = prefix.last
    val cuts = new Array[Int](n + 1)
    cuts(n) = sorted.length
    (1 until n).foreach { k =>
      val target = total.toDouble * k / n
      var j = cuts(k - 1) + 1
      while (j < sorted.length && prefix(j) < target) j += 1
      if (j > cuts(k - 1) + 1 && target - prefix(j - 1) < prefix(j) - target) j -= 1
      // Leave at least one split for each run after this one.
      cuts(k) = math.min(j, sorted.length - (n - k))
    }
    val runs = (0 until n).map(k => sorted.slice(cuts(k), cuts(k + 1)))
    Packed(runs.zipWithIndex.map { case (run, i) => FilePartition(i, run.map(_.file).toArray) },
      runs.map(_.map(_.parent).distinct.sorted), items.map(_.weight).sum, inputPartitions, limits)
  }
}
