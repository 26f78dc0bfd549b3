package lmspark.testutil

import scala.util.Random

import lmspark.LmConf

/**
 * One combination of the late-materialization pipeline's flags, as the differential suite sets them:
 * `lateMaterialization.enabled`, `dictionaryPredicates.enabled`, `predicateCache.maxBytes` (default, 0,
 * or a tiny 200 that forces evictions), `output` (columnar / row), the decode-whole knobs (defaults;
 * `denseFraction=0`: always whole; `denseFraction=1` and `scatteredFraction=1`: never whole),
 * `batchSize` (default or 37) and `selection.policy`. A value of `None` leaves the flag unset (its
 * default). Invariant: [[conf]] names every flag that is not left at its default.
 */
final case class LmFlags(
    lateMaterialization: Boolean,
    dictionaryPredicates: Boolean,
    cacheMaxBytes: Option[Long],
    output: String,
    knobs: String,
    batchSize: Option[Int],
    policy: String) {

  def conf: Seq[(String, String)] =
    Seq(LmConf.LATE_MATERIALIZATION.key -> lateMaterialization.toString,
      LmConf.DICTIONARY_PREDICATES.key -> dictionaryPredicates.toString,
      LmConf.OUTPUT.key -> output,
      LmConf.SELECTION_POLICY.key -> policy) ++
      cacheMaxBytes.map(b => LmConf.PREDICATE_CACHE_MAX_BYTES.key -> b.toString) ++
      batchSize.map(b => LmConf.BATCH_SIZE.key -> b.toString) ++
      LmFlags.knobConf(knobs)

  /** Every flag's setting, as `key=value` (`default` for an unset one), to print with a failure. */
  override def toString: String = {
    val set = conf.toMap
    (LmFlags.keys.map(k => s"$k=${set.getOrElse(k, "default")}") :+ s"decode-whole knobs: $knobs").mkString(", ")
  }
}

object LmFlags {

  val knobValues: IndexedSeq[String] = IndexedSeq("defaults", "always whole", "never whole")

  def knobConf(knobs: String): Seq[(String, String)] = knobs match {
    case "defaults" => Nil
    case "always whole" => Seq(LmConf.LM_DENSE_FRACTION.key -> "0")
    case "never whole" => Seq(LmConf.LM_DENSE_FRACTION.key -> "1", LmConf.LM_SCATTERED_FRACTION.key -> "1")
  }

  private val keys: Seq[String] = Seq(LmConf.LATE_MATERIALIZATION, LmConf.DICTIONARY_PREDICATES,
    LmConf.PREDICATE_CACHE_MAX_BYTES, LmConf.OUTPUT, LmConf.BATCH_SIZE, LmConf.SELECTION_POLICY,
    LmConf.LM_DENSE_FRACTION, LmConf.LM_SCATTERED_FRACTION).map(_.key)

  /** Every combination (2 x 2 x 3 x 2 x 3 x 2 x 3 = 432), in a fixed order. */
  val all: IndexedSeq[LmFlags] =
    for {
      lm <- IndexedSeq(true, false)
      dict <- IndexedSeq(true, false)
      cache <- IndexedSeq(None, Some(0L), Some(200L))
      output <- IndexedSeq("columnar", "row")
      knobs <- knobValues
      batch <- IndexedSeq(None, Some(37))
      policy <- IndexedSeq("auto", "selectors", "mask")
    } yield LmFlags(lm, dict, cache, output, knobs, batch, policy)

  /**
   * The three combinations group `group` (of `groups`) of cases runs under: two with late
   * materialization on and one off, except in a few groups spread evenly, which take one on and two
   * off, just enough for the off half to be covered. Combinations are taken in turn from a seeded
   * shuffle of each half of [[all]] (216 each), so with at least 144 groups every combination runs, and
   * every value of every flag (and every pair of the two boolean switches) about equally often.
   */
  def forGroup(seed: Long, group: Int, groups: Int): IndexedSeq[LmFlags] = {
    val (on, off) = shuffled(seed)
    val extraOff = math.min(groups, math.max(0, off.size - groups)) // groups that take a second off
    def extrasBefore(g: Int): Int = (g.toLong * extraOff / groups).toInt
    val offCount = 1 + extrasBefore(group + 1) - extrasBefore(group)
    val offStart = group + extrasBefore(group)
    val onStart = 3 * group - offStart
    (0 until 3 - offCount).map(i => on((onStart + i) % on.size)) ++
      (0 until offCount).map(i => off((offStart + i) % off.size))
  }

  private var cached: Option[(Long, (IndexedSeq[LmFlags], IndexedSeq[LmFlags]))] = None

  private def shuffled(seed: Long): (IndexedSeq[LmFlags], IndexedSeq[LmFlags]) = synchronized {
    cached.filter(_._1 == seed).map(_._2).getOrElse {
      val r = new Random(seed ^ 0x1a7e5eedL)
      val v = (r.shuffle(all.filter(_.lateMaterialization)), r.shuffle(all.filterNot(_.lateMaterialization)))
      cached = Some(seed -> v)
      v
    }
  }
}
