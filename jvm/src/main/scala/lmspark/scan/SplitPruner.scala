package lmspark.scan

import java.util.concurrent.{Callable, LinkedBlockingQueue, ThreadFactory, ThreadPoolExecutor, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.internal.Logging
import org.apache.spark.sql.execution.datasources.{FilePartition, PartitionedFile}
import org.apache.spark.sql.internal.SQLConf

import lmspark.meta.{CacheStats, FileFooter, FileKey, FooterChecks, FooterReader, MetadataCache, RowGroupAssignment}
import lmspark.predicate.Predicate

/**
 * Split pruning at planning: drops, before any task is scheduled, the file splits in which
 * lmspark's reader would read nothing: every row group of the split (by midpoint, as the reader
 * assigns them) is skipped by its checked statistics or the guarantee they give
 * ([[StatisticsProof]], the reader's own first proof), or the split holds no row group.
 *
 * It decides from footers alone: those the driver's [[MetadataCache]] holds, and, when at most
 * `maxFooterReads` of the scan's files are not cached, those it reads (8 at a time in the JVM, through the
 * cache, so the tasks of a local session find them). With the cache off it reads none (each kept
 * split's task would read its footer again). A split is kept whenever anything stands in
 * the way of a proof: a footer that cannot be read or checked, a file lmspark would hand to
 * Spark's reader, a chunk whose footer fields fail [[FooterChecks]] (the task then raises the
 * error as before). So the rows a scan produces never change, only the tasks that would produce
 * none are gone.
 *
 * The same footers give each split's weight for [[SplitPacker]]: the bytes lmspark reads from it
 * (the chunks of the columns it reads, in the row groups it assigns the split and statistics do not
 * skip). A scan that prunes nothing (no filter, or split pruning off) still weighs its splits, from
 * the footers the driver's cache holds only.
 */
object SplitPruner extends Logging {

  /** What pruning did for one scan: `input` are the scan's partitions as Spark made them; `kept`
    * the partitions left, each with only its kept splits (re-indexed from 0; partitions left with
    * no split are gone), `parents` the index each had; the counts are for EXPLAIN and metrics;
    * `decision` says in words what was decided and from what. */
  final case class Outcome(decision: String, input: Seq[FilePartition], kept: Seq[FilePartition], parents: Seq[Int],
      splits: Int, dropped: Int, rowGroupsDropped: Long, footersRead: Int, footersCached: Int, timeNs: Long,
      weights: Map[PartitionedFile, Long] = Map.empty)

  /** The most footers read at once. */
  private val ReadThreads = 8

  private final case class FileId(path: Path, size: Long, modificationTime: Long)

  /** Drops the splits the footers prove empty when `dropSplits` (split pruning on), and weighs the
    * splits whose footer it has when `weigh` (packing on). */
  def prune(partitions: Seq[FilePartition], settings: ScanSettings, conf: Configuration, sqlConf: SQLConf,
      maxFooterReads: Int, dropSplits: Boolean = true, weigh: Boolean = false): Outcome = {
    val t0 = System.nanoTime()
    val splits = partitions.map(_.files.length).sum
    val cacheOn = settings.open.metadataCacheMaxBytes > 0
    val why =
      if (!dropSplits) Some("split pruning is off")
      else if (settings.predicate == Predicate.True) Some("no filter lmspark prunes with")
      else if (!settings.pruneStatistics && !settings.pruneGuarantees) Some("statistics and guarantees are off")
      else None
    def unchanged(why: String) = Outcome(why, partitions, partitions, partitions.indices, splits, 0, 0L, 0, 0, System.nanoTime() - t0)
    if (why.isDefined && (!weigh || !cacheOn)) return unchanged(why.get)

    val byFile: Map[FileId, Seq[PartitionedFile]] =
      partitions.flatMap(_.files).groupBy(f => FileId(f.toPath, f.fileSize, f.modificationTime))
    val (cached, uncached) = byFile.keys.toSeq.partition(id =>
      cacheOn && MetadataCache.contains(Some(FileKey(id.path.toString, id.size, id.modificationTime)), MetadataCache.Footer))
    // Without the cache, a footer read here would be read again by the task of every kept split.
    // Footers are read only to prune; weighing alone uses the cached ones.
    val toRead = if (why.isEmpty && cacheOn && uncached.size <= maxFooterReads) uncached else Nil
    val outcomes = decideAll(cached ++ toRead, byFile, settings, conf, sqlConf)
    val weights = outcomes.flatMap(_.weights).toMap
    if (why.isDefined)
      return unchanged(why.get).copy(weights = weights, footersCached = outcomes.size, timeNs = System.nanoTime() - t0)
    val dropped: Set[PartitionedFile] = outcomes.flatMap(_.dropped).toSet
    val left = partitions.zipWithIndex.map { case (p, i) => (p.files.filterNot(dropped.contains), i) }
      .filter(_._1.nonEmpty)
    val kept = left.zipWithIndex.map { case ((files, _), i) => FilePartition(i, files) }
    val read = outcomes.count(o => !o.cached)
    val budget =
      if (!cacheOn) "; the metadata cache is off, so no footer was read"
      else if (toRead.isEmpty && uncached.nonEmpty)
        s"; ${uncached.size} files without a cached footer are more than maxFooterReads $maxFooterReads, kept whole"
      else ""
    Outcome(s"dropped ${dropped.size} of $splits splits by statistics (footers: ${outcomes.size - read} cached, " +
      s"$read read)$budget", partitions, kept, left.map(_._2), splits, dropped.size, outcomes.map(_.rowGroups).sum, read,
      outcomes.size - read, System.nanoTime() - t0, weights.filter { case (f, _) => !dropped.contains(f) })
  }

  /** One file's result: the splits to drop, their row groups, whether its footer was cached, and
    * each split's weight (the bytes lmspark reads from it; none when the file would not be read by
    * lmspark or a footer check fails). */
  private final case class FileOutcome(dropped: Seq[PartitionedFile], rowGroups: Long, cached: Boolean,
      weights: Seq[(PartitionedFile, Long)])

  private def decideAll(files: Seq[FileId], byFile: Map[FileId, Seq[PartitionedFile]], settings: ScanSettings,
      conf: Configuration, sqlConf: SQLConf): Seq[FileOutcome] = {
    def one(id: FileId): Option[FileOutcome] = SQLConf.withExistingConf(sqlConf)(decide(id, byFile(id), settings, conf))
    if (files.size <= 1) files.flatMap(one)
    else {
      val futures = files.map(id => readers.submit(new Callable[Option[FileOutcome]] { def call() = one(id) }))
      try futures.flatMap(_.get())
      finally futures.foreach(_.cancel(true))
    }
  }

  /** The threads that read and decide footers, shared by the scans of the JVM: at most
    * [[ReadThreads]], each ended after a minute idle. (A pool made per scan cost a repeated point
    * query about 5 ms of thread starts.) */
  private lazy val readers: ThreadPoolExecutor = {
    val pool = new ThreadPoolExecutor(ReadThreads, ReadThreads, 60L, TimeUnit.SECONDS,
      new LinkedBlockingQueue[Runnable](), DaemonThreads)
    pool.allowCoreThreadTimeOut(true)
    pool
  }

  /** What a file's footer proves for one scan: for each row group of the footer, whether its
    * statistics skip it and the bytes lmspark reads from it (None: the file is kept whole and not
    * weighed), and which row groups each split reads. */
  private final class FileProof(val rowGroups: Option[(Array[Boolean], Array[Long])], val assignment: RowGroupAssignment) {
    def skipped: Option[Array[Boolean]] = rowGroups.map(_._1)
  }

  /** The splits of one file its footer proves empty; None when the footer cannot be had. The proof
    * is made once for the file's every row group, and kept in the [[MetadataCache]] for the scan's
    * exact settings (a later query like it decides without converting the footer again). When the
    * read plan or the footer checks refuse the file, or a check fails anywhere in it, every split of
    * the file is kept. */
  private def decide(id: FileId, splits: Seq[PartitionedFile], settings: ScanSettings,
      conf: Configuration): Option[FileOutcome] = {
    val path = id.path
    val key = if (settings.open.metadataCacheMaxBytes > 0) Some(FileKey(path.toString, id.size, id.modificationTime)) else None
    val lookups = new CacheStats
    var footerCached = false
    // Besides the scan's settings, parquet-java's conversion of binary statistics follows the conf.
    val proofKey = MetadataCache.SplitProof((settings, conf.get("parquet.strings.signed-min-max.enabled")))
    val proof = try Some(MetadataCache.getOrLoad(key, proofKey, lookups) {
        val f = FooterReader.fileFooter(conf, path, id.size, id.modificationTime, settings.open)
        footerCached = f.cached
        val p = new FileProof(prove(path.toString, id.size, f, settings), f.assignment)
        (p, f.assignment.heapBytes + p.skipped.fold(0L)(_.length * 9L))
      })
      catch { case NonFatal(e) => logInfo(s"lmspark keeps the splits of $path at planning: $e"); None }
    proof.map { p =>
      val perSplit = p.rowGroups.toSeq.flatMap { case (skip, bytes) =>
        splits.map { split =>
          val groups = p.assignment.groupsOf(split.start, split.length)
          (split, groups, groups.iterator.filterNot(skip).map(bytes).sum)
        }
      }
      val empty = perSplit.collect { case (split, groups, _) if groups.forall(p.skipped.get) => split -> groups.length.toLong }
      FileOutcome(empty.map(_._1), empty.map(_._2).sum, footerCached || lookups.hits > 0,
        perSplit.map { case (split, _, weight) => split -> weight })
    }
  }

  /** Per row group of `f`, whether its statistics skip it, and the stored bytes of the chunks of
    * the columns lmspark reads in it; None when lmspark would not read the file or a footer check
    * fails. */
  private def prove(path: String, size: Long, f: FileFooter, settings: ScanSettings): Option[(Array[Boolean], Array[Long])] =
    try {
      FileReadPlan.build(f.footer, settings.fileSchema, settings, f.unknownLogicalTypes).toOption.map { plan =>
        FooterChecks.check(path, f.footer, FooterChecks.FileBounds(size, f.footerStart), f.index, plan.leaves)
        val proof = new StatisticsProof(plan, settings.predicate, settings)
        val blocks = f.footer.getBlocks.asScala.toArray
        (blocks.map(b => proof.skip(b).isDefined),
          blocks.map(b => plan.leaves.iterator.map(d => FileReadPlan.chunkOf(b, d).getTotalSize).sum))
      }
    } catch { case NonFatal(e) => logInfo(s"lmspark keeps the splits of $path at planning: $e"); None }

  private object DaemonThreads extends ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, "lmspark-split-pruning")
      t.setDaemon(true)
      t
    }
  }
}
