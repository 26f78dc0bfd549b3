package lmspark.plan

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.internal.Logging
import org.apache.spark.sql.internal.SQLConf

import lmspark.LmConf

/** Warns, once per key and JVM, about a `spark.lmspark.*` key that is no lmspark flag (a typo is
  * otherwise ignored in silence), naming the closest flag. Checked when a query is planned. */
object UnknownFlags extends Logging {
  private val warned = ConcurrentHashMap.newKeySet[String]()

  def warnOnce(conf: SQLConf): Unit =
    for ((key, closest) <- LmConf.unknownKeys(conf) if warned.add(key))
      logWarning(s"$key is not an lmspark flag and is ignored; did you mean $closest? " +
        "SET -v lists every spark.lmspark.* flag.")

  /** The keys warned about so far in this JVM. */
  def warnedKeys: Set[String] = { import scala.jdk.CollectionConverters._; warned.asScala.toSet }
}
