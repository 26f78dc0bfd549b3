package lmspark.selection

/** Where the data pages of one column chunk are: page `i` holds rows
  * `[firstRowIndex(i), firstRowIndex(i + 1))` (the last one up to `rowCount`) and bytes
  * `[offset(i), offset(i) + compressedSize(i))`. The scan layer fills it from parquet-java's
  * `OffsetIndex`; selections never read files.
  *
  * Invariants (checked, since offset indexes come from other writers): the first page starts at
  * row 0, row starts strictly increase and stay below `rowCount`, offsets are non-negative and
  * strictly increase, sizes are positive. */
final class PageLocations(
    val rowCount: Long,
    firstRowIndex: Array[Long],
    offset: Array[Long],
    compressedSize: Array[Int]) {
  require(firstRowIndex.length == offset.length && offset.length == compressedSize.length,
    s"page locations disagree on the page count: ${firstRowIndex.length} row starts, ${offset.length} offsets, " +
      s"${compressedSize.length} sizes")
  require(firstRowIndex.isEmpty || firstRowIndex(0) == 0, s"the first page starts at row ${firstRowIndex(0)}, not 0")
  require(firstRowIndex.nonEmpty || rowCount == 0, s"no pages for $rowCount rows")
  locally {
    var i = 0
    while (i < firstRowIndex.length) {
      require(firstRowIndex(i) < rowCount, s"page $i starts at row ${firstRowIndex(i)}, not below the $rowCount rows")
      require(i == 0 || firstRowIndex(i) > firstRowIndex(i - 1), s"page $i does not start after page ${i - 1}")
      require(offset(i) >= 0 && compressedSize(i) > 0, s"page $i has offset ${offset(i)} and size ${compressedSize(i)}")
      require(i == 0 || offset(i) >= offset(i - 1) + compressedSize(i - 1),
        s"page $i at byte ${offset(i)} overlaps or precedes page ${i - 1}")
      i += 1
    }
  }

  def pages: Int = firstRowIndex.length
  def firstRow(i: Int): Long = firstRowIndex(i)
  def endRow(i: Int): Long = if (i + 1 < firstRowIndex.length) firstRowIndex(i + 1) else rowCount
  def byteOffset(i: Int): Long = offset(i)
  def byteEnd(i: Int): Long = offset(i) + compressedSize(i)

  /** Row ranges of the pages whose index is not in `kept` (sorted page indexes): what a
    * [[SelectionCursor]] must skip without touching. */
  def prunedRows(kept: Array[Int]): RowRanges = {
    val keep = new Array[Boolean](pages)
    kept.foreach(k => keep(k) = true)
    val idx = (0 until pages).filter(i => !keep(i))
    RowRanges.of(idx.map(i => firstRow(i)).toArray, idx.map(i => endRow(i)).toArray)
  }
}

/** Sorted, disjoint, non-adjacent half-open byte ranges `[start(i), end(i))` to fetch. */
final class ByteRanges(starts: Array[Long], ends: Array[Long]) {
  require(starts.length == ends.length, s"${starts.length} starts for ${ends.length} ends")
  def size: Int = starts.length
  def start(i: Int): Long = starts(i)
  def end(i: Int): Long = ends(i)
  def totalBytes: Long = (0 until size).map(i => ends(i) - starts(i)).sum
  override def toString: String = (0 until size).map(i => s"[${starts(i)}, ${ends(i)})").mkString("ByteRanges(", ", ", ")")
}

object ByteRanges {

  /** The ranges `[starts(i), ends(i))`, given sorted by start, with those that overlap, touch or lie
    * at most `maxGap` bytes apart merged into one (the gap read through): the one merge rule of
    * page ranges and of a read stage's ranges (`lmspark.io.ByteRange.merge`). */
  def merge(starts: Array[Long], ends: Array[Long], maxGap: Long): ByteRanges = {
    val s = new scala.collection.mutable.ArrayBuilder.ofLong
    val e = new scala.collection.mutable.ArrayBuilder.ofLong
    var curS = -1L
    var curE = -1L
    var i = 0
    while (i < starts.length) {
      if (curE >= 0 && starts(i) - curE <= maxGap) curE = math.max(curE, ends(i))
      else {
        if (curE >= 0) { s += curS; e += curE }
        curS = starts(i); curE = ends(i)
      }
      i += 1
    }
    if (curE >= 0) { s += curS; e += curE }
    new ByteRanges(s.result(), e.result())
  }
}

/** Pages that hold at least one selected row, as byte ranges. Neighbouring ranges are coalesced
  * when the gap between them is at most `maxGap` bytes (`spark.lmspark.io.maxCoalesceGap`), which
  * trades a few unneeded bytes for fewer reads. A coalesced range may then carry pruned pages in
  * its gaps; the reader still skips them (the cursor marks them), it only avoids a second request. */
object ScanRanges {

  /** Indexes of the pages of `pages` holding at least one row `selection` selects. One
    * `anySelected` per page: O(log runs) for runs, O(page rows / 64) for a mask. */
  def selectedPages(selection: RowSelection, pages: PageLocations): Array[Int] = {
    require(selection.rowCount <= pages.rowCount,
      s"selection over ${selection.rowCount} rows is longer than the ${pages.rowCount} rows of the pages")
    val b = new scala.collection.mutable.ArrayBuilder.ofInt
    var i = 0
    while (i < pages.pages) {
      if (selection.anySelected(pages.firstRow(i), pages.endRow(i))) b += i
      i += 1
    }
    b.result()
  }

  def of(selection: RowSelection, pages: PageLocations, maxGap: Long): ByteRanges = {
    require(maxGap >= 0, s"negative coalescing gap $maxGap")
    coalesce(pages, selectedPages(selection, pages), maxGap)
  }

  /** Byte ranges of pages `kept` (sorted indexes), merged when at most `maxGap` bytes apart. */
  def coalesce(pages: PageLocations, kept: Array[Int], maxGap: Long): ByteRanges =
    ByteRanges.merge(kept.map(pages.byteOffset), kept.map(pages.byteEnd), maxGap)
}
