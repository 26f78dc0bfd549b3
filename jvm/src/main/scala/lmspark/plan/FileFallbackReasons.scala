package lmspark.plan

import org.apache.spark.util.AccumulatorV2

/**
 * The reasons for which a scan's tasks handed files to Spark's reader, each with its file count,
 * gathered on the driver (the executors only log them). Bounded: at most [[MaxReasons]] distinct
 * reasons are kept; the rest are counted under one "other reasons" entry.
 */
final class FileFallbackReasons extends AccumulatorV2[String, Map[String, Long]] {
  import FileFallbackReasons._

  private var counts = Map.empty[String, Long]

  override def isZero: Boolean = counts.isEmpty
  override def copy(): FileFallbackReasons = { val c = new FileFallbackReasons; c.counts = counts; c }
  override def reset(): Unit = counts = Map.empty
  override def add(reason: String): Unit = addCount(reason, 1L)
  override def merge(other: AccumulatorV2[String, Map[String, Long]]): Unit =
    other.value.foreach { case (r, n) => addCount(r, n) }
  override def value: Map[String, Long] = counts

  private def addCount(reason: String, n: Long): Unit = {
    val key = if (counts.contains(reason) || counts.size < MaxReasons) reason else Other
    counts = counts.updated(key, counts.getOrElse(key, 0L) + n)
  }
}

object FileFallbackReasons {
  val MaxReasons = 50
  val Other = "other reasons"
}
