package lmspark.selection

/** Sorted, disjoint, non-adjacent, non-empty half-open row ranges `[start(i), end(i))`: the form
  * page-index filtering produces, and the form pruned-page regions take for a [[SelectionCursor]].
  * [[RowRanges.of]] normalises any list of ranges (sorts, drops empty ones, merges overlapping or
  * touching ones); the constructor only checks. */
final class RowRanges private (starts: Array[Long], ends: Array[Long]) {
  require(starts.length == ends.length, s"${starts.length} starts for ${ends.length} ends")
  locally {
    var i = 0
    while (i < starts.length) {
      require(starts(i) >= 0 && starts(i) < ends(i), s"row range $i [${starts(i)}, ${ends(i)}) is empty or negative")
      require(i == 0 || ends(i - 1) < starts(i),
        s"row ranges $i [${starts(i)}, ${ends(i)}) and ${i - 1} are not sorted, disjoint and non-adjacent")
      i += 1
    }
  }

  def size: Int = starts.length
  def isEmpty: Boolean = starts.length == 0
  def start(i: Int): Long = starts(i)
  def end(i: Int): Long = ends(i)

  /** Total rows covered. */
  def rows: Long = {
    var c = 0L
    var i = 0
    while (i < starts.length) { c += ends(i) - starts(i); i += 1 }
    c
  }

  override def toString: String =
    starts.indices.map(i => s"[${starts(i)}, ${ends(i)})").mkString("RowRanges(", ", ", ")")
}

object RowRanges {
  val empty: RowRanges = new RowRanges(new Array[Long](0), new Array[Long](0))

  /** Normalises `[starts(i), ends(i))` ranges given in any order. Arrays are not kept. */
  def of(starts: Array[Long], ends: Array[Long]): RowRanges = {
    require(starts.length == ends.length, s"${starts.length} starts for ${ends.length} ends")
    val idx = starts.indices.filter(i => ends(i) > starts(i)).sortBy(i => starts(i))
    val s = new scala.collection.mutable.ArrayBuilder.ofLong
    val e = new scala.collection.mutable.ArrayBuilder.ofLong
    var curS = -1L
    var curE = -1L
    idx.foreach { i =>
      require(starts(i) >= 0, s"negative row range start ${starts(i)}")
      if (curE >= 0 && starts(i) <= curE) curE = math.max(curE, ends(i))
      else {
        if (curE >= 0) { s += curS; e += curE }
        curS = starts(i); curE = ends(i)
      }
    }
    if (curE >= 0) { s += curS; e += curE }
    new RowRanges(s.result(), e.result())
  }

  def single(start: Long, end: Long): RowRanges = of(Array(start), Array(end))
}
