package lmspark.meta

import java.util.{LinkedHashMap => JLinkedHashMap}

/** One file as the metadata cache knows it: its path, length and modification time. A file
  * rewritten in place changes its length or its modification time, so its old entries are never
  * found again (they age out of the LRU). */
final case class FileKey(path: String, length: Long, modificationTime: Long)

/** What one scan's lookups in the [[MetadataCache]] came to: hits, misses, and entries evicted
  * to make room for what it loaded. Owned by one task's reader of one file (not thread-safe). */
final class CacheStats {
  var hits = 0L
  var misses = 0L
  var evictions = 0L
}

/**
 * The executor-wide cache of parsed file metadata, shared by the tasks of a JVM: footers, page
 * indexes, bloom filters, and the dictionaries that pruning decodes. Entries are keyed by
 * [[FileKey]] and a part (the footer, or a row group's column) and hold immutable values only.
 *
 * Bounded in bytes (each entry's estimated heap weight), least recently used evicted first. The
 * bound is the latest `spark.lmspark.metadataCache.maxBytes` a scan asked for; 0 turns the cache off
 * (nothing is kept, every lookup loads). A value is loaded outside the lock: two tasks missing the
 * same entry at once both load it, and the second store wins. A load that throws stores nothing.
 *
 * Invariant: a value is only ever served for the exact (path, length, modification time) it was
 * read from; files whose modification time is unknown (0 or less) are never cached.
 */
object MetadataCache {

  /** The footer of a file; the page index, its checked page statistics, bloom filter or dictionary
    * of a column chunk (by the file's row-group index and the leaf's path); a split-pruning proof. */
  sealed trait Part
  case object Footer extends Part
  final case class PageIndex(rowGroup: Int, column: Seq[String]) extends Part
  final case class Bloom(rowGroup: Int, column: Seq[String]) extends Part
  final case class Dictionary(rowGroup: Int, column: Seq[String]) extends Part
  /** A chunk's page statistics, checked and converted to Spark values: `conversion` is any value
    * whose equality covers everything besides the file that decides them (the leaf's type and
    * the Spark type and options it is read with). */
  final case class PageStats(rowGroup: Int, column: Seq[String], conversion: AnyRef) extends Part
  /** What split pruning proved of the file for one scan: `settings` is any value whose equality
    * covers everything that decides the proof (the scan's settings). */
  final case class SplitProof(settings: AnyRef) extends Part

  private final case class Key(file: FileKey, part: Part)
  private final class Entry(val value: AnyRef, val weight: Long)

  /** Fixed cost charged to every entry besides its value's estimate (key, map node, wrappers). */
  private val EntryOverhead = 256L

  private val lock = new Object
  private val entries = new JLinkedHashMap[Key, Entry](256, 0.75f, true)
  private var bytes = 0L
  private var maxBytes = 0L

  /** Sets the bound (evicting down to it); called with each scan's setting. */
  def configure(bound: Long): Unit = lock.synchronized {
    maxBytes = math.max(0L, bound)
    evictTo(maxBytes, null)
  }

  /** Whether `file` may be cached at all. */
  def cacheable(file: FileKey): Boolean = file.modificationTime > 0 && file.length > 0

  /** The cached value of `part` of `file`, or `load`'s (value, estimated bytes) stored and returned;
    * a negative estimate returns the value without storing it (a result that may be transient, such
    * as a failed read). `file` None (the cache is off for this read) always loads. */
  def getOrLoad[T <: AnyRef](file: Option[FileKey], part: Part, stats: CacheStats)(load: => (T, Long)): T = {
    val key = file.filter(cacheable).map(Key(_, part)).orNull
    if (key != null) {
      val hit = lock.synchronized(entries.get(key))
      if (hit != null) { stats.hits += 1; return hit.value.asInstanceOf[T] }
      stats.misses += 1
    }
    val (value, weight) = load
    if (key != null && weight >= 0) put(key, value, weight, stats)
    value
  }

  /** Whether `part` of `file` is cached now (without touching its recency). */
  def contains(file: Option[FileKey], part: Part): Boolean =
    file.filter(cacheable).exists(f => lock.synchronized(entries.containsKey(Key(f, part))))

  private def put(key: Key, value: AnyRef, weight: Long, stats: CacheStats): Unit = lock.synchronized {
    val w = weight + EntryOverhead
    if (w > maxBytes) return // larger than the whole cache (or the cache is off): not kept
    val old = entries.put(key, new Entry(value, w))
    if (old != null) bytes -= old.weight
    bytes += w
    evictTo(maxBytes, stats)
  }

  private def evictTo(bound: Long, stats: CacheStats): Unit = {
    val it = entries.values().iterator()
    while (bytes > bound && it.hasNext) {
      bytes -= it.next().weight
      it.remove()
      if (stats != null) stats.evictions += 1
    }
  }

  /** Bytes held now (estimated), for tests. */
  def heldBytes: Long = lock.synchronized(bytes)

  /** Entries held now, for tests. */
  def size: Int = lock.synchronized(entries.size)

  /** Drops every entry (tests). */
  def clear(): Unit = lock.synchronized { entries.clear(); bytes = 0L }
}
