package lmspark.testutil

import scala.collection.compat._
import lmspark.testutil.ScalaCompat.ArraySeq

/**
 * Query result rows as a multiset under exact equality, without rendering them: doubles and floats by
 * their bits with every NaN alike (so NaN = NaN, -0.0 != 0.0), binary by content, everything else by
 * `equals` (decimals with their scale, Java 8 datetime values). Rows are compared as counts, so order
 * does not matter. Rendering (for failure messages) uses [[LmSparkSession.render]].
 */
final case class RowMultiset(counts: Map[IndexedSeq[Any], Int]) {
  def size: Int = counts.values.sum

  /** Up to `n` rows (rendered) this multiset holds more often than `other`. */
  def moreThan(other: RowMultiset, n: Int = 3): Seq[String] =
    counts.iterator.filter { case (row, k) => k > other.counts.getOrElse(row, 0) }.map(_._1).take(n)
      .map(RowMultiset.render).toSeq
}

object RowMultiset {
  /** A floating value by its bits (`kind` 'd' or 'f'); NaNs share one bit pattern. */
  final case class Bits(kind: Char, bits: Long)

  def canonical(v: Any): Any = v match {
    case d: Double => Bits('d', java.lang.Double.doubleToLongBits(d))
    case f: Float => Bits('f', java.lang.Float.floatToIntBits(f).toLong)
    case b: Array[Byte] => ArraySeq.unsafeWrapArray(b)
    case other => other
  }

  /** The multiset of `rows`, each already made of [[canonical]] values. */
  def of(rows: Iterable[IndexedSeq[Any]]): RowMultiset = RowMultiset(rows.groupMapReduce(identity)(_ => 1)(_ + _))

  val empty: RowMultiset = RowMultiset(Map.empty)

  def render(row: IndexedSeq[Any]): String = row.map {
    case Bits('d', b) => LmSparkSession.render(java.lang.Double.longBitsToDouble(b))
    case Bits(_, b) => LmSparkSession.render(java.lang.Float.intBitsToFloat(b.toInt))
    case a: ArraySeq[_] => LmSparkSession.render(a.toArray[Any].map(_.asInstanceOf[Byte]))
    case v => LmSparkSession.render(v)
  }.mkString("(", ",", ")")
}
