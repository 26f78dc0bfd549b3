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
 * indexes, bloom filters, and decoded dictionaries (those pruning decodes and those column readers
 * decode). Entries are keyed by [[FileKey]] and a part (the footer, or a row group's column) and hold
 * immutable values only.
 *
 * Two regions, each bounded in bytes (each entry's estimated heap weight), least recently used
 * evicted first: dictionaries, and all the rest. Dictionaries are large and many a scan decodes, so
 * they have a bound of their own and never evict a footer or an index. The bounds are the latest
 * `spark.lmspark.metadataCache.maxBytes` and `spark.lmspark.metadataCache.dictionaryMaxBytes` a scan
 * asked for; 0 keeps nothing in that region (every lookup loads). A value is loaded outside the lock:
 * two tasks missing the same entry at once both load it, and the second store wins. A load that
 * throws stores nothing.
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

  /** One LRU map of entries and its bound (guarded by [[lock]]). */
  private final class Region {
    val entries = new JLinkedHashMap[Key, Entry](256, 0.75f, true)
    var bytes = 0L
    var maxBytes = 0L

    def put(key: Key, value: AnyRef, weight: Long, stats: CacheStats): Unit = {
      val w = weight + EntryOverhead
      if (w > maxBytes) return // larger than the whole region (or the region is off): not kept
      val old = entries.put(key, new Entry(value, w))
      if (old != null) bytes -= old.weight
      bytes += w
      evictTo(maxBytes, stats)
    }

    def evictTo(bound: Long, stats: CacheStats): Unit = {
      val it = entries.values().iterator()
      while (bytes > bound && it.hasNext) {
        bytes -= it.next().weight
        it.remove()
        if (stats != null) stats.evictions += 1
      }
    }
  }

  /** Fixed cost charged to every entry besides its value's estimate (key, map node, wrappers). */
  private val EntryOverhead = 256L

  private val lock = new Object
  private val metadata = new Region
  private val dictionaries = new Region

  private def regionOf(part: Part): Region = part match {
    case _: Dictionary => dictionaries
    case _ => metadata
  }

  /** Sets the bounds of the metadata and the dictionaries (evicting down to them); called with
    * each scan's settings. */
  def configure(bound: Long, dictionaryBound: Long): Unit = lock.synchronized {
    metadata.maxBytes = math.max(0L, bound)
    dictionaries.maxBytes = math.max(0L, dictionaryBound)
    metadata.evictTo(metadata.maxBytes, null)
    dictionaries.evictTo(dictionaries.maxBytes, null)
  }

  /** Whether `file` may be cached at all. */
  def cacheable(file: FileKey): Boolean = file.modificationTime > 0 && file.length > 0

  /** The key of `part` of `file`; null when nothing of it is cached (no file, or not cacheable). */
  private def keyOf(file: Option[FileKey], part: Part): Key = file.filter(cacheable).map(Key(_, part)).orNull

  /** The cached value of `part` of `file`, or `load`'s (value, estimated bytes) stored and returned;
    * a negative estimate returns the value without storing it (a result that may be transient, such
    * as a failed read). `file` None (the cache is off for this read) always loads. */
  def getOrLoad[T <: AnyRef](file: Option[FileKey], part: Part, stats: CacheStats)(load: => (T, Long)): T = {
    val key = keyOf(file, part)
    if (key != null) {
      val hit = lock.synchronized(regionOf(part).entries.get(key))
      if (hit != null) { stats.hits += 1; return hit.value.asInstanceOf[T] }
      stats.misses += 1
    }
    val (value, weight) = load
    if (key != null && weight >= 0) lock.synchronized(regionOf(part).put(key, value, weight, stats))
    value
  }

  /** The cached value of `part` of `file`, if any, counted as a hit when found (a lookup that
    * would not load on a miss, so a miss is not counted). */
  def get[T <: AnyRef](file: Option[FileKey], part: Part, stats: CacheStats): Option[T] = {
    val key = keyOf(file, part)
    if (key == null) return None
    val hit = lock.synchronized(regionOf(part).entries.get(key))
    if (hit == null) None else { stats.hits += 1; Some(hit.value.asInstanceOf[T]) }
  }

  /** Stores `value` (estimated `weight` bytes) as `part` of `file` unless an entry is there already. */
  def putIfAbsent(file: Option[FileKey], part: Part, stats: CacheStats, value: AnyRef, weight: Long): Unit = {
    val key = keyOf(file, part)
    if (key != null && weight >= 0) lock.synchronized {
      val region = regionOf(part)
      if (!region.entries.containsKey(key)) region.put(key, value, weight, stats)
    }
  }

  /** Whether `part` of `file` is cached now (without touching its recency). */
  def contains(file: Option[FileKey], part: Part): Boolean = {
    val key = keyOf(file, part)
    key != null && lock.synchronized(regionOf(part).entries.containsKey(key))
  }

  /** Bytes held now (estimated), for tests. */
  def heldBytes: Long = lock.synchronized(metadata.bytes + dictionaries.bytes)

  /** Entries held now, for tests. */
  def size: Int = lock.synchronized(metadata.entries.size + dictionaries.entries.size)

  /** Drops every entry (tests). */
  def clear(): Unit = lock.synchronized {
    Seq(metadata, dictionaries).foreach { r => r.entries.clear(); r.bytes = 0L }
  }
}
