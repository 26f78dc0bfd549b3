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
 * they have a bound of their own and never evict a footer or an index; and a dictionary comes in
 * by evicting only dictionaries unused since its own previous read (see [[Region]]), so a scan
 * whose dictionaries outgrow the bound keeps a stable part of them. The bounds are the latest
 * `spark.lmspark.metadataCache.maxBytes` and `spark.lmspark.metadataCache.dictionaryMaxBytes` a scan
 * asked for (the dictionaries' default, -1, a tenth of the JVM's maximum heap); 0 keeps nothing in
 * that region (every lookup loads). A value is loaded outside the lock:
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
  private final class Entry(val value: AnyRef, val weight: Long) {
    /** The region's clock at this entry's latest lookup or store. */
    var lastUse = 0L
  }

  /** A key a region does not hold, as its lookups went: the clock at the latest lookup of the read
    * before the latest one (-1: none), at the latest, and which read that was (its [[CacheStats]]). */
  private final class Seen(var previous: Long, var latest: Long, var by: CacheStats)

  /**
   * One LRU map of entries and its bound (guarded by [[lock]]). A region that is `loopProof` (the
   * dictionaries') does not let an entry in by evicting entries used since that key's previous read
   * (the lookups of the read before the one storing it): when the entries a repeated scan uses do
   * not all fit, the region keeps a stable part of them, where plain LRU would evict each before
   * its next use, keep none and churn the heap. An entry that fits beside what is held always comes
   * in; entries no longer used are replaced by the second read of what replaces them.
   */
  private final class Region(loopProof: Boolean) {
    val entries = new JLinkedHashMap[Key, Entry](256, 0.75f, true)
    var bytes = 0L
    var maxBytes = 0L
    /** Ticks at every lookup. */
    private var clock = 0L
    /** Keys looked up and not held, least recently looked up first, at most [[MaxSeen]]. */
    private val seen = new JLinkedHashMap[Key, Seen](256, 0.75f, true) {
      override def removeEldestEntry(e: java.util.Map.Entry[Key, Seen]): Boolean = size > MaxSeen
    }

    /** The entry of `key`, if held (null otherwise), as a lookup by the read `by`. */
    def lookup(key: Key, by: CacheStats): Entry = {
      clock += 1
      val e = entries.get(key)
      if (e != null) e.lastUse = clock
      else if (loopProof) {
        val s = seen.get(key)
        if (s == null) seen.put(key, new Seen(-1L, clock, by))
        else if (s.by ne by) { s.previous = s.latest; s.latest = clock; s.by = by }
        else s.latest = clock
      }
      e
    }

    def put(key: Key, value: AnyRef, weight: Long, stats: CacheStats): Unit = {
      val w = weight + EntryOverhead
      if (w > maxBytes) return // larger than the whole region (or the region is off): not kept
      if (loopProof && !entries.containsKey(key) && !admits(key, w)) return
      val e = new Entry(value, w)
      e.lastUse = clock
      val old = entries.put(key, e)
      if (old != null) bytes -= old.weight
      bytes += w
      seen.remove(key)
      evictTo(maxBytes, stats)
    }

    /** Whether `key` (not held, `w` bytes) comes in: when it fits beside what is held, or when every
      * entry it would evict (least recently used first) was last used before `key`'s previous read. */
    private def admits(key: Key, w: Long): Boolean = {
      var over = bytes + w - maxBytes
      if (over <= 0) return true
      val s = seen.get(key)
      val previous = if (s == null) -1L else s.previous
      val it = entries.values().iterator()
      while (over > 0 && it.hasNext) {
        val victim = it.next()
        if (victim.lastUse >= previous) return false
        over -= victim.weight
      }
      true
    }

    def evictTo(bound: Long, stats: CacheStats): Unit = {
      val it = entries.values().iterator()
      while (bytes > bound && it.hasNext) {
        bytes -= it.next().weight
        it.remove()
        if (stats != null) stats.evictions += 1
      }
    }

    def clear(): Unit = { entries.clear(); seen.clear(); bytes = 0L }
  }

  /** Keys not held whose lookups a loop-proof region remembers. */
  private val MaxSeen = 1 << 15

  /** Fixed cost charged to every entry besides its value's estimate (key, map node, wrappers). */
  private val EntryOverhead = 256L

  private val lock = new Object
  private val metadata = new Region(loopProof = false)
  private val dictionaries = new Region(loopProof = true)

  private def regionOf(part: Part): Region = part match {
    case _: Dictionary => dictionaries
    case _ => metadata
  }

  /** The dictionaries' bound `spark.lmspark.metadataCache.dictionaryMaxBytes` = `setting` gives in
    * this JVM: a negative setting (the flag's default, -1) is a tenth of the JVM's maximum heap. */
  def dictionaryBound(setting: Long): Long = if (setting < 0) Runtime.getRuntime.maxMemory / 10 else setting

  /** Sets the bounds of the metadata and the dictionaries (evicting down to them); called with
    * each scan's settings (`dictionarySetting` as [[dictionaryBound]] reads it). */
  def configure(bound: Long, dictionarySetting: Long): Unit = lock.synchronized {
    metadata.maxBytes = math.max(0L, bound)
    dictionaries.maxBytes = dictionaryBound(dictionarySetting)
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
      val hit = lock.synchronized(regionOf(part).lookup(key, stats))
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
    val hit = lock.synchronized(regionOf(part).lookup(key, stats))
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
    Seq(metadata, dictionaries).foreach(_.clear())
  }
}
