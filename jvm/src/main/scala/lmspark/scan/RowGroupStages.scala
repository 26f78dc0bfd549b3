package lmspark.scan

import scala.util.control.NonFatal

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.BlockMetaData

import lmspark.io.FetchingStream
import lmspark.meta.OpenFile
import lmspark.predicate.Predicate

/** The I/O stages of one split's row groups: what a row group's first stage fetches (its filtered
  * columns, or all of them when it is read whole, its candidate pages are few, or the last row group
  * read filter-first needed every page of its other columns), the stage after
  * it, how a stage's requests are spread, and what is fetched ahead while a row group decodes (the
  * next one decided and its first stage; without a predicate, the following row groups together;
  * for a read of wanted rows, all its row groups' pages at once), within the prefetch bounds. It
  * holds the current row group's fetches until [[release]].
  *
  * Invariants: `ahead` holds the decisions and first-stage fetches of row groups not opened yet;
  * `stageFetches` those of the current row group. Not thread-safe. */
private[scan] final class RowGroupStages(file: OpenFile, plan: FileReadPlan, settings: ScanSettings,
    sources: ChunkSources, pruner: RowGroupPruner, present: Array[Int]) {

  private[this] val blocks = file.footer.getBlocks

  /** The fetches of the current row group's stages, released when it is done. */
  private[this] var stageFetches: List[FetchingStream.Fetch] = Nil
  /** Whether the last row group read filter-first needed every page of the columns its second stage
    * read (its selection touched them all, or they have no offset index to skip by): its two stages
    * fetched the same bytes one stage would have ([[firstStage]]). False after a row group no row of
    * which passed (its other columns were not read). */
  private[this] var restDense = false
  /** Row groups (by split index) decided ahead, with what was fetched for them (the chunks their
    * decision fetched, their first stage). */
  private[this] val ahead = scala.collection.mutable.Map.empty[Int, (RowGroupDecision, List[FetchingStream.Fetch])]

  /** What the pruner decides for `block` (every row group is read whole without a predicate), and
    * what it fetched for the row group's read (released at once when the row group is skipped). */
  private def decideHolding(block: BlockMetaData, blockIndex: Int): (RowGroupDecision, FetchingStream.Fetch) =
    if (pruner == null) (RowGroupDecision.Read(RowGroupPlan.whole(blockIndex, block.getRowCount, plan.columns.length)),
      FetchingStream.Fetch.Empty)
    else {
      val d = try pruner.decide(block, blockIndex) catch { case NonFatal(e) => pruner.takeHeld().release(); throw e }
      val h = pruner.takeHeld()
      d match {
        case _: RowGroupDecision.Skip => h.release(); (d, FetchingStream.Fetch.Empty)
        case _ => (d, h)
      }
    }

  /** What the pruner decides for the current row group `block`; what it fetched is the row group's. */
  def decide(block: BlockMetaData, blockIndex: Int): RowGroupDecision = {
    val (d, h) = decideHolding(block, blockIndex)
    stageFetches ::= h
    d
  }

  /** The leaf chunks reading `cols` (plan columns) of `p` takes ([[FileReadPlan.readColumns]]), with
    * their plan column and fetch. */
  private def leaves(p: RowGroupPlan, cols: Iterable[Int]): Seq[(Int, ColumnDescriptor, Option[ColumnFetch])] =
    cols.toSeq.flatMap(plan.readColumns).distinct.sorted.map { i =>
      val ColumnPlan.Present(d, _, _) = plan.columns(i): @unchecked
      (i, d, p.fetches(i))
    }

  /** The columns a row group's first fetch takes: all of them, whole chunks, with
    * [[ScanSettings.wholeChunks]]; all of them when it is decoded whole, when the
    * page index left few candidate pages (`singleStageMaxBytes` over all columns: one round trip
    * instead of two, its requests [[spread]]), when the other columns' candidate pages are no
    * more bytes than a round trip is worth (`maxCoalesceGap`, the gap read through rather than
    * split into two requests: reading them with the filtered columns saves the second stage's
    * round trip), or when the last row group read filter-first needed every page of its other
    * columns ([[restDense]]: rows passing all over the row group; unless `singleStageMaxBytes` is
    * 0) and all its columns fit, with the row groups fetched ahead, in what a task may hold (one
    * round trip and fewer requests for the bytes the second stage would fetch anyway, and fetched
    * ahead); else the filtered columns. */
  private def firstStage(block: BlockMetaData, p: RowGroupPlan, filters: Map[Int, Predicate],
      whole: Boolean): Stage = {
    val all = leaves(p, present.toSeq)
    if (settings.wholeChunks) return new Stage(all, FetchingStream.Spread.No)
    val few = p.selection.isDefined && sources.cost(block, p, all)._2 <= settings.singleStageMaxBytes
    if (filters.isEmpty || whole || few) new Stage(all, if (few) spread else FetchingStream.Spread.No)
    else {
      val filtered = leaves(p, filters.keys)
      val others = all.filterNot(filtered.contains)
      val fetchesAhead = file.stream.maxBytes > 0
      def othersSmall = sources.cost(block, p, others)._2 <= settings.maxCoalesceGap
      def denseFits = restDense && settings.singleStageMaxBytes > 0 &&
        sources.cost(block, p, all)._2 <= file.stream.maxBytes / (RowGroupStages.AheadRowGroups + 1)
      new Stage(if (fetchesAhead && (othersSmall || denseFits)) all else filtered, FetchingStream.Spread.No)
    }
  }

  /** How a row group's few candidate pages are cut into parallel pieces: each its own call when
    * statistics leave the split at most one row group, so that its fetch is all the task waits for
    * (a point lookup); otherwise in one call, where the connector merges adjacent pieces back up to
    * its largest request (the next row group's fetch overlaps this one's decoding, and more pieces
    * would mostly add requests). */
  private lazy val spread: FetchingStream.Spread =
    if (pruner != null && pruner.keptByStatistics <= 1) FetchingStream.Spread.Apart else FetchingStream.Spread.Merged

  /** A fetch's columns (requested column, leaf, fetch), and how its requests are spread; with
    * [[ScanSettings.wholeChunks]], their whole chunks. */
  private final class Stage(val columns: Seq[(Int, ColumnDescriptor, Option[ColumnFetch])], cut: FetchingStream.Spread) {
    def fetch(block: BlockMetaData, p: RowGroupPlan): FetchingStream.Fetch =
      if (settings.wholeChunks) sources.fetchWhole(block, columns) else sources.fetch(block, p, columns, cut)
  }

  /** Fetches ahead while the current row group decodes: the next [[RowGroupStages.AheadRowGroups]]
    * row groups to read decided and their first stages fetched ([[firstStage]], whole when the
    * split's row groups have been decoded whole lately), each within `prefetchMaxRequests` requests,
    * all within the bytes a task may hold. A failed decision is left for its turn, which fails the
    * same way, and nothing past it is fetched ahead. */
  def prefetchNext(nextBlock: Int, filtersOf: RowGroupPlan => Map[Int, Predicate],
      likelyWhole: Map[Int, Predicate] => Boolean): Unit =
    if (settings.prefetchMaxRequests > 0 && file.stream.maxBytes > 0) {
      if (pruner == null) prefetchWhole(nextBlock)
      else {
        var j = nextBlock
        var read = 0
        var more = true
        while (more && j < blocks.size() && read < RowGroupStages.AheadRowGroups) {
          prefetchOne(j, filtersOf, likelyWhole) match {
            case Some(true) => read += 1
            case Some(false) => // pruned or empty: nothing to fetch, look further
            case None => more = false
          }
          j += 1
        }
      }
    }

  /** Without a predicate every row group is read whole: the following row groups not fetched yet
    * are fetched together, in one call with their ranges merged, as many as the request and byte
    * bounds allow (so a full scan takes a few large reads, not one per row group); the bytes are
    * released when the last of them is done. */
  private def prefetchWhole(nextBlock: Int): Unit = {
    var j = nextBlock
    while (ahead.contains(j)) j += 1
    val room = file.stream.maxBytes - file.stream.bytesHeld
    val picked = scala.collection.mutable.ArrayBuffer.empty[(Int, RowGroupPlan, Seq[lmspark.io.ByteRange])]
    var requests = 0
    var bytes = 0L
    var more = true
    while (more && j < blocks.size()) {
      val block = blocks.get(j)
      if (block.getRowCount > 0) {
        val p = RowGroupPlan.whole(j, block.getRowCount, plan.columns.length)
        val cols = leaves(p, present.toSeq)
        val (r, b) = sources.cost(block, p, cols)
        if (requests + r <= settings.prefetchMaxRequests && bytes + b <= room) {
          picked += ((j, p, sources.ranges(block, p, cols)))
          requests += r
          bytes += b
        } else more = false
      }
      if (more) j += 1
    }
    if (picked.nonEmpty) {
      // One set of ranges, merged across row groups too; released with the last of them.
      val fetch = file.stream.fetch(picked.flatMap(_._3).toSeq, settings.maxCoalesceGap)
      val last = picked.last._1
      picked.foreach { case (i, p, _) => ahead(i) = (RowGroupDecision.Read(p), if (i == last) List(fetch) else Nil) }
    }
  }

  /** A read of `wanted` rows (a top-k's second pass): every row group holding one, its pages
    * decided and fetched now, in one call (one round trip for the split, not one per row group in
    * turn), as many row groups as the request and byte bounds allow; the others, and one whose
    * decision fails (it fails again in its turn, with the error named there), are fetched when
    * reached. Each row group's bytes are released when it is done. */
  def prefetchWanted(wanted: WantedRows): Unit =
    if (settings.prefetchMaxRequests > 0 && file.stream.maxBytes > 0) {
      val room = file.stream.maxBytes - file.stream.bytesHeld
      val picked = scala.collection.mutable.ArrayBuffer.empty[(Int, RowGroupPlan, Seq[lmspark.io.ByteRange])]
      var requests = 0
      var bytes = 0L
      var start = 0L
      var j = 0
      var more = true
      while (more && j < blocks.size()) {
        val block = blocks.get(j)
        wanted.within(start, block.getRowCount).foreach { rows =>
          val p = try Some(pruner.selectRows(block, j, rows)) catch { case NonFatal(_) => None }
          more = p.exists { p =>
            val cols = leaves(p, present.toSeq)
            val (r, b) = sources.cost(block, p, cols)
            val fits = requests + r <= settings.prefetchMaxRequests && bytes + b <= room
            if (fits) {
              picked += ((j, p, sources.ranges(block, p, cols)))
              requests += r
              bytes += b
            }
            fits
          }
        }
        start += block.getRowCount
        j += 1
      }
      if (picked.nonEmpty) {
        val fetches = file.stream.fetchAll(picked.map(_._3).toSeq, settings.maxCoalesceGap)
        picked.zip(fetches).foreach { case ((i, p, _), f) => ahead(i) = (RowGroupDecision.Read(p), List(f)) }
      }
    }

  /** Row group `j`, decided now, and its first stage fetched ([[firstStage]]): Some(true) when it
    * is read and its first stage was fetched now, or it was decided ahead already (its first stage
    * then held, or left for its turn by the bounds), Some(false) when there is nothing to fetch for
    * it (no rows, or pruned), None when its decision failed or its first stage is past the bounds
    * now (it is fetched in its turn). */
  private def prefetchOne(j: Int, filtersOf: RowGroupPlan => Map[Int, Predicate],
      likelyWhole: Map[Int, Predicate] => Boolean): Option[Boolean] = {
    if (ahead.contains(j)) return Some(ahead(j)._1.isInstanceOf[RowGroupDecision.Read])
    val block = blocks.get(j)
    if (block.getRowCount == 0) return Some(false)
    val decided = try Some(decideHolding(block, j)) catch { case NonFatal(_) => None }
    if (decided.isEmpty) return None
    val (decision, held) = decided.get
    val fetch = decision match {
      case RowGroupDecision.Read(p) =>
        val filters = filtersOf(p)
        val first = firstStage(block, p, filters, whole = filters.nonEmpty && likelyWhole(filters))
        val (requests, bytes) = sources.cost(block, p, first.columns)
        if (requests <= settings.prefetchMaxRequests && bytes <= file.stream.maxBytes - file.stream.bytesHeld)
          Some(first.fetch(block, p))
        else None
      case _ => Some(FetchingStream.Fetch.Empty)
    }
    ahead(j) = (decision, List(held, fetch.getOrElse(FetchingStream.Fetch.Empty)))
    fetch.map(_ => decision.isInstanceOf[RowGroupDecision.Read])
  }

  /** A row group's decision made ahead ([[prefetchNext]]), its fetch now the row group's; None when
    * it was not decided ahead. */
  def takeAhead(blockIndex: Int): Option[RowGroupDecision] =
    ahead.remove(blockIndex).map { case (d, fs) => stageFetches = fs ::: stageFetches; d }

  /** Fetches the first stage of a row group read filter-first: its filtered columns (or all of
    * them, when few candidate pages make one round trip of it). */
  def fetchFirst(block: BlockMetaData, p: RowGroupPlan, filters: Map[Int, Predicate]): Unit =
    stageFetches ::= firstStage(block, p, filters, whole = false).fetch(block, p)

  /** Fetches `columns` (plan columns) of `rowGroup`, the stage that reads them; its few
    * candidate pages spread as [[spread]] says (with [[ScanSettings.wholeChunks]], their whole
    * chunks: nothing, when the first stage fetched them). `afterPass`: the row group was read
    * filter-first, and `rowGroup` holds the pages its passing rows need. */
  def fetchRest(block: BlockMetaData, rowGroup: RowGroupPlan, columns: Iterable[Int], afterPass: Boolean): Unit = {
    val rest = leaves(rowGroup, columns)
    if (afterPass) restDense = rest.nonEmpty && rest.forall(_._3.forall(_.pruned == 0))
    val few = !settings.wholeChunks && rowGroup.selection.isDefined &&
      sources.cost(block, rowGroup, rest)._2 <= settings.singleStageMaxBytes
    stageFetches ::= new Stage(rest, if (few) spread else FetchingStream.Spread.No).fetch(block, rowGroup)
  }

  /** A row group read filter-first had no row passing: its other columns were not read. */
  def nonePassed(): Unit = restDense = false

  /** Releases the current row group's fetches. */
  def release(): Unit = { stageFetches.foreach(_.release()); stageFetches = Nil }
}

private[scan] object RowGroupStages {

  /** Row groups to read whose first stages are fetched ahead: a round trip to an object store
    * (tens of milliseconds) takes several times a row group's decoding, so with one in flight the
    * task would wait on each. */
  val AheadRowGroups: Int = 4
}
