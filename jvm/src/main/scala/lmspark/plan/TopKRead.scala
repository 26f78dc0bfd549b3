package lmspark.plan

import scala.jdk.CollectionConverters._

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{JoinedRow, UnsafeProjection}
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.lmspark.SparkTopK
import org.apache.spark.sql.types.{DataType, LongType}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import lmspark.predicate.Predicate
import lmspark.scan.{RowGroupSlice, SplitRead, SplitSlices, WantedRows}

/**
 * Late materialization for a top-k straight over a scan (`ORDER BY ... LIMIT k`), one task's files
 * at a time. Pass 1 reads the sort columns only (`ranked`: the sort columns, then the partition
 * columns) and runs Spark's own per-task top-k ([[SparkTopK]]) over those light rows, each carrying
 * its position (file, row ordinal), in the order Spark's scan yields the rows. Pass 2 reads every
 * column of the kept rows only ([[WantedRows]]) and yields them in the top-k's order.
 *
 * When the first sort key is a column with statistics ([[RankedKey]]), pass 1 reads the task's
 * row groups one by one (each as a split of its own), those whose statistics promise the best rows
 * first, and leaves unread each row group whose statistics prove that all its rows sort strictly
 * after the `k`-th row so far. Its result is kept only when it is the one correct result whatever
 * the order rows come in: no two kept rows compare equal and no row left out compares equal to the
 * last kept ([[TopKThreshold.tiedWith]]). Otherwise pass 1 runs again in Spark's order, row group
 * by row group, leaving those whose rows Spark's top-k would not keep when they come (all sort
 * after its threshold then), which changes nothing in its result. Best-first is tried only when
 * statistics prove it leaves a row group unread ([[bestFirstPays]]); otherwise pass 1 reads in
 * Spark's order from the start. A row group that comes once the top-k holds `k` rows is read with
 * a bound on the first key, the rows sorting at or before the top-k's threshold: the others, which
 * it would not keep, are not ranked, and its pages holding none are not read ([[lightRows]]).
 * On an object store, a row group read on its own waits a round trip, and pass 2's pages cost more
 * requests: there, when `byStats` has a one-pass read ([[OnePass]]), pass 1 reads every output
 * column of each row group in Spark's order, in one request each, and keeps the rows the top-k
 * admits whole, so there is no pass 2 (best-first is not tried: repeated, it would read twice);
 * otherwise `byStats` is None there and pass 1 reads split by split.
 *
 * A table format's dropped rows (Delta's deleted rows) are yielded by both reads, flagged in its
 * mark column, so that rows keep their split ordinals; pass 1 never ranks a flagged row, and pass 2
 * checks that none it yields is flagged. The table format's filter above the scan then drops none.
 *
 * Invariant: the rows a task yields are exactly `Utils.takeOrdered(rows, limit)(ordering)` over the
 * rows Spark's scan yields in that task that are not flagged dropped, in that order, ties included:
 * the ordering compares the sort columns alone, so it ranks each light row as it would rank its full
 * row. `TakeOrderedAndProject` above (through projections and the format's filter) then keeps what it
 * would have kept from Spark's scan.
 *
 * @param ordering the sort order bound to `ranked.types` and a final LONG position column
 * @param byStats the first sort key and how pass 1 may use its statistics, when it may
 */
final class TopKRead(ranked: TopKRead.Pass, full: TopKRead.Pass, constants: TopKRead.Constants,
    ordering: LazilyGeneratedOrdering, limit: Int, byStats: Option[TopKRead.ByStatistics]) extends Serializable {

  import TopKRead._

  /** The task's top `limit` rows of `files`, read in two passes (or one, [[OnePass]]); `rankedRows`
    * counts pass 1's rows, `unread` the row groups pass 1 left by their statistics, `repeated` the
    * passes by statistics that ties made read again in Spark's order. */
  def rows(files: Seq[PartitionedFile], rankedRows: SQLMetric, unread: SQLMetric,
      repeated: SQLMetric): Iterator[InternalRow] = {
    require(files.length < (1 << FileBits), s"a task of ${files.length} files")
    val opened = new java.util.ArrayList[AutoCloseable]
    Option(TaskContext.get()).foreach(_.addTaskCompletionListener[Unit](_ => opened.asScala.foreach(close)))
    val sliced = byStats.flatMap(s => slicesOf(files, s.key).map(s -> _))
    val position = ranked.types.length
    // Each kept row's whole row by its position: kept as ranked in one pass, else read in pass 2.
    val found = new java.util.HashMap[Long, InternalRow]
    val top = sliced match {
      case Some((s, pieces)) if s.onePass.isDefined =>
        inOrder(s, pieces, onePassReads(s.onePass.get, files, found), opened, rankedRows, unread)
      case _ =>
        val reads = PieceReads(ranked.read(_, null), byStats.flatMap(_.bounded), ranked.types.indices, None)
        val top = sliced match {
          case Some((s, pieces)) if bestFirstPays(s.key, pieces) =>
            bestFirst(s, pieces, reads, opened, rankedRows, unread).getOrElse {
              repeated += 1
              inOrder(s, pieces, reads, opened, rankedRows, unread)
            }
          case Some((s, pieces)) => inOrder(s, pieces, reads, opened, rankedRows, unread)
          case None => best(Chosen.of(files.indices.iterator.map(f => Piece(files(f), f, 0L, -1L))),
            new TopKThreshold(limit, ordering), None, reads, opened, rankedRows)
        }
        top.map(_.getLong(position)).groupBy(_ >>> OrdinalBits).toSeq.sortBy(_._1).foreach { case (f, ps) =>
          val ordinals = ps.map(_ & OrdinalMask).sorted
          read(files(f.toInt), ordinals, opened).foreach { case (o, row) => found.put((f << OrdinalBits) | o, row) }
        }
        top
    }
    top.iterator.map { r =>
      val row = found.get(r.getLong(position))
      if (row == null)
        throw new IllegalStateException(s"internal error: top-k row ${r.getLong(position)} was not kept or read again")
      row
    }
  }

  /** The row groups of `files`, each with its slices and its file's index, in Spark's order; None
    * when some file's slices cannot be had, or when there are fewer than two. */
  private def slicesOf(files: Seq[PartitionedFile], k: RankedKey): Option[IndexedSeq[Sliced]] = {
    val sliced = files.map(k.slicer)
    if (sliced.exists(_.isEmpty)) return None
    val all = sliced.zipWithIndex.flatMap { case (s, f) => s.get.slices.map(sl => Sliced(s.get, sl, f)) }.toIndexedSeq
    if (all.length < 2) None else Some(all)
  }

  /** Whether statistics alone prove that pass 1 best-first leaves some row group unread: the row
    * groups that promise the best rows hold `limit` rows sorting at or before a value (the worst of
    * their bounds) that every row of a later row group sorts after. Otherwise the row groups'
    * ranges overlap (the rows are not laid out by the key), best-first would most likely read every
    * row group, and read them all again in Spark's order should the kept rows be tied: pass 1 then
    * reads in Spark's order from the start, where ties do not matter. Both passes give the same
    * rows; this only chooses the one likely to read less. */
  private def bestFirstPays(k: RankedKey, pieces: IndexedSeq[Sliced]): Boolean = {
    val stats = pieces.map(_.slice.stats)
    val order = k.bestFirst(stats)
    var rows = 0L
    var bound: Option[Any] = None
    var i = 0
    while (rows < limit && i < order.length) {
      for (s <- stats(order(i)); (n, w) <- k.worst(s)) { rows += n; bound = Some(bound.fold(w)(k.worse(_, w))) }
      i += 1
    }
    rows >= limit && bound.exists(b => order.drop(i).exists(j => pieces(j).noneMatch(k.notAfter(b))))
  }

  /** Pass 1 best-first: the top-k of the row groups read in the order their statistics promise the
    * best rows, leaving each whose statistics prove all its rows sort after the `k`-th row so far
    * ([[TopKThreshold.cut]]); None when ties would make the result depend on the order rows come
    * in (found at the end, or as soon as the cut is tied and no row still to read can sort before
    * it). */
  private def bestFirst(s: ByStatistics, all: IndexedSeq[Sliced], reads: PieceReads,
      opened: java.util.List[AutoCloseable], rankedRows: SQLMetric, unread: SQLMetric): Option[Array[InternalRow]] = {
    val k = s.key
    val pieces = k.bestFirst(all.map(_.slice.stats)).map(all(_)).toIndexedSeq
    val threshold = new TopKThreshold(limit, ordering)
    var skipped = 0
    var aborted = false
    def leftOut(p: Int): Boolean = threshold.full && {
      val last = threshold.cut
      val cut = k.valueOf(last)
      if (pieces(p).noneMatch(k.notAfter(cut))) { skipped += 1; true }
      else {
        aborted = threshold.tiedWith(last) && pieces.indices.drop(p).forall(q => pieces(q).noneMatch(k.before(cut)))
        false
      }
    }
    val top = best(chosen(pieces, leftOut, () => aborted), threshold, Some(s), reads, opened, rankedRows)
    val unique = top.indices.drop(1).forall(i => ordering.compare(top(i - 1), top(i)) != 0) &&
      (top.isEmpty || !threshold.tiedWith(top.last))
    if (aborted || !unique) None
    else { unread += skipped; Some(top) }
  }

  /** Pass 1 in Spark's order, leaving each row group whose statistics prove all its rows sort after
    * Spark's top-k's threshold when it comes: the top-k would not keep any of them, so its result is
    * the same, ties included. */
  private def inOrder(s: ByStatistics, pieces: IndexedSeq[Sliced], reads: PieceReads,
      opened: java.util.List[AutoCloseable], rankedRows: SQLMetric, unread: SQLMetric): Array[InternalRow] = {
    val k = s.key
    val threshold = new TopKThreshold(limit, ordering)
    def ruledOut(p: Int): Boolean = threshold.full && pieces(p).noneMatch(k.notAfter(k.valueOf(threshold.current)))
    def leftOut(p: Int): Boolean = ruledOut(p) && { unread += 1; true }
    best(chosen(pieces, leftOut, () => false, !ruledOut(_)), threshold, Some(s), reads, opened, rankedRows)
  }

  /** `pieces` in turn, but those `leftOut` names, until `stop`; each decided once, when the rows
    * before it were all ranked. `mayRead` (free of side effects) tells whether a piece could still
    * be read now, for [[Chosen.upcoming]]. */
  private def chosen(pieces: IndexedSeq[Sliced], leftOut: Int => Boolean, stop: () => Boolean,
      mayRead: Int => Boolean = _ => false): Chosen =
    new Chosen {
      private[this] var p = 0
      /** Whether piece `p` was decided to be read (nothing is ranked between `hasNext` and `next`). */
      private[this] var ready = false
      override def hasNext: Boolean = {
        while (!ready && p < pieces.length && !stop()) { if (leftOut(p)) p += 1 else ready = true }
        ready && !stop()
      }
      override def next(): Piece = {
        if (!hasNext) throw new NoSuchElementException("no more row groups")
        val s = pieces(p)
        p += 1
        ready = false
        s.piece
      }
      override def upcoming(): Option[Piece] = (p until pieces.length).find(mayRead).map(pieces(_).piece)
    }

  /** Spark's top-k over the light rows of `pieces`, read in turn (bounded by `byStats`' key, when given,
    * as [[lightRows]] says). */
  private def best(pieces: Chosen, threshold: TopKThreshold, byStats: Option[ByStatistics],
      reads: PieceReads, opened: java.util.List[AutoCloseable], rankedRows: SQLMetric): Array[InternalRow] =
    SparkTopK.takeOrdered(lightRows(pieces, threshold, byStats, reads, opened, rankedRows), limit, ordering).toArray

  /** How the one pass on an object store reads its pieces ([[OnePass]]): every output column, each
    * row the top-k admits kept whole in `kept` by its position (with its file's constant columns). */
  private def onePassReads(one: OnePass, files: Seq[PartitionedFile], kept: java.util.HashMap[Long, InternalRow]): PieceReads = {
    val project = UnsafeProjection.create((full.types ++ constants.types).toArray)
    val joined = files.map(f => new JoinedRow(null, constants.of(f)))
    PieceReads(full.read(_, null), Some(one.bounded), one.light, Some { (f: Int, position: Long, row: InternalRow) =>
      kept.put(position, project(joined(f).withLeft(row)).copy())
      ()
    })
  }

  /** Pass 1: the rows of `pieces` Spark's top-k would keep as they come ([[TopKThreshold]]; the
    * others change nothing in it, and it never sees a dropped row), each as an `UnsafeRow` of the
    * sort columns and its position. A row group (a piece with a file row) that comes once the top-k
    * holds `limit` rows is read, when `byStats` has a bounded read, with the bound `notAfter` the
    * threshold's first key: every row failing it sorts strictly after the threshold, which only
    * rises, so the top-k would not keep it; so its pages that the column index proves hold no row
    * passing the bound are neither read nor decompressed, and its rows are placed by their row index. */
  private def lightRows(pieces: Chosen, threshold: TopKThreshold, byStats: Option[ByStatistics],
      reads: PieceReads, opened: java.util.List[AutoCloseable], rankedRows: SQLMetric): Iterator[InternalRow] = {
    val project = UnsafeProjection.create((ranked.types :+ LongType).toArray)
    val positions = new OnHeapColumnVector(4096, LongType)
    opened.add(positions)
    /** A piece's read, with the bound it was opened with (if any), by the threshold now. */
    def open(piece: Piece): (SplitRead, Option[(Bounded, Predicate)]) = {
      val gate = for {
        s <- byStats
        b <- reads.bounded
        if piece.fileRow >= 0 && threshold.full
        bound = s.key.notAfter(s.key.valueOf(threshold.current))
        if bound != Predicate.True
      } yield (b, bound)
      val read = gate.fold(reads.plain(piece.file)) { case (b, bound) => b.read(piece.file, bound) }
      remember(read, opened)
      (read, gate)
    }
    // In one pass, the next piece that may be read is opened, and its fetch started, while one is
    // ranked (once the top-k is full: a bound taken early is only looser, as the threshold only
    // tightens, and a row failing it sorts after the threshold then, so the top-k would never keep
    // it); dropped, its fetch unused, if it is left out after all.
    var ahead: Option[(Piece, SplitRead, Option[(Bounded, Predicate)])] = None
    pieces.flatMap { piece =>
      val Piece(file, f, firstRow, fileRow) = piece
      val (read, gate) = ahead match {
        case Some((p, r, g)) if p == piece => ahead = None; (r, g)
        case other => other.foreach(a => close(a._2.batches)); ahead = None; open(piece)
      }
      if (reads.keep.isDefined && threshold.full) pieces.upcoming().foreach { next =>
        val (r, g) = open(next)
        r.fetchAhead()
        ahead = Some((next, r, g))
      }
      var ordinal = firstRow
      read.batches.flatMap { b =>
        val batch = b.asInstanceOf[ColumnarBatch]
        val n = batch.numRows()
        positions.reserve(n)
        val base = f.toLong << OrdinalBits
        var i = 0
        gate match {
          case Some((bounded, _)) =>
            // Rows are left out within the row group: each is placed by its row index.
            val index = batch.column(bounded.rowIndex)
            while (i < n) {
              val o = firstRow + (index.getLong(i) - fileRow)
              if (o < firstRow || o > OrdinalMask)
                throw new IllegalStateException(s"internal error: row index ${index.getLong(i)} outside row group at $fileRow of ${file.filePath}")
              positions.putLong(i, base | o)
              i += 1
            }
          case None =>
            if (ordinal + n > OrdinalMask) throw new IllegalStateException(s"a split of more than $OrdinalMask rows")
            while (i < n) { positions.putLong(i, base | (ordinal + i)); i += 1 }
        }
        ordinal += n
        rankedRows += n
        // The read's columns in the layout without the row index, which sits at `rowIndex` when read.
        val skipped = gate.fold(Int.MaxValue)(_._1.rowIndex)
        def column(c: Int): ColumnVector = batch.column(if (c >= skipped) c + 1 else c)
        val light = new ColumnarBatch((reads.light.map(column) :+ (positions: ColumnVector)).toArray, n)
        val whole = reads.keep.map(_ =>
          new ColumnarBatch(Array.tabulate(batch.numCols() - (if (gate.isDefined) 1 else 0))(column), n))
        offer(light, threshold, project, (r: Int) => for (k <- reads.keep; w <- whole) k(f, positions.getLong(r), w.getRow(r)))
      }
    }
  }

  /** The light rows of `view` (the sort columns, the partition columns, the position) Spark's top-k
    * would keep as they come, copied; `admitted` is told each one's row. */
  private def offer(view: ColumnarBatch, threshold: TopKThreshold, project: UnsafeProjection,
      admitted: Int => Unit): Iterator[InternalRow] = {
    val mark = ranked.mark
    Iterator.range(0, view.numRows()).flatMap { r =>
      val row = view.getRow(r)
      if (mark >= 0 && row.getByte(mark) != 0 || !threshold.admits(row)) Iterator.empty
      else {
        val copy = project(row).copy()
        threshold.offered(copy)
        admitted(r)
        Iterator.single(copy: InternalRow)
      }
    }
  }

  /** Pass 2: the rows at `ordinals` (sorted) of `file`, every output column (the read's, then the
    * file's constant metadata columns), with their ordinals. */
  private def read(file: PartitionedFile, ordinals: Array[Long], opened: java.util.List[AutoCloseable]): Seq[(Long, InternalRow)] = {
    val project = UnsafeProjection.create((full.types ++ constants.types).toArray)
    val joined = new JoinedRow(null, constants.of(file))
    val mark = full.mark
    def output(ordinal: Long, row: InternalRow): (Long, InternalRow) = {
      if (mark >= 0 && row.getByte(mark) != 0)
        throw new IllegalStateException(s"internal error: top-k row $ordinal of ${file.filePath} is a dropped row")
      ordinal -> project(joined.withLeft(row)).copy()
    }
    val read = full.read(file, new WantedRows(ordinals))
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
          out += output(ordinals(next), batch.getRow(i))
          next += 1
        } else {
          if (next < ordinals.length && ordinals(next) == ordinal) { out += output(ordinal, batch.getRow(i)); next += 1 }
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
  /** One pass's read of a split (with wanted rows, only those), whose batches' columns have `types`;
    * `mark` is the index of the table format's mark column among them (-1: none), where the read
    * flags every row the format drops ([[lmspark.scan.ScanSettings.flagAllMarked]]). */
  final case class Pass(read: (PartitionedFile, WantedRows) => SplitRead, types: Seq[DataType], mark: Int)

  /** Pass 1's read of a row group with a bound ([[lmspark.scan.LmParquetFileFormat.buildSplitReader]]):
    * its batches' columns are the pass's, with the row index (`_metadata.row_index`, LONG) at
    * `rowIndex` before the partition columns. */
  final case class Bounded(read: (PartitionedFile, Predicate) => SplitRead, rowIndex: Int)

  /** How pass 1 reads row groups one by one by the first sort key's statistics: `key`; `bounded`, the
    * read of such a row group with a bound (None: read whole). */
  final case class ByStatistics(key: RankedKey, bounded: Option[Bounded], onePass: Option[OnePass] = None)

  /** The top-k in one pass, for a table on an object store: pass 1 reads every output column of
    * each row group, in Spark's order, leaving those the top-k's threshold rules out by statistics,
    * each read with the bound on the first key once the top-k holds `k` rows (`bounded`: every
    * output column, then the row index at its `rowIndex`, each row group's whole chunks fetched in
    * one request), so that only the rows passing it are decoded past the sort columns; the rows
    * the top-k admits are kept whole, and there is no pass 2. Each row group read then sends one
    * request, as Spark's reader does, instead of one for its sort columns and more for the kept
    * rows' pages. `light`: the light row's columns (sort columns, then partition columns) among the
    * read's columns (output columns, then partition columns). */
  final case class OnePass(bounded: Bounded, light: IndexedSeq[Int])

  /** How pass 1 reads a piece: `plain` without a bound, `bounded` with one (None: always plain);
    * `light`, the light row's columns among the read's (in its layout without the row index);
    * `keep`, in one pass, given each admitted row's file, position and whole row (the read's
    * columns without the row index, a reused view). */
  private final case class PieceReads(plain: PartitionedFile => SplitRead, bounded: Option[Bounded],
      light: IndexedSeq[Int], keep: Option[(Int, Long, InternalRow) => Unit])

  /** The file-constant metadata columns (`_metadata.file_path` and the like) pass 2 appends to each
    * row read: `of` gives a file's values, of `types`. */
  final case class Constants(types: Seq[DataType], of: PartitionedFile => InternalRow)

  object Constants {
    val None: Constants = Constants(Nil, _ => InternalRow.empty)
  }

  /** A part of a task's file `f` read in pass 1 (the split itself, or one of its row groups), whose
    * first row is the split's row `firstRow` and the file's row `fileRow` (-1: the split itself). */
  private final case class Piece(file: PartitionedFile, f: Int, firstRow: Long, fileRow: Long)

  /** Pieces read in turn; `upcoming` names the next one that could be read now, without deciding it
    * (None: not known). */
  private trait Chosen extends Iterator[Piece] {
    def upcoming(): Option[Piece]
  }

  private object Chosen {
    /** `pieces`, none known ahead. */
    def of(pieces: Iterator[Piece]): Chosen = new Chosen {
      override def hasNext: Boolean = pieces.hasNext
      override def next(): Piece = pieces.next()
      override def upcoming(): Option[Piece] = None
    }
  }

  /** A row group of the task's file `f` as a slice, with what its statistics prove. */
  private final case class Sliced(slices: SplitSlices, slice: RowGroupSlice, f: Int) {
    def noneMatch(p: Predicate): Boolean = slices.noneMatch(slice, p)
    def piece: Piece = Piece(slice.split, f, slice.firstRow, slice.fileRow)
  }

  /** A position: the file's index among the task's files above `OrdinalBits`, the row's ordinal in it below. */
  private val OrdinalBits = 40
  private val OrdinalMask = (1L << OrdinalBits) - 1
  private val FileBits = 63 - OrdinalBits

  private def close(c: AnyRef): Unit = c match {
    case c: AutoCloseable => c.close()
    case _ =>
  }
}
