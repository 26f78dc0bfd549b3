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
    // One model per region, in use order: key -> (value, weight); a dictionary never evicts the rest.
    val models = Map(true -> scala.collection.mutable.LinkedHashMap.empty[Int, (String, Long)],
      false -> scala.collection.mutable.LinkedHashMap.empty[Int, (String, Long)])
    val modelBytes = scala.collection.mutable.Map(true -> 0L, false -> 0L)
    val s = new CacheStats
    var expectedEvictions = 0L
    (0 until 4000).foreach { step =>
      val k = rnd.nextInt(60)
      val dictionary = rnd.nextBoolean()
      val weight = rnd.nextInt(3000).toLong
      val part = if (dictionary) MetadataCache.Dictionary(k, Seq("c")) else MetadataCache.PageIndex(k, Seq("c"))
      val value = s"v$step"
      val got = load(s, a, part, weight, value)
      val model = models(dictionary)
      model.remove(k) match {
        case Some(old) =>
          assert(got == old._1, s"step $step: key $k")
          model.put(k, old)
        case None =>
          assert(got == value)
          val w = weight + 256 // the per-entry overhead the cache charges
          if (w <= bounds(dictionary)) {
            model.put(k, (value, w))
            modelBytes(dictionary) += w
            while (modelBytes(dictionary) > bounds(dictionary)) {
              val (oldest, (_, ow)) = model.head
              model.remove(oldest)
              modelBytes(dictionary) -= ow
              expectedEvictions += 1
            }
          }
      }
      assert(MetadataCache.heldBytes == modelBytes.values.sum, s"step $step")
      assert(MetadataCache.size == models.values.map(_.size).sum, s"step $step")
    }
    assert(s.evictions == expectedEvictions && expectedEvictions > 0)
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
