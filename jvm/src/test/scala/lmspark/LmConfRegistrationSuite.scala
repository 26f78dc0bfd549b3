package lmspark

import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.LmSparkSession

/** lmspark's flags are Spark SQL confs: a bad value fails when it is set, `SET -v` lists every flag
  * with its doc, a good value takes effect, and an unknown `spark.lmspark.*` key is refused when a
  * Parquet scan is planned, naming the closest flag. */
class LmConfRegistrationSuite extends AnyFunSuite with LmSparkSession {

  private val rnd = new scala.util.Random(17)

  /** A value each entry refuses, and one it takes, derived from its own parser. */
  private def badValues(e: LmConf.Entry[_]): Seq[String] =
    Seq("abc", "", "1e999x", "-1", "2.5", "maybe").filter(v => scala.util.Try(e.parse(v)).isFailure)

  test("a bad value is refused when it is set, through spark.conf.set and SQL SET, naming the flag") {
    for (e <- LmConf.entries; bad <- badValues(e)) {
      val before = spark.conf.get(e.key)
      val viaConf = intercept[IllegalArgumentException](spark.conf.set(e.key, bad))
      assert(viaConf.getMessage.contains(e.key) && viaConf.getMessage.contains(e.expectation), viaConf.getMessage)
      val viaSql = intercept[IllegalArgumentException](spark.sql(s"SET ${e.key}=$bad").collect())
      assert(viaSql.getMessage.contains(e.key), viaSql.getMessage)
      assert(spark.conf.get(e.key) == before, s"${e.key} changed by a refused value")
    }
  }

  test("SET -v lists every flag with its doc and default") {
    val rows = spark.sql("SET -v").collect().map(r => r.getString(0) -> r).toMap
    for (e <- LmConf.entries) {
      val row = rows.getOrElse(e.key, fail(s"${e.key} missing from SET -v"))
      assert(row.getString(1) == e.defaultString, e.key)
      assert(row.getString(2) == e.doc, e.key)
    }
  }

  test("a good value takes effect and is read back by the flag") {
    val k = LmConf.BATCH_SIZE.key
    val v = 64 + rnd.nextInt(4000)
    withConf(k -> v.toString) {
      assert(LmConf.BATCH_SIZE.get(spark.sessionState.conf) == v)
    }
    withConf(LmConf.OUTPUT.key -> "ROW") {
      assert(LmConf.OUTPUT.get(spark.sessionState.conf) == "row")
    }
  }

  test("size flags take Spark's size strings, and plain numbers as bytes") {
    val k = LmConf.METADATA_CACHE_MAX_BYTES
    val n = 1 + rnd.nextInt(900)
    for ((text, bytes) <- Seq(s"${n}m" -> (n.toLong << 20), s"${n}k" -> (n.toLong << 10), n.toString -> n.toLong,
        s"${n}MB" -> (n.toLong << 20)))
      withConf(k.key -> text) { assert(k.get(spark.sessionState.conf) == bytes, text) }
    withConf(LmConf.IO_MAX_COALESCE_GAP.key -> s"${n}k") {
      assert(LmConf.IO_MAX_COALESCE_GAP.get(spark.sessionState.conf) == n << 10)
    }
    intercept[IllegalArgumentException](spark.conf.set(LmConf.IO_MAX_COALESCE_GAP.key, "2g"))
    intercept[IllegalArgumentException](spark.conf.set(LmConf.IO_MAX_REQUEST_BYTES.key, "1k")) // below its 64 KiB
    // The dictionaries' bound: -1 (its default, a share of the heap), or a size; no other negative.
    val d = LmConf.METADATA_CACHE_DICTIONARY_MAX_BYTES
    assert(d.get(spark.sessionState.conf) == -1L && d.defaultString == "-1")
    withConf(d.key -> s"${n}m") { assert(d.get(spark.sessionState.conf) == n.toLong << 20) }
    withConf(d.key -> "0") { assert(d.get(spark.sessionState.conf) == 0L) }
    withConf(d.key -> "-1") { assert(d.get(spark.sessionState.conf) == -1L) }
    for (bad <- Seq("-2", s"-${n}m", "-1k"))
      assert(intercept[IllegalArgumentException](spark.conf.set(d.key, bad)).getMessage.contains(d.key), bad)
  }

  test("an unknown spark.lmspark key is refused at the first Parquet scan planned, naming the closest flag") {
    val typos = Seq("spark.lmspark.batchsize" -> LmConf.BATCH_SIZE.key,
      "spark.lmspark.lateMaterialisation.enabled" -> LmConf.LATE_MATERIALIZATION.key,
      "spark.lmspark.enable" -> LmConf.ENABLED.key)
    val dir = newDir("unknown-flags")
    spark.range(10).write.parquet(dir)
    val expected = spark.read.parquet(dir).where("id > 3").collect().map(_.getLong(0)).sorted.toSeq
    for ((typo, closest) <- typos; enabled <- Seq("true", "false")) withConf(typo -> "false", LmConf.ENABLED.key -> enabled) {
      assert(LmConf.unknownKeys(spark.sessionState.conf).contains(typo -> closest))
      for (query <- Seq(() => spark.read.parquet(dir).where("id > 3").collect(),
          () => spark.sql(s"SELECT count(*) FROM parquet.`$dir`").collect())) {
        val e = intercept[IllegalArgumentException](query())
        assert(e.getMessage.contains(s"$typo is not an lmspark flag (did you mean $closest?)"), e.getMessage)
      }
      // a query without a Parquet scan, SET and RESET still run
      assert(spark.range(5).selectExpr("sum(id)").collect().head.getLong(0) == 10)
      assert(spark.sql(s"SET $typo").collect().head.getString(1) == "false")
    }
    assert(LmConf.unknownKeys(spark.sessionState.conf).isEmpty)
    assert(spark.read.parquet(dir).where("id > 3").collect().map(_.getLong(0)).sorted.toSeq == expected)
    spark.sql(s"SET ${typos.head._1}=1")
    intercept[IllegalArgumentException](spark.read.parquet(dir).collect())
    spark.sql(s"RESET ${typos.head._1}")
    assert(spark.read.parquet(dir).where("id > 3").collect().map(_.getLong(0)).sorted.toSeq == expected)
  }
}
