package lmspark.selection

import scala.util.Random

/** The naive oracle: a selection is an `Array[Boolean]`, one per row. Every operation here is the
  * obvious loop, and generators produce seeded random shapes plus the boundary grid. */
object SelectionModel {

  /** Offsets and lengths where word and batch arithmetic usually breaks. */
  val Grid: Array[Int] = Array(0, 1, 63, 64, 65, 127, 128, 4095, 4096)

  val Backings: Seq[Backing] = Seq(Backing.Runs, Backing.Mask)

  /** A length: mostly small, one time in five from the grid. */
  def length(rnd: Random): Int =
    if (rnd.nextInt(5) == 0) Grid(rnd.nextInt(Grid.length)) else rnd.nextInt(260)

  /** `n` booleans in one of several shapes: constant, Bernoulli at various densities, or runs with
    * geometric lengths of various means. */
  def bools(rnd: Random, n: Int): Array[Boolean] = rnd.nextInt(6) match {
    case 0 => Array.fill(n)(rnd.nextBoolean() && rnd.nextBoolean()) // p = 1/4
    case 1 =>
      val p = Seq(0.0, 0.02, 0.5, 0.98, 1.0)(rnd.nextInt(5))
      Array.fill(n)(rnd.nextDouble() < p)
    case _ =>
      val mean = Seq(1.5, 3.0, 20.0, 64.0, 700.0)(rnd.nextInt(5))
      val out = new Array[Boolean](n)
      var v = rnd.nextBoolean()
      var i = 0
      while (i < n) {
        val len = 1 + (-math.log(1 - rnd.nextDouble()) * (mean - 1)).toInt
        var j = 0
        while (j < len && i < n) { out(i) = v; i += 1; j += 1 }
        v = !v
      }
      out
  }

  def bools(rnd: Random): Array[Boolean] = bools(rnd, length(rnd))

  /** The selection of `b`, built in the given backing, through that backing's own constructor. */
  def build(b: Array[Boolean], backing: Backing): RowSelection = backing match {
    case Backing.Mask => RowSelection.fromBooleans(b)
    case Backing.Runs =>
      val (flags, lens) = runsOf(b)
      RowSelection.fromSelectors(flags, lens)
  }

  /** Maximal runs of `b` as (flag, length) pairs. */
  def runsOf(b: Array[Boolean]): (Array[Boolean], Array[Long]) = {
    val flags = scala.collection.mutable.ArrayBuffer.empty[Boolean]
    val lens = scala.collection.mutable.ArrayBuffer.empty[Long]
    var i = 0
    while (i < b.length) {
      var j = i
      while (j < b.length && b(j) == b(i)) j += 1
      flags += b(i); lens += (j - i).toLong
      i = j
    }
    (flags.toArray, lens.toArray)
  }

  def selectedCount(b: Array[Boolean]): Long = b.count(identity).toLong
  def runCount(b: Array[Boolean]): Long = runsOf(b)._1.length.toLong
  def selectedEnd(b: Array[Boolean]): Int = b.lastIndexOf(true) + 1

  def andThen(a: Array[Boolean], b: Array[Boolean]): Array[Boolean] = {
    var k = 0
    a.map { x => if (x) { val r = b(k); k += 1; r } else false }
  }

  def zip(a: Array[Boolean], b: Array[Boolean], f: (Boolean, Boolean) => Boolean): Array[Boolean] =
    Array.tabulate(math.max(a.length, b.length))(i => f(i < a.length && a(i), i < b.length && b(i)))

  def show(b: Array[Boolean]): String =
    if (b.length > 300) s"<${b.length} rows, ${selectedCount(b)} selected>" else b.map(x => if (x) '1' else '0').mkString
}
