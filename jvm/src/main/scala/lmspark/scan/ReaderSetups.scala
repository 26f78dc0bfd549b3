package lmspark.scan

import java.lang.ref.WeakReference
import java.util.concurrent.atomic.AtomicLong

import org.apache.hadoop.conf.Configuration
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

import lmspark.shim.TableFiles

/**
 * What building a scan's split reader broadcasts, kept on the driver across queries: the scan's
 * Hadoop configuration (for lmspark's reader) and Spark's own Parquet reader (for the files lmspark
 * hands to it; building it broadcasts the configuration again). Each broadcast serialises the
 * whole configuration, some 8 ms a query on two cores; a repeated query reuses both.
 *
 * An entry is reused only for the same session (held weakly) and exactly the same inputs: every
 * entry of the Hadoop configuration (which carries every SQL setting the session has set), the
 * session's SQL settings, and for Spark's reader the schemas and options. A changed setting,
 * credential or schema therefore gets new broadcasts. Spark's reader is built on a plain
 * `ParquetFileFormat` (or a table format's, keyed by its [[TableFiles]]: for Delta, the table's
 * path and what Delta's format compares), so a reused reader carries nothing of the query that
 * built it (no metric, no accumulator). The last [[MaxEntries]] entries are kept; a dropped entry's broadcasts are
 * cleaned by Spark's context cleaner once no plan holds them.
 */
object ReaderSetups {

  type SparkReader = PartitionedFile => Iterator[InternalRow]

  private val MaxEntries = 16

  private final class Entry(val session: WeakReference[SparkSession], val key: AnyRef, val value: AnyRef)

  /** Most recently used first. Guarded by itself. */
  private val entries = new java.util.ArrayDeque[Entry]()

  private val hitCount = new AtomicLong
  private val missCount = new AtomicLong

  /** Lookups that reused an entry and lookups that built one, since the JVM started (for tests). */
  private[lmspark] def hits: Long = hitCount.get
  private[lmspark] def misses: Long = missCount.get

  /** The configuration's entries, the part of it a broadcast carries. */
  def entriesOf(conf: Configuration): java.util.HashMap[String, String] = {
    val out = new java.util.HashMap[String, String]()
    conf.iterator().forEachRemaining(e => out.put(e.getKey, e.getValue))
    out
  }

  /** `conf` broadcast, or the broadcast of an identical configuration made earlier for `session`. */
  def hadoopConf(session: SparkSession, conf: Configuration,
      confEntries: java.util.HashMap[String, String]): Broadcast[SerializableConfiguration] =
    cached(session, ("hadoop conf", confEntries)) {
      session.sparkContext.broadcast(new SerializableConfiguration(conf))
    }

  /** Spark's vectorized Parquet reader (no pushed filter) for these inputs; built by the table's
    * fallback format (a plain `ParquetFileFormat`, or e.g. Delta's) on a copy of `conf` (Spark's
    * builder writes into it). */
  def sparkReader(session: SparkSession, table: TableFiles, dataSchema: StructType, partitionSchema: StructType,
      requiredSchema: StructType, options: Map[String, String], conf: Configuration,
      confEntries: java.util.HashMap[String, String]): SparkReader =
    cached(session, ("spark reader", table, confEntries, session.sessionState.conf.getAllConfs, dataSchema,
        partitionSchema, requiredSchema, options)) {
      table.fallbackFormat.buildReaderWithPartitionValues(session, dataSchema, partitionSchema, requiredSchema,
        Nil, options, new Configuration(conf))
    }

  private def cached[T <: AnyRef](session: SparkSession, key: AnyRef)(make: => T): T = {
    val hit = entries.synchronized {
      var found: Entry = null
      val it = entries.iterator()
      while (found == null && it.hasNext) {
        val e = it.next()
        val owner = e.session.get
        if (owner == null) it.remove()
        else if ((owner eq session) && e.key == key) { found = e; it.remove() }
      }
      if (found != null) entries.addFirst(found)
      found
    }
    if (hit != null) {
      hitCount.incrementAndGet()
      hit.value.asInstanceOf[T]
    } else {
      missCount.incrementAndGet()
      val value = make
      entries.synchronized {
        entries.addFirst(new Entry(new WeakReference(session), key, value))
        while (entries.size > MaxEntries) entries.removeLast()
      }
      value
    }
  }
}
