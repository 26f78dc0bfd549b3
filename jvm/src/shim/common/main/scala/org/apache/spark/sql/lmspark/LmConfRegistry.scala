package org.apache.spark.sql.lmspark

import org.apache.spark.sql.internal.SQLConf

/**
 * Registers lmspark's flags with Spark's SQL conf through Spark's own config builder, which is
 * private to Spark (hence this package): Spark then checks a value when it is set
 * (`spark.conf.set`, `SET`, the session builder) and lists the flag with its doc in `SET -v`.
 * Takes plain values only, so that lmspark's shared code never touches the private API.
 */
object LmConfRegistry {

  /** Registers `key` once per JVM (a second call is a no-op): a string entry whose values must
    * pass `valid`, reported as "expected `expectation`" otherwise. */
  def register(key: String, doc: String, version: String, default: String, valid: String => Boolean,
      expectation: String): Unit = synchronized {
    if (!SQLConf.containsConfigKey(key)) {
      SQLConf.buildConf(key).doc(doc).version(version).stringConf
        .checkValue(v => v != null && valid(v), s"expected $expectation")
        .createWithDefaultString(default)
    }
  }

  /** Whether Spark's SQL conf knows `key` (registered by lmspark or by Spark). */
  def isRegistered(key: String): Boolean = SQLConf.containsConfigKey(key)
}
