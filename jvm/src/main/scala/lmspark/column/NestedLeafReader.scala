package lmspark.column

import org.apache.parquet.column.ColumnDescriptor
import org.apache.spark.sql.execution.vectorized.WritableColumnVector

import lmspark.decode._
import lmspark.io.{DataPageV1, DataPageV2, PageSource}

/** The levels of the records a [[NestedLeafReader]] read: one entry per level pair, in order
  * (`rep(i)`, `defs(i)` for `i < size`), and `slots`, the vector rows written. Grows as needed;
  * [[clear]] empties it for the next batch. */
final class NestedLevels(initial: Int = 1024) {
  var rep: Array[Int] = new Array[Int](initial)
  var defs: Array[Int] = new Array[Int](initial)
  var size: Int = 0
  var slots: Int = 0

  def clear(): Unit = { size = 0; slots = 0 }

  private[column] def reserve(n: Int): Unit = if (size + n > rep.length) {
    val cap = math.min(math.max(size.toLong + n, rep.length * 2L), NestedLevels.MaxEntries.toLong).toInt
    rep = java.util.Arrays.copyOf(rep, cap)
    defs = java.util.Arrays.copyOf(defs, cap)
  }
}

object NestedLeafReader {
  /** For each repetition level r of leaf `d` of `schema` (1 to its maximum), the definition level of
    * its r-th repeated ancestor (the leaf itself when it repeats); index 0 is unused. */
  def repDefs(schema: org.apache.parquet.schema.MessageType, d: ColumnDescriptor): Array[Int] = {
    import org.apache.parquet.schema.Type
    val out = new Array[Int](d.getMaxRepetitionLevel + 1)
    var t: Type = schema
    var defs = 0
    var reps = 0
    d.getPath.foreach { name =>
      t = t.asGroupType.getType(name)
      if (!t.isRepetition(Type.Repetition.REQUIRED)) defs += 1
      if (t.isRepetition(Type.Repetition.REPEATED)) { reps += 1; out(reps) = defs }
    }
    out
  }
}

object NestedLevels {
  /** The most level entries one batch of one leaf may hold (list offsets are ints). */
  val MaxEntries: Int = Int.MaxValue - 64
}

/** The reader of one leaf below a repeated field or an optional group (max repetition level above 0,
  * or max definition level above 1) of one row group, on the shared page loop ([[LeafPageLoop]]).
  * It keeps the repetition and definition levels, and counts records (rows of the row group) by
  * repetition level 0, so that row selections stay in rows: `readRecords(n)` and `skipRecords(n)`
  * take whole records.
  *
  * Values go into a vector at slots: every level entry whose definition level is at least
  * `slotDef` has a slot (the leaf's place in its innermost list, or in its row when no field above
  * repeats), null unless its definition level is the maximum; entries below `slotDef` (an empty or
  * null list, or a null group above it) have none.
  *
  * Page boundaries: a v2 page, and any page of a chunk with an offset index, starts at a record
  * boundary (the spec requires it), so such a page ends its last record and can be skipped whole by
  * its row count (v2 `num_rows`, or the offset index's); a v1 page without one may continue the
  * previous page's record, so its levels are decoded to count records. Without an offset index, a
  * v2 page of a repeated column whose `num_rows` equals its `num_values` is read like such a v1 page
  * ([[v2RowsKnown]]): Arrow C++ before 12.0 (pyarrow 11 and earlier) wrote `num_values` into
  * `num_rows` (apache/arrow#34086), and vanilla Spark reads those files by their levels. A page that
  * starts inside a record where the spec forbids it, levels above their maximum, a v2 page whose
  * `num_rows` disagrees with its levels otherwise, or more records than the row group holds, is an
  * error naming the page.
  *
  * Invariants: `at <= entries` (the current page's decoded levels, consumed up to `at`);
  * `pageRemaining == entries - at`; `open` when the last entry consumed belongs to a record not yet
  * known to be complete; `rowsConsumed` counts complete records (plus the open one once it ends). */
final class NestedLeafReader(
    descriptor: ColumnDescriptor,
    source: PageSource,
    records: Long,
    writer: VectorWriter,
    slotDef: Int,
    preloaded: Dictionary = null,
    repDefs: Array[Int] = null,
    chunkValues: Long = -1L)
    extends LeafPageLoop(descriptor, source, records) {

  private[this] val maxDef = descriptor.getMaxDefinitionLevel
  private[this] val maxRep = descriptor.getMaxRepetitionLevel
  private[this] val defWidth = 32 - Integer.numberOfLeadingZeros(maxDef)
  private[this] val repWidth = 32 - Integer.numberOfLeadingZeros(maxRep)
  require(slotDef >= 0 && slotDef <= maxDef, s"slot definition level $slotDef outside [0, $maxDef] (${ctx.columnPath})")
  require(repDefs == null || repDefs.length == maxRep + 1,
    s"repDefs needs ${maxRep + 1} entries, got ${repDefs.length} (${ctx.columnPath})")
  /** The last definition level of the previous page when a record is open across pages, else -1. */
  private[this] var lastDef = -1

  private[this] var repLv = new Array[Int](1024)
  private[this] var defLv = new Array[Int](1024)
  /** Level entries of the current page, and how many were consumed. */
  private[this] var entries = 0
  private[this] var at = 0
  /** The current page ends at a record boundary (a v2 page whose `num_rows` counts its records, or
    * the chunk has an offset index). */
  private[this] var aligned = false
  /** The last entry consumed belongs to a record not yet known to be complete (only inside a walk). */
  private[this] var open = false

  if (preloaded != null) install(preloaded)

  /** The chunk's `num_values` (its level entries) must be what its data pages hold, when every page's
    * header was read (none pruned): parquet-java reads a chunk by that count. */
  override protected def chunkEnded(): Unit =
    if (chunkValues >= 0 && !prunedSeen && valuesSeen != chunkValues)
      throw pages.error(s"the column chunk's num_values $chunkValues differs from its data pages' $valuesSeen level entries")

  /** The error for malformed input found above this reader (its leaves disagree), naming the page. */
  def malformed(message: String): ParquetDecodeException = pages.error(message)

  /** Records of the row group not yet read or skipped. */
  def recordsLeft: Long = rowCount - rowsConsumed

  /** Reads the next `n` records: appends their levels to `out`, and their slots to `vector` from
    * row `out.slots` on (reserving room as needed; `out.slots` grows by the slots written). */
  def readRecords(n: Int, out: NestedLevels, vector: WritableColumnVector): Unit = {
    if (n < 0) throw new IllegalArgumentException(s"negative record count $n")
    if (n > recordsLeft) throw ctx.error(s"cannot read $n records: only $recordsLeft of $rowCount remain")
    try { walk(n, out, vector); if (recordsLeft == 0) checkEnd() }
    catch translate
  }

  /** Skips the next `n` records: whole pages by their row count where it is known (pages pruned by
    * the page index, v2 pages, pages of a chunk with an offset index), other pages by their levels. */
  def skipRecords(n: Long): Unit = {
    if (n < 0) throw new IllegalArgumentException(s"negative record count $n")
    if (n > recordsLeft) throw ctx.error(s"cannot skip $n records: only $recordsLeft of $rowCount remain")
    try { walk(n, null, null); if (recordsLeft == 0) checkEnd() }
    catch translate
  }

  /** Reads (`out` non-null) or skips entries until `n` more records are complete. A record is
    * complete at the next repetition level 0, at the end of an aligned page, or at the chunk's end. */
  private def walk(n: Long, out: NestedLevels, vector: WritableColumnVector): Unit = {
    var left = n
    while (left > 0) {
      if (at == entries) {
        if (open && aligned) { complete(); left -= 1 }
        else {
          val skipped = nextPage(if (out == null) left else 0L)
          if (skipped < 0) { // the chunk's end
            if (!open) throw noMorePages()
            complete(); left -= 1
          } else left -= skipped
        }
      } else if (maxRep == 0) {
        // Every entry is a whole record (no field above repeats): no record stays open.
        val k = math.min(left, (entries - at).toLong).toInt
        if (rowsConsumed + k > rowCount)
          throw pages.error(s"the chunk holds more records than the row group's $rowCount rows")
        if (out != null) take(at, at + k, out, vector) else values.skip(present(at, at + k))
        at += k
        pageRemaining = entries - at
        rowsConsumed += k
        left -= k
      } else {
        // Record starts are the entries at repetition level 0; the `left`-th start after an open
        // record completes it and stays unconsumed (it opens the next record).
        val rep = repLv
        val end = entries
        var i = at
        var o = open
        var done = 0L
        if (!o) {
          if (rep(i) != 0) throw pages.error(s"repetition level ${rep(i)} where no record is open (level entry $i)")
          o = true
          i += 1
        }
        var stop = false
        while (!stop && i < end) {
          while (i < end && rep(i) != 0) i += 1
          if (i < end) { done += 1; if (done == left) stop = true else i += 1 }
        }
        if (stop) o = false
        if (rowsConsumed + done + (if (o) 1 else 0) > rowCount)
          throw pages.error(s"the chunk holds more records than the row group's $rowCount rows")
        if (out != null) take(at, i, out, vector) else values.skip(present(at, i))
        at = i
        pageRemaining = entries - at
        open = o
        rowsConsumed += done
        left -= done
      }
    }
  }

  /** The open record is complete. */
  private def complete(): Unit = { open = false; rowsConsumed += 1 }

  /** Moves to the next data page and decodes its levels; with `skippable` above 0 and no record open,
    * first skips whole pages whose known row count fits it. Returns the records skipped whole, or
    * -1 at the chunk's end (no page loaded). */
  private def nextPage(skippable: Long): Long = {
    var skipped = 0L
    while (true) {
      if (!nextDataPageHeader()) return if (skipped > 0) skipped else -1L
      val rows = knownRows
      if (!open && rows >= 0 && rows <= skippable - skipped) {
        pages.skipPage()
        rowsConsumed += rows
        skipped += rows
        if (skipped == skippable) return skipped
      } else {
        if (pages.currentPageIsPruned) throw intoPrunedPage("a read or partial skip", math.max(rows, 0))
        loadCurrentPage()
        return skipped
      }
    }
    skipped
  }

  /** The current page's rows when known without decoding it: a pruned page's or an indexed page's
    * per the offset index, a v2 page's `num_rows` when [[v2RowsKnown]]; else -1. */
  private def knownRows: Int =
    if (pages.currentPageIsPruned) pages.currentPageRows
    else if (pages.currentPageIndexRows >= 0) pages.currentPageIndexRows
    else if (pages.currentPageType == org.apache.parquet.format.PageType.DATA_PAGE_V2) {
      val h = pages.currentHeader.data_page_header_v2
      if (v2RowsKnown(h.num_rows, h.num_values)) pages.currentPageRows else -1
    } else -1

  /** Whether a v2 page's `num_rows` counts its records. Not when it equals `num_values` in a
    * repeated column: that is what Arrow C++ before 12.0 wrote for every v2 page (its level count,
    * apache/arrow#34086), and a page whose records are one entry each looks the same, so such a
    * page's records are counted from its levels and it may continue the previous page's record, as
    * a v1 page without an offset index may. */
  private def v2RowsKnown(numRows: Int, numValues: Int): Boolean = maxRep == 0 || numRows != numValues

  /** Entries `[from, until)` with a value (definition level at its maximum). */
  private def present(from: Int, until: Int): Int = {
    val defs = defLv
    val top = maxDef - 1
    var c = 0
    var i = from
    while (i < until) { c += (top - defs(i)) >>> 31; i += 1 } // defs(i) <= maxDef: 1 iff at the maximum
    c
  }

  /** Appends entries `[from, until)` to `out` and writes their slots: values, nulls, or none. */
  private def take(from: Int, until: Int, out: NestedLevels, vector: WritableColumnVector): Unit = {
    val k = until - from
    if (out.size.toLong + k > NestedLevels.MaxEntries)
      throw pages.error(s"a batch of this column holds more than ${NestedLevels.MaxEntries} level entries (a list too long to assemble)")
    out.reserve(k)
    System.arraycopy(repLv, from, out.rep, out.size, k)
    System.arraycopy(defLv, from, out.defs, out.size, k)
    out.size += k
    var slot = out.slots
    vector.reserve(slot + k)
    var i = from
    while (i < until) {
      val d = defLv(i)
      var j = i + 1
      if (d == maxDef) {
        while (j < until && defLv(j) == maxDef) j += 1
        writer.write(values, j - i, vector, slot)
        slot += j - i
      } else if (d >= slotDef) {
        while (j < until && defLv(j) >= slotDef && defLv(j) < maxDef) j += 1
        vector.putNulls(slot, j - i)
        slot += j - i
      } else while (j < until && defLv(j) < slotDef) j += 1
      i = j
    }
    out.slots = slot
  }

  private def loadCurrentPage(): Unit = {
    val indexRows = pages.currentPageIndexRows
    pages.readDataPage() match {
      case p: DataPageV1 =>
        levelsFor(p.numValues)
        var off = p.offset
        if (maxRep > 0) {
          v1Levels(p, off, p.repetitionLevelEncoding, repWidth, repetition = true).readInts(entries, repLv, 0)
          off = levelsEnd
        } else java.util.Arrays.fill(repLv, 0, entries, 0)
        if (maxDef > 0) {
          v1Levels(p, off, p.definitionLevelEncoding, defWidth, repetition = false).readInts(entries, defLv, 0)
          off = levelsEnd
        } else java.util.Arrays.fill(defLv, 0, entries, 0)
        aligned = indexRows >= 0
        val nulls = check(indexRows, -1)
        initValues(p.valueEncoding, p.bytes, off, p.offset + p.length - off, entries - nulls)
      case p: DataPageV2 =>
        levelsFor(p.numValues)
        if (maxRep > 0) v2Levels(p.levelBytes, p.levelOffset, p.repLevelsLength, repWidth, repetition = true)
          .readInts(entries, repLv, 0)
        else java.util.Arrays.fill(repLv, 0, entries, 0)
        if (maxDef > 0) v2Levels(p.levelBytes, p.levelOffset + p.repLevelsLength, p.defLevelsLength, defWidth,
          repetition = false).readInts(entries, defLv, 0)
        else java.util.Arrays.fill(defLv, 0, entries, 0)
        val known = v2RowsKnown(p.numRows, p.numValues)
        aligned = indexRows >= 0 || known
        check(if (indexRows >= 0) indexRows else if (known) p.numRows else -1, p.numNulls)
        initValues(p.valueEncoding, p.valueBytes, p.valueOffset, p.valueLength, entries - p.numNulls)
    }
    at = 0
    pageRemaining = entries
  }

  /** Sizes the level arrays for a page of `n` entries, which the chunk's `num_values` bounds: the
    * headers passed so far (this page's included) may not hold more (a count no array could hold
    * is an error, not an allocation). */
  private def levelsFor(n: Int): Unit = {
    if (n < 0) throw pages.error(s"data page has negative num_values $n")
    if (chunkValues >= 0 && valuesSeen > chunkValues)
      throw pages.error(s"data page has num_values $n, which takes its chunk's data pages to at least $valuesSeen " +
        s"level entries, more than the column chunk's num_values $chunkValues")
    if (repLv.length < n) { repLv = new Array[Int](math.max(n, repLv.length * 2)); defLv = new Array[Int](repLv.length) }
    entries = n
  }

  /** Checks the current page's levels: within their maxima, a first entry that starts a record where
    * the page must start one (`aligned`) or no record is open, `rows` records when known (>= 0) and
    * `nulls` entries below the maximum definition level when known (>= 0). Returns the entries
    * below the maximum definition level (those without a value). */
  private def check(rows: Int, nulls: Int): Int = {
    // One branch-free pass: levels within [0, max] (a negative `bad` otherwise), record starts and
    // entries below the maximum definition level; then the list rule for repeating entries. On any
    // violation, the exact pass below names the first offending entry.
    val rep = repLv
    val defs = defLv
    val n = entries
    val mr = maxRep
    val md = maxDef
    var bad = 0
    var starts = 0
    var below = 0
    var i = 0
    while (i < n) {
      val r = rep(i)
      val d = defs(i)
      bad |= r | (mr - r) | d | (md - d)
      starts += (r - 1) >>> 31
      below += (d - md) >>> 31
      i += 1
    }
    if (bad < 0) return checkExactly(rows, nulls)
    if (repDefs != null && mr > 0) {
      val rd = repDefs // rd(0) is 0: an entry starting a record needs nothing
      var viol = 0
      i = 1
      while (i < n) {
        val need = rd(rep(i))
        viol |= (defs(i) - need) | (defs(i - 1) - need)
        i += 1
      }
      if (viol < 0 || (n > 0 && rep(0) > 0 && open && !aligned)) return checkExactly(rows, nulls)
    }
    finishCheck(rows, nulls, starts, below)
  }

  /** [[check]] entry by entry, naming the first entry that breaks a rule. */
  private def checkExactly(rows: Int, nulls: Int): Int = {
    var starts = 0
    var below = 0
    var i = 0
    while (i < entries) {
      val r = repLv(i)
      val d = defLv(i)
      if (r < 0 || r > maxRep) throw pages.error(s"repetition level $r outside [0, $maxRep] (level entry $i)")
      if (d < 0 || d > maxDef) throw pages.error(s"definition level $d outside [0, $maxDef] (level entry $i)")
      if (r > 0 && repDefs != null && (i > 0 || (open && !aligned))) { // (a first entry otherwise: below)
        val need = repDefs(r)
        if (d < need)
          throw pages.error(s"level entry $i repeats at level $r but its definition level $d leaves that list " +
            s"undefined (below $need)")
        val prev = if (i > 0) defLv(i - 1) else lastDef
        if (prev < need)
          throw pages.error(s"level entry $i repeats at level $r, continuing a list the previous entry left " +
            s"empty or null (definition level $prev, below $need)")
      }
      if (r == 0) starts += 1
      if (d < maxDef) below += 1
      i += 1
    }
    finishCheck(rows, nulls, starts, below)
  }

  /** The page-level rules of [[check]], given the page's record starts and entries without a value. */
  private def finishCheck(rows: Int, nulls: Int, starts: Int, below: Int): Int = {
    if (entries > 0 && repLv(0) != 0) {
      if (aligned)
        throw pages.error(s"page starts inside a record (repetition level ${repLv(0)}), but pages must start at " +
          "record boundaries in a chunk with an offset index and in v2 pages")
      if (!open) throw pages.error(s"page starts inside a record (repetition level ${repLv(0)}) but no record is open")
    }
    if (entries > 0) lastDef = defLv(entries - 1)
    if (rows >= 0 && starts != rows)
      throw pages.error(s"data page holds $starts records per its repetition levels, but its header or offset index says $rows")
    if (nulls >= 0 && below != nulls)
      throw pages.error(s"data page v2 has num_nulls $nulls but its definition levels hold $below")
    if (rowsConsumed + (if (open) 1 else 0) + starts > rowCount)
      throw pages.error(s"data page starts $starts records but only ${rowCount - rowsConsumed - (if (open) 1 else 0)} " +
        s"of the row group's $rowCount rows remain")
    below
  }
}
