package lmspark.plan

import org.apache.spark.sql.internal.SQLConf

import lmspark.LmConf

/** Refuses to plan a Parquet scan while the session holds a `spark.lmspark.*` key that is no
  * lmspark flag (a typo would otherwise be ignored in silence): the query fails with an
  * `IllegalArgumentException` naming the key and the closest flag, until the key is unset.
  *
  * Checked by [[LmScanRule]] on every plan holding a scan it could replace, whatever
  * `spark.lmspark.enabled` says, so that a classic session and a Spark Connect client (whose
  * `spark.conf.set` reaches the server's session conf the same way) get the same answer. Spark's
  * conf has no hook for keys it does not know when they are set (registered flags, by contrast,
  * are checked then, see `LmConf`), so the first query that would read with the key is where it
  * is refused; queries without a Parquet scan, `SET` and `RESET` still run. */
object UnknownFlags {

  def check(conf: SQLConf): Unit = {
    val unknown = LmConf.unknownKeys(conf)
    if (unknown.nonEmpty) throw new IllegalArgumentException(message(unknown))
  }

  /** The refusal's text for `(key, closest flag)` pairs. */
  def message(unknown: Seq[(String, String)]): String =
    unknown.map { case (key, closest) => s"$key is not an lmspark flag (did you mean $closest?)" }.mkString("; ") +
      s". lmspark does not plan a Parquet scan while ${if (unknown.size == 1) "it is" else "they are"} set: unset " +
      s"${unknown.map(_._1).mkString(", ")} (spark.conf.unset or RESET). SET -v lists every spark.lmspark.* flag."
}
