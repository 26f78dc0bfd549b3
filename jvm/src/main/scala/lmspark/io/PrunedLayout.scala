package lmspark.io

import org.apache.parquet.format.{PageHeader, PageType}

import lmspark.selection.{PageLocations, ScanRanges}

/** Where a [[PageSource]] of some pages finds them (file offsets), per the chunk's checked offset
  * index `locations`: the dictionary region is `[chunk start, dictionaryLimit)`; data page `i`
  * starts at `pageStart(i)` (-1: pruned, never read) and its coalesced read range ends at
  * `segmentEnd(i)`. `checkRows`: the column is flat, so a v1 page's `num_values` is its row count.
  *
  * It also checks a kept page's header against the offset index (rows, and header + data size):
  * a page index that disagrees with the pages is an error naming the page and the flag that turns
  * page indexes off. Immutable. */
private[io] final class PrunedLayout private (
    val locations: PageLocations,
    val dictionaryLimit: Long,
    pageStart: Array[Long],
    val segmentEnd: Array[Long],
    checkRows: Boolean) {

  /** Where data page `i` starts, or -1 when it was pruned. */
  def start(i: Int): Long = pageStart(i)

  /** The first kept data page, or -1 when none is. */
  def firstKept: Int = pageStart.indexWhere(_ >= 0)

  /** Rows of data page `i`, per the offset index. */
  def rows(i: Int, context: ChunkContext): Int = {
    val n = locations.endRow(i) - locations.firstRow(i)
    if (n > Int.MaxValue) throw context.error(s"page $i of the offset index holds $n rows")
    n.toInt
  }

  /** Checks the header `h` of kept data page `i`, parsed at `start` with its data at `dataStart`. */
  def check(i: Int, h: PageHeader, start: Long, dataStart: Long, context: ChunkContext): Unit = {
    val size = locations.byteEnd(i) - locations.byteOffset(i)
    def mismatch(what: String) =
      context.error(s"data page $i of the offset index (file offset ${locations.byteOffset(i)}) $what " +
        s"(inconsistent page index; ${PrunedLayout.DisableHint})")
    val headerRows = h.getType match {
      case PageType.DATA_PAGE => h.data_page_header.num_values
      case PageType.DATA_PAGE_V2 => h.data_page_header_v2.num_rows
      case t => throw mismatch(s"is a $t page")
    }
    val stored = (dataStart - start) + h.compressed_page_size
    if (stored != size) throw mismatch(s"takes $stored bytes (header and data), the offset index says $size")
    if (checkRows && headerRows != rows(i, context))
      throw mismatch(s"holds $headerRows rows per its header, the offset index says ${rows(i, context)}")
  }
}

private[io] object PrunedLayout {

  /** What to say when a page index is inconsistent with the pages it describes. */
  val DisableHint = "set spark.lmspark.pageIndex.enabled=false to read the file without page indexes"

  /** The layout of the chunk `[start, end)` when only the data pages `kept` (sorted, distinct
    * indexes into `locations`) are read, their byte ranges coalesced across gaps of at most `maxGap`
    * bytes ([[ScanRanges.coalesce]]). Fails when the offset index's pages lie outside the chunk. */
  def apply(context: ChunkContext, locations: PageLocations, kept: Array[Int], maxGap: Long, start: Long, end: Long,
      flat: Boolean): PrunedLayout = {
    require(maxGap >= 0, s"negative coalescing gap $maxGap")
    var k = 0
    while (k < kept.length) {
      require(kept(k) >= 0 && kept(k) < locations.pages && (k == 0 || kept(k) > kept(k - 1)),
        s"kept pages must be sorted, distinct indexes into the ${locations.pages} pages: ${kept.mkString(", ")}")
      k += 1
    }
    val firstData = if (locations.pages > 0) locations.byteOffset(0) else end
    if (firstData < start || (locations.pages > 0 && locations.byteEnd(locations.pages - 1) > end))
      throw context.error(s"the offset index's pages [$firstData, ${locations.byteEnd(locations.pages - 1)}) lie " +
        s"outside the column chunk [$start, $end) (inconsistent page index; $DisableHint)")
    val ranges = ScanRanges.coalesce(locations, kept, maxGap)
    val pageStart = Array.fill(locations.pages)(-1L)
    val segmentEnd = Array.fill(locations.pages)(-1L)
    var r = 0
    var next = 0 // index into kept
    while (r < ranges.size) {
      while (next < kept.length && locations.byteOffset(kept(next)) < ranges.end(r)) {
        pageStart(kept(next)) = locations.byteOffset(kept(next))
        segmentEnd(kept(next)) = ranges.end(r)
        next += 1
      }
      r += 1
    }
    new PrunedLayout(locations, firstData, pageStart, segmentEnd, flat)
  }
}
