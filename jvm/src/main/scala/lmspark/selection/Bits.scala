package lmspark.selection

/** Bit helpers over `Array[Long]` masks: bit `i` of a mask is bit `i & 63` of word `i >>> 6`.
  * Row positions are `Long`s; every helper works word by word (popcounts, trailing zeros), never
  * bit by bit over unselected stretches, and allocates nothing unless it says so. */
private[lmspark] object Bits {

  @inline def wordsFor(rows: Long): Int = {
    val w = (rows + 63) >>> 6
    require(w <= Int.MaxValue, s"$rows rows do not fit a long-word mask")
    w.toInt
  }

  /** The low `n` bits set (`n` in [0, 64]). */
  @inline def lowMask(n: Int): Long = if (n >= 64) -1L else (1L << n) - 1

  @inline def get(words: Array[Long], i: Long): Boolean = ((words((i >>> 6).toInt) >>> (i & 63)) & 1L) != 0

  /** Sets bits `[from, until)`. */
  def setRange(words: Array[Long], from: Long, until: Long): Unit = if (from < until) {
    val fw = (from >>> 6).toInt
    val lw = ((until - 1) >>> 6).toInt
    val fm = -1L << (from & 63)
    val lm = -1L >>> (63 - ((until - 1) & 63))
    if (fw == lw) words(fw) |= fm & lm
    else {
      words(fw) |= fm
      var i = fw + 1
      while (i < lw) { words(i) = -1L; i += 1 }
      words(lw) |= lm
    }
  }

  /** Number of set bits in `[from, until)`. */
  def count(words: Array[Long], from: Long, until: Long): Long = {
    if (from >= until) return 0L
    val fw = (from >>> 6).toInt
    val lw = ((until - 1) >>> 6).toInt
    val fm = -1L << (from & 63)
    val lm = -1L >>> (63 - ((until - 1) & 63))
    if (fw == lw) java.lang.Long.bitCount(words(fw) & fm & lm).toLong
    else {
      var c = java.lang.Long.bitCount(words(fw) & fm).toLong + java.lang.Long.bitCount(words(lw) & lm)
      var i = fw + 1
      while (i < lw) { c += java.lang.Long.bitCount(words(i)); i += 1 }
      c
    }
  }

  /** The first set bit in `[from, until)`, or `until` if none. */
  def nextSet(words: Array[Long], from: Long, until: Long): Long = {
    if (from >= until) return until
    var wi = (from >>> 6).toInt
    val lw = ((until - 1) >>> 6).toInt
    var w = words(wi) & (-1L << (from & 63))
    while (w == 0) {
      wi += 1
      if (wi > lw) return until
      w = words(wi)
    }
    val r = (wi.toLong << 6) + java.lang.Long.numberOfTrailingZeros(w)
    if (r < until) r else until
  }

  /** The first clear bit in `[from, until)`, or `until` if none. */
  def nextClear(words: Array[Long], from: Long, until: Long): Long = {
    if (from >= until) return until
    var wi = (from >>> 6).toInt
    val lw = ((until - 1) >>> 6).toInt
    var w = ~words(wi) & (-1L << (from & 63))
    while (w == 0) {
      wi += 1
      if (wi > lw) return until
      w = ~words(wi)
    }
    val r = (wi.toLong << 6) + java.lang.Long.numberOfTrailingZeros(w)
    if (r < until) r else until
  }

  /** The last set bit in `[from, until)`, or `-1` if none. */
  def lastSet(words: Array[Long], from: Long, until: Long): Long = {
    if (from >= until) return -1L
    val fw = (from >>> 6).toInt
    var wi = ((until - 1) >>> 6).toInt
    var w = words(wi) & (-1L >>> (63 - ((until - 1) & 63)))
    while (true) {
      if (wi == fw) w &= -1L << (from & 63)
      if (w != 0) return (wi.toLong << 6) + 63 - java.lang.Long.numberOfLeadingZeros(w)
      if (wi == fw) return -1L
      wi -= 1
      w = words(wi)
    }
    -1L
  }

  /** The position just after the `k`-th (1-based, `k >= 1`) set bit in `[from, until)`, or `until`
    * if that range holds fewer than `k` set bits. */
  def endAfterKth(words: Array[Long], from: Long, until: Long, k: Long): Long = {
    if (from >= until) return until
    var left = k
    var wi = (from >>> 6).toInt
    val lw = ((until - 1) >>> 6).toInt
    var w = words(wi) & (-1L << (from & 63))
    while (wi <= lw) {
      if (wi == lw) w &= -1L >>> (63 - ((until - 1) & 63))
      val c = java.lang.Long.bitCount(w)
      if (c >= left) {
        var x = w
        while (left > 1) { x &= x - 1; left -= 1 }
        return (wi.toLong << 6) + java.lang.Long.numberOfTrailingZeros(x) + 1
      }
      left -= c
      wi += 1
      if (wi <= lw) w = words(wi)
    }
    until
  }

  /** Writes into `out` the positions, less `base`, of the first `max` set bits in `[from, until)`;
    * returns how many it wrote (fewer than `max` when the range holds fewer set bits). */
  def listSet(words: Array[Long], from: Long, until: Long, max: Int, out: Array[Int], base: Long): Int = {
    if (from >= until || max <= 0) return 0
    var n = 0
    var wi = (from >>> 6).toInt
    val lw = ((until - 1) >>> 6).toInt
    var w = words(wi) & (-1L << (from & 63))
    while (wi <= lw && n < max) {
      if (wi == lw) w &= -1L >>> (63 - ((until - 1) & 63))
      val at = (wi.toLong << 6) - base
      while (w != 0 && n < max) {
        out(n) = (at + java.lang.Long.numberOfTrailingZeros(w)).toInt
        w &= w - 1
        n += 1
      }
      wi += 1
      if (wi <= lw) w = words(wi)
    }
    n
  }

  /** Up to 64 bits `[pos, pos + n)` of `words`, in the low `n` bits of the result (bits past the
    * end of `words` read as 0). */
  @inline def bitsAt(words: Array[Long], pos: Long, n: Int): Long = {
    val wi = (pos >>> 6).toInt
    val sh = (pos & 63).toInt
    var v = words(wi) >>> sh
    if (sh != 0 && sh + n > 64 && wi + 1 < words.length) v |= words(wi + 1) << (64 - sh)
    v & lowMask(n)
  }

  /** Copies bits `[from, from + n)` of `src` into bits `[0, n)` of `dst` (realigned to bit 0);
    * bits of `dst` past `n` up to the end of the last written word are cleared. */
  def extract(src: Array[Long], from: Long, n: Long, dst: Array[Long]): Unit = {
    val nw = wordsFor(n)
    val sw = (from >>> 6).toInt
    val sh = (from & 63).toInt
    var i = 0
    if (sh == 0) System.arraycopy(src, sw, dst, 0, nw)
    else {
      while (i < nw) {
        var v = src(sw + i) >>> sh
        if (sw + i + 1 < src.length) v |= src(sw + i + 1) << (64 - sh)
        dst(i) = v
        i += 1
      }
    }
    if (nw > 0) dst(nw - 1) &= -1L >>> (63 - ((n - 1) & 63))
  }

  /** Scatters the low `bitCount(w)` bits of `bits` onto the set bits of `w`, lowest first (what
    * the BMI2 instruction PDEP does). */
  @inline def deposit(bits: Long, w: Long): Long = {
    val c = java.lang.Long.bitCount(w)
    val all = lowMask(c)
    val b = bits & all
    if (b == all) w
    else if (b == 0) 0L
    else {
      var r = 0L
      var m = w
      var k = 0
      while (m != 0) {
        val low = m & -m
        if (((b >>> k) & 1L) != 0) r |= low
        k += 1
        m ^= low
      }
      r
    }
  }
}
