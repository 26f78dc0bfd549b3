package lmspark.io

/** The file bytes `[offset, offset + length)`. */
final case class ByteRange(offset: Long, length: Long) {
  require(offset >= 0 && length >= 0, s"byte range [$offset, +$length)")
  def end: Long = offset + length
}

object ByteRange {

  /** `ranges` sorted by offset, with ranges that overlap, touch or lie at most `maxGap` bytes apart
    * merged into one (the gap read through), empty ranges dropped. */
  def merge(ranges: Seq[ByteRange], maxGap: Long): IndexedSeq[ByteRange] = {
    val sorted = ranges.filter(_.length > 0).sortBy(_.offset)
    val merged = lmspark.selection.ByteRanges.merge(sorted.map(_.offset).toArray, sorted.map(_.end).toArray, maxGap)
    (0 until merged.size).map(i => ByteRange(merged.start(i), merged.end(i) - merged.start(i)))
  }

  /** `ranges` with each one longer than `maxBytes` cut into consecutive pieces of at most that many
    * bytes (in order; nothing is cut when `maxBytes` is not positive). */
  def split(ranges: IndexedSeq[ByteRange], maxBytes: Long): IndexedSeq[ByteRange] =
    if (maxBytes <= 0 || ranges.forall(_.length <= maxBytes)) ranges
    else ranges.flatMap { r =>
      val n = (r.length + maxBytes - 1) / maxBytes
      (0L until n).map { i =>
        val from = r.offset + i * maxBytes
        ByteRange(from, math.min(maxBytes, r.end - from))
      }
    }
}
