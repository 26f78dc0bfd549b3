package lmspark.scan

import scala.util.Random

import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.{FilePartition, PartitionedFile}
import org.scalatest.funsuite.AnyFunSuite

/** [[SplitPacker]] against a simple oracle, over seeded random scans: files cut into contiguous
  * splits, grouped into input partitions at random, weighed at random (empty splits included), under
  * random limits. Each packing must:
  *  - have as many partitions as Spark's rule asks for the weights (the total over
  *    `maxPartitionBytes`, rounded up to a multiple of the slots), or keep the input, with a reason,
  *    when that is not fewer than the input's partitions;
  *  - hold every split exactly once, the partitions indexed from 0 and none empty;
  *  - keep the splits in file and offset order, read across the partitions in turn (a file's splits
  *    stay together);
  *  - name as parents exactly the input partitions its splits came from;
  *  - load no partition beyond its share of the weight by more than one split's weight.
  *
  * `LMSPARK_TEST_SEED` (default 20261130) changes every case; a failure prints the seed and the case. */
class SplitPackerSuite extends AnyFunSuite {

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261130L)
  private val Cases = 400
  private val MB = 1L << 20

  private def split(file: Int, start: Long, length: Long, size: Long): PartitionedFile =
    PartitionedFile(InternalRow.empty, SparkPath.fromPathString(s"/data/part-$file.parquet"), start, length,
      fileSize = size)

  private final case class Scan(partitions: Seq[FilePartition], parents: Seq[Int], weights: Map[PartitionedFile, Long])

  private def randomScan(r: Random): Scan = {
    val files = 1 + r.nextInt(12)
    val splits = (0 until files).flatMap { f =>
      val n = 1 + r.nextInt(8)
      val len = (1 + r.nextInt(64)) * MB
      (0 until n).map(i => split(f, i * len, len, n * len))
    }
    // Spark's own order is by size; any grouping must do.
    val shuffled = r.shuffle(splits)
    val groups = scala.collection.mutable.ArrayBuffer.empty[Seq[PartitionedFile]]
    var rest = shuffled
    while (rest.nonEmpty) {
      val k = 1 + r.nextInt(3)
      groups += rest.take(k)
      rest = rest.drop(k)
    }
    val partitions = groups.zipWithIndex.map { case (g, i) => FilePartition(i, g.toArray) }.toSeq
    // Split pruning's kept partitions keep their parent's index: any increasing indexes.
    val parents = partitions.indices.map(i => i * 2 + r.nextInt(2))
    val weights = splits.map(s => s -> (if (r.nextInt(6) == 0) 0L else (r.nextDouble() * s.length).toLong)).toMap
    Scan(partitions, parents, weights)
  }

  private def randomLimits(r: Random): SplitPacker.Limits = SplitPacker.Limits(
    Seq(1L, 8L, 64L, 128L)(r.nextInt(4)) * MB, Seq(0L, 4L * MB, 1024L)(r.nextInt(3)), Seq(1, 2, 3, 8)(r.nextInt(4)))

  private def key(f: PartitionedFile): (String, Long) = (f.toPath.toString, f.start)

  test(s"$Cases random scans: the packing has Spark's partition count for the bytes read, every split once, " +
    "in file order, with its parents, and balanced") {
    val r = new Random(seed)
    (0 until Cases).foreach { c =>
      val scan = randomScan(r)
      val limits = randomLimits(r)
      val splits = scan.partitions.flatMap(_.files.toSeq)
      val loads = splits.map(s => scan.weights(s) + limits.openCostInBytes)
      val total = loads.sum
      val wanted = math.max(1L, (total + limits.maxPartitionBytes - 1) / limits.maxPartitionBytes)
      val n = (wanted + limits.slots - 1) / limits.slots * limits.slots
      withClue(s"seed $seed, case $c: ${splits.size} splits in ${scan.partitions.size} partitions, $limits, " +
        s"total ${total / MB} MB, $n partitions wanted: ") {
        SplitPacker.pack(scan.partitions, scan.parents, f => scan.weights.get(f), limits) match {
          case Left(why) =>
            assert(n >= scan.partitions.size, why)
            assert(why.contains(s"ask for $n partitions"), why)
          case Right(p) =>
            assert(n < scan.partitions.size)
            assert(p.partitions.size == n)
            assert(p.partitions.map(_.index) == p.partitions.indices)
            assert(p.partitions.forall(_.files.nonEmpty))
            val packed = p.partitions.flatMap(_.files.toSeq)
            assert(packed.map(key) == splits.map(key).sorted, "every split once, in file and offset order")
            val parentOf = scan.partitions.zip(scan.parents).flatMap { case (q, i) => q.files.map(f => key(f) -> i) }.toMap
            assert(p.parents == p.partitions.map(_.files.toSeq.map(f => parentOf(key(f))).distinct.sorted))
            assert(p.readBytes == splits.map(scan.weights).sum)
            val heaviest = loads.max
            p.partitions.foreach { q =>
              val load = q.files.map(f => scan.weights(f) + limits.openCostInBytes).sum
              assert(load <= total.toDouble / n + heaviest, s"partition ${q.index} loads $load")
            }
        }
      }
    }
  }

  test("a split without a weight keeps Spark's partitions, and says how many had none") {
    val r = new Random(seed + 1)
    val scan = Iterator.continually(randomScan(r)).find(_.weights.size > 3).get
    val unweighed = scan.weights.keys.take(2).toSet
    val limits = SplitPacker.Limits(128 * MB, 4 * MB, 2)
    val out = SplitPacker.pack(scan.partitions, scan.parents, f => if (unweighed(f)) None else scan.weights.get(f), limits)
    assert(out == Left(s"kept as Spark made them (2 of ${scan.weights.size} splits without a footer on the driver " +
      "to weigh them by)"))
  }

  test("one partition stays; splits that weigh little pack into one partition per task slot") {
    val one = Seq(FilePartition(0, Array(split(0, 0, 64 * MB, 64 * MB))))
    assert(SplitPacker.pack(one, Seq(0), _ => Some(1L), SplitPacker.Limits(128 * MB, 4 * MB, 1)).isLeft)
    val many = (0 until 20).map(i => FilePartition(i, Array(split(i, 0, 128 * MB, 128 * MB))))
    val p = SplitPacker.pack(many, many.indices, _ => Some(MB), SplitPacker.Limits(128 * MB, 4 * MB, 2))
    assert(p.map(_.partitions.map(_.files.length)) == Right(Seq(10, 10)))
  }
}
