package lmspark.scan

import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.plan.LmMetrics
import lmspark.testutil.{HalfFloatFiles, LmSparkSession}

/**
 * [[ReaderSetups]]: a repeated query reuses the broadcast configuration and Spark's reader, and
 * anything that could change what they do (a SQL setting, a Hadoop setting, another session)
 * gets new ones. Answers are checked against vanilla Spark (lmspark off, pushdown off) every time,
 * the reuse by the cache's own counts.
 */
class ReaderSetupsSuite extends AnyFunSuite with LmSparkSession {

  private def counts = (ReaderSetups.hits, ReaderSetups.misses)

  test("a repeated query reuses both setups and answers the same") {
    val dir = newDir("repeat")
    spark.range(0, 5000, 1, 2).select(col("id"), (col("id") % 97).as("k")).write.parquet(dir)
    def q = spark.read.parquet(dir).where(col("k") === 5)
    checkSparkAnswerAndLmUsed(q)
    val (hits, misses) = counts
    checkSparkAnswerAndLmUsed(q)
    val (hits2, misses2) = counts
    assert(misses2 == misses, "the second run built a setup again")
    assert(hits2 >= hits + 2, "the second run did not reuse the configuration and Spark's reader")

    val other = spark.newSession()
    other.conf.set("spark.lmspark.enabled", "true")
    other.read.parquet(dir).where(col("k") === 5).collect()
    assert(ReaderSetups.misses >= misses2 + 2, "another session reused this session's setups")
  }

  test("a SQL setting changed between identical queries reaches Spark's reader (case sensitivity)") {
    val dir = newDir("case")
    HalfFloatFiles.write(dir, "f16", 0, 2000, float16 = true)
    // ID matches the file's id only without case sensitivity; with it, ID reads as nulls.
    def q = spark.read.schema("ID long, x int, h binary").parquet(dir).where(col("x") % 3 === 0)
    for (sensitive <- Seq("false", "true", "false", "true")) {
      withConf("spark.sql.caseSensitive" -> sensitive) {
        val plan = checkSparkAnswerAndLmUsed(q)
        assert(lmScans(plan).head.metrics(LmMetrics.FilesFallback).value >= 1, "no file went to Spark's reader")
        val ids = q.select("ID").collect().count(!_.isNullAt(0))
        assert((ids == 0) == (sensitive == "true"), s"caseSensitive=$sensitive: $ids non-null ids")
      }
    }
  }

  test("a Hadoop setting changed between identical queries gets new broadcasts") {
    val dir = newDir("hadoop")
    spark.range(0, 1000).write.parquet(dir)
    def q = spark.read.parquet(dir).where(col("id") > 990)
    checkSparkAnswerAndLmUsed(q)
    val hadoop = spark.sparkContext.hadoopConfiguration
    try {
      for (v <- Seq("a", "b")) {
        hadoop.set("lmspark.test.reader-setups", v)
        val before = ReaderSetups.misses
        checkSparkAnswerAndLmUsed(q)
        assert(ReaderSetups.misses >= before + 2, s"setting $v: a setup made for another configuration was reused")
      }
    } finally hadoop.unset("lmspark.test.reader-setups")
  }
}
