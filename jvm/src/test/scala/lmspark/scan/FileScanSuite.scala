package lmspark.scan

import java.io.{File, RandomAccessFile}

import org.apache.spark.SparkException
import org.apache.spark.sql.functions._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.LmSparkSession

/** The scan over whole tables: splits, bucketing, dynamic pruning, missing and corrupt files. */
class FileScanSuite extends AnyFunSuite with LmSparkSession {

  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.warehouse.dir" -> new File(tempRoot, "warehouse").getAbsolutePath)

  private def parquetFiles(dir: String): Seq[File] =
    new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).sortBy(_.getName).toSeq

  test("a file split into many splits reads each row group exactly once") {
    val p = newDir("splits")
    spark.range(0, 100000, 1, 1).select(col("id"), (col("id") % 13).as("m"), col("id").cast("string").as("s"))
      .write.option("parquet.block.size", 64 * 1024).parquet(p)
    withConf("spark.sql.files.maxPartitionBytes" -> (96 * 1024).toString,
        "spark.sql.files.openCostInBytes" -> "0") {
      def q = spark.read.parquet(p)
      assert(q.rdd.getNumPartitions > 3)
      checkSparkAnswerAndLmUsed(q)
      checkSparkAnswerAndLmUsed(q.where(col("m") === 3).select("s"))
    }
  }

  test("bucketed tables keep Spark's bucketing, so a bucketed join needs no shuffle") {
    val t1 = spark.range(0, 1000).select(col("id"), (col("id") % 10).as("v"))
    t1.write.bucketBy(4, "id").sortBy("id").saveAsTable("b1")
    t1.write.bucketBy(4, "id").sortBy("id").saveAsTable("b2")
    withConf("spark.sql.autoBroadcastJoinThreshold" -> "-1") {
      def q = spark.table("b1").join(spark.table("b2"), "id")
      val plan = checkSparkAnswerAndLmUsed(q)
      assert(collectWithSubqueries(plan) {
        case e: org.apache.spark.sql.execution.exchange.ShuffleExchangeExec => e
      }.isEmpty, plan.toString)
    }
  }

  test("dynamic partition pruning works through lmspark's scan, with and without AQE") {
    val fact = newDir("fact")
    spark.range(0, 20000).select(col("id"), (col("id") % 20).as("p"), (col("id") * 2).as("x"))
      .write.partitionBy("p").parquet(fact)
    val dim = newDir("dim")
    spark.range(0, 20).select(col("id").as("p"), (col("id") % 5).as("g")).write.parquet(dim)
    for (aqe <- Seq("true", "false")) withConf("spark.sql.adaptive.enabled" -> aqe,
        "spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly" -> "false") {
      def q = spark.read.parquet(fact).join(spark.read.parquet(dim).where(col("g") === 2), "p")
        .groupBy("g").agg(sum("x"), count(lit(1)))
      val plan = checkSparkAnswerAndLmUsed(q)
      val text = plan.toString
      assert(text.contains("dynamicpruning"), s"aqe=$aqe\n$text")
    }
  }

  test("ignoreMissingFiles behaves as in Spark") {
    val p = newDir("missing")
    spark.range(0, 3000, 1, 3).write.parquet(p)
    val df = spark.read.parquet(p) // lists the files now
    parquetFiles(p).head.delete()
    withConf("spark.sql.files.ignoreMissingFiles" -> "true") {
      val expected = withConf("spark.lmspark.enabled" -> "false") { df.select("id").collect().map(_.getLong(0)).sorted }
      val actual = df.select("id").collect().map(_.getLong(0)).sorted
      assert(actual.sameElements(expected) && actual.length == 2000)
    }
    val e = intercept[SparkException](df.select("id").collect())
    assert(e.getMessage.contains("does not exist") || e.getCause.isInstanceOf[java.io.FileNotFoundException], e.getMessage)
  }

  test("a truncated file fails with an error that names the file") {
    val p = newDir("truncated")
    spark.range(0, 5000, 1, 1).select(col("id"), col("id").cast("string").as("s")).write.parquet(p)
    val f = parquetFiles(p).head
    val raf = new RandomAccessFile(f, "rw")
    try raf.setLength(raf.length() / 2) finally raf.close()
    val schema = spark.range(1).select(col("id"), col("id").cast("string").as("s")).schema
    val e = intercept[SparkException](spark.read.schema(schema).parquet(p).collect())
    val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
    assert(messages.contains(f.getName), messages)
  }

  test("a file with garbage in its column chunks fails with an error that names the file") {
    val p = newDir("garbage")
    spark.range(0, 5000, 1, 1).select(col("id"), col("id").cast("string").as("s")).write.parquet(p)
    val f = parquetFiles(p).head
    val raf = new RandomAccessFile(f, "rw")
    try {
      raf.seek(4)
      raf.write(Array.fill[Byte](2000)(0x7f.toByte))
    } finally raf.close()
    withConf("spark.lmspark.enabled" -> "true") {
      val e = intercept[SparkException](spark.read.parquet(p).collect())
      val messages = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
      assert(messages.contains(f.getName), messages)
    }
  }
}
