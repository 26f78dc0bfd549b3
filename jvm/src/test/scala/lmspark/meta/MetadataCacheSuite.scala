package lmspark.meta

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

/** The executor-wide [[MetadataCache]] on its own: served only for the exact file (path, length,
  * modification time), bounded in bytes with least-recently-used eviction, counted per read, and
  * never keeping what it must not (transient results, files of unknown modification time, entries
  * larger than the bound), dictionaries under a bound of their own. Checked against a model: a map
  * of what was stored per region, in use order. */
class MetadataCacheSuite extends AnyFunSuite with BeforeAndAfterEach {

  override protected def beforeEach(): Unit = { MetadataCache.clear(); MetadataCache.configure(1L << 20, 1L << 20) }
  override protected def afterEach(): Unit = { MetadataCache.clear(); MetadataCache.configure(0L, 0L) }

  private val a = FileKey("file:/t/a.parquet", 1000L, 17L)

  private def load(stats: CacheStats, file: FileKey, part: MetadataCache.Part, weight: Long, value: String): String =
    MetadataCache.getOrLoad(Some(file), part, stats)((value, weight))

  test("a stored value is served for the same file and part, and counted as a hit") {
    val s = new CacheStats
    assert(load(s, a, MetadataCache.Footer, 100, "v1") == "v1")
    assert(load(s, a, MetadataCache.Footer, 100, "v2") == "v1")
    assert((s.hits, s.misses) == (1L, 1L))
  }

  test("a file of another length or modification time, or another part, is another entry") {
    val s = new CacheStats
    load(s, a, MetadataCache.Footer, 100, "v1")
    assert(load(s, a.copy(length = 1001L), MetadataCache.Footer, 100, "longer") == "longer")
    assert(load(s, a.copy(modificationTime = 18L), MetadataCache.Footer, 100, "touched") == "touched")
    assert(load(s, a, MetadataCache.PageIndex(0, Seq("x")), 100, "index") == "index")
    assert(load(s, a, MetadataCache.PageIndex(1, Seq("x")), 100, "index1") == "index1")
    assert(load(s, a, MetadataCache.Bloom(0, Seq("x")), 100, "bloom") == "bloom")
    assert((s.hits, s.misses) == (0L, 6L))
  }

  test("nothing is kept for a file of unknown modification time, a negative estimate, or with the cache off") {
    val s = new CacheStats
    val unknown = a.copy(modificationTime = 0L)
    load(s, unknown, MetadataCache.Footer, 10, "v1")
    assert(load(s, unknown, MetadataCache.Footer, 10, "v2") == "v2")
    load(s, a, MetadataCache.Footer, -1, "transient")
    assert(load(s, a, MetadataCache.Footer, 10, "kept") == "kept")
    assert(MetadataCache.getOrLoad(None, MetadataCache.Footer, s)(("off", 10L)) == "off")
    MetadataCache.configure(0L, 0L)
    assert(MetadataCache.size == 0)
    load(s, a, MetadataCache.Bloom(0, Seq("y")), 10, "b1")
    assert(load(s, a, MetadataCache.Bloom(0, Seq("y")), 10, "b2") == "b2")
  }

  test("bounded in bytes, dictionaries apart: least recently used entries go first, against a model (seeded)") {
    val rnd = new scala.util.Random(20261125L)
    val bounds = Map(true -> 12000L, false -> 20000L) // dictionaries, the rest
    MetadataCache.configure(bounds(false), bounds(true))
    // One model per region, in use order: key -> (value, weight, clock at last use); a dictionary
    // never evicts the rest. Dictionaries are loop-proof: per key not held, the clock at the latest
    // lookup of the read before the latest one, the latest, and that read.
    val models = Map(true -> scala.collection.mutable.LinkedHashMap.empty[Int, (String, Long, Long)],
      false -> scala.collection.mutable.LinkedHashMap.empty[Int, (String, Long, Long)])
    val modelBytes = scala.collection.mutable.Map(true -> 0L, false -> 0L)
    val seen = scala.collection.mutable.Map.empty[Int, (Long, Long, Int)]
    val clocks = scala.collection.mutable.Map(true -> 0L, false -> 0L)
    val reads = scala.collection.mutable.ArrayBuffer(new CacheStats)
    var expectedEvictions = 0L
    var refused = 0
    (0 until 4000).foreach { step =>
      if (rnd.nextInt(8) == 0) reads += new CacheStats // the next read (a task's scan of a file)
      val read = reads.size - 1
      val k = rnd.nextInt(60)
      val dictionary = rnd.nextBoolean()
      val weight = rnd.nextInt(3000).toLong
      val part = if (dictionary) MetadataCache.Dictionary(k, Seq("c")) else MetadataCache.PageIndex(k, Seq("c"))
      val value = s"v$step"
      val got = load(reads(read), a, part, weight, value)
      val model = models(dictionary)
      clocks(dictionary) += 1
      val now = clocks(dictionary)
      model.remove(k) match {
        case Some(old) =>
          assert(got == old._1, s"step $step: key $k")
          model.put(k, old.copy(_3 = now))
        case None =>
          assert(got == value)
          if (dictionary) seen(k) = seen.get(k) match {
            case None => (-1L, now, read)
            case Some((_, latest, r)) if r != read => (latest, now, read)
            case Some((previous, _, r)) => (previous, now, r)
          }
          val w = weight + 256 // the per-entry overhead the cache charges
          val bound = bounds(dictionary)
          // The entries it would evict, least recently used first.
          val victims = {
            var over = modelBytes(dictionary) + w - bound
            model.takeWhile { case (_, (_, vw, _)) => val take = over > 0; over -= vw; take }.toSeq
          }
          val admitted = w <= bound && (!dictionary || victims.isEmpty || victims.forall(_._2._3 < seen(k)._1))
          if (!admitted && w <= bound) refused += 1
          if (admitted) {
            model.put(k, (value, w, now))
            modelBytes(dictionary) += w
            if (dictionary) seen.remove(k)
            while (modelBytes(dictionary) > bound) {
              val (oldest, (_, ow, _)) = model.head
              model.remove(oldest)
              modelBytes(dictionary) -= ow
              expectedEvictions += 1
            }
          }
      }
      assert(MetadataCache.heldBytes == modelBytes.values.sum, s"step $step")
      assert(MetadataCache.size == models.values.map(_.size).sum, s"step $step")
    }
    assert(reads.map(_.evictions).sum == expectedEvictions && expectedEvictions > 0 && refused > 0)
  }

  test("dictionaries read in a loop larger than their bound: a stable part is kept and served, nothing churns") {
    val rnd = new scala.util.Random(20261202L)
    val n = 20 + rnd.nextInt(30)
    val held = 5 + rnd.nextInt(10) // entries of 1,000 bytes (with the overhead) the bound holds
    MetadataCache.configure(1L << 20, held * 1000L)
    val parts = (0 until n).map(i => MetadataCache.Dictionary(i, Seq("c")))
    // A repeated scan, each run a read of its own: look up every dictionary, decode and store on a miss.
    def run(): CacheStats = {
      val s = new CacheStats
      parts.foreach(p => if (MetadataCache.get[String](Some(a), p, s).isEmpty) MetadataCache.putIfAbsent(Some(a), p, s, "d", 744L))
      s
    }
    val first = run()
    assert(first.hits == 0 && first.evictions == 0 && MetadataCache.size == held)
    val kept = parts.filter(p => MetadataCache.contains(Some(a), p))
    assert(kept == parts.take(held)) // the first that fit
    for (_ <- 1 to 5) {
      val s = run()
      // Plain LRU would serve none of them (each evicted before its next use) and evict n a run.
      assert(s.hits == held && s.evictions == 0)
      assert(parts.filter(p => MetadataCache.contains(Some(a), p)) == kept)
    }
    // Another scan's dictionaries, read again and again: the old ones, no longer used, give way on its
    // second run (its first only remembers its keys), and it keeps as many as fit.
    val others = (0 until n).map(i => MetadataCache.Dictionary(i, Seq("d")))
    def runOthers(): CacheStats = {
      val s = new CacheStats
      others.foreach(p => if (MetadataCache.get[String](Some(a), p, s).isEmpty) MetadataCache.putIfAbsent(Some(a), p, s, "e", 744L))
      s
    }
    assert(runOthers().evictions == 0 && kept.forall(p => MetadataCache.contains(Some(a), p)))
    val second = runOthers()
    assert(second.evictions == held && kept.forall(p => !MetadataCache.contains(Some(a), p)))
    assert(others.count(p => MetadataCache.contains(Some(a), p)) == held)
    assert(runOthers().hits == held)
  }

  test("get serves without loading and counts hits only; putIfAbsent keeps the first value") {
    val s = new CacheStats
    val part = MetadataCache.Dictionary(3, Seq("c"))
    assert(MetadataCache.get[String](Some(a), part, s).isEmpty)
    MetadataCache.putIfAbsent(Some(a), part, s, "first", 100L)
    MetadataCache.putIfAbsent(Some(a), part, s, "second", 100L)
    assert(MetadataCache.get[String](Some(a), part, s).contains("first"))
    assert(MetadataCache.get[String](Some(a.copy(modificationTime = 18L)), part, s).isEmpty)
    assert((s.hits, s.misses) == (1L, 0L))
    MetadataCache.configure(1L << 20, 0L) // dictionaries off: dropped, and none kept
    assert(MetadataCache.get[String](Some(a), part, s).isEmpty)
    MetadataCache.putIfAbsent(Some(a), part, s, "third", 100L)
    assert(MetadataCache.get[String](Some(a), part, s).isEmpty)
    MetadataCache.putIfAbsent(Some(a), MetadataCache.Footer, s, "footer", 100L)
    assert(MetadataCache.get[String](Some(a), MetadataCache.Footer, s).contains("footer"))
  }

  test("a negative dictionary setting bounds the dictionaries at a tenth of the JVM's maximum heap") {
    val tenth = Runtime.getRuntime.maxMemory / 10
    assert(MetadataCache.dictionaryBound(-1L) == tenth && MetadataCache.dictionaryBound(0L) == 0L &&
      MetadataCache.dictionaryBound(12345L) == 12345L)
    MetadataCache.configure(1L << 20, -1L)
    val s = new CacheStats
    // Weights are estimates handed in: one just over the bound (with the entry's overhead) is not
    // kept, one filling most of it is.
    MetadataCache.putIfAbsent(Some(a), MetadataCache.Dictionary(0, Seq("c")), s, "over", tenth)
    assert(!MetadataCache.contains(Some(a), MetadataCache.Dictionary(0, Seq("c"))))
    MetadataCache.putIfAbsent(Some(a), MetadataCache.Dictionary(1, Seq("c")), s, "fits", tenth - 4096)
    assert(MetadataCache.contains(Some(a), MetadataCache.Dictionary(1, Seq("c"))))
    // A second one of that weight, looked up by two reads, evicts the first: the region's bound is the
    // tenth, not more.
    Seq(new CacheStats, s).foreach(r => assert(MetadataCache.get[String](Some(a), MetadataCache.Dictionary(2, Seq("c")), r).isEmpty))
    MetadataCache.putIfAbsent(Some(a), MetadataCache.Dictionary(2, Seq("c")), s, "fits too", tenth - 4096)
    assert(!MetadataCache.contains(Some(a), MetadataCache.Dictionary(1, Seq("c"))))
    assert(MetadataCache.contains(Some(a), MetadataCache.Dictionary(2, Seq("c"))) && s.evictions == 1L)
  }

  test("lowering the bound evicts down to it") {
    val s = new CacheStats
    (0 until 10).foreach(i => load(s, a, MetadataCache.PageIndex(i, Seq("c")), 1000, s"v$i"))
    assert(MetadataCache.size == 10)
    MetadataCache.configure(3000L, 1L << 20)
    assert(MetadataCache.heldBytes <= 3000L && MetadataCache.size == 2)
    // The two most recently used are the ones kept.
    assert(MetadataCache.contains(Some(a), MetadataCache.PageIndex(9, Seq("c"))))
    assert(MetadataCache.contains(Some(a), MetadataCache.PageIndex(8, Seq("c"))))
  }
}
