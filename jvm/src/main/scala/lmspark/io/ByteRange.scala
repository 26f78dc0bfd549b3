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
    val out = IndexedSeq.newBuilder[ByteRange]
    var start = -1L
    var end = -1L
    for (r <- sorted) {
      if (start >= 0 && r.offset - end <= maxGap) end = math.max(end, r.end)
      else {
        if (start >= 0) out += ByteRange(start, end - start)
        start = r.offset
        end = r.end
      }
    }
    if (start >= 0) out += ByteRange(start, end - start)
    out.result()
  }
}
