package lmspark

import org.apache.spark.sql.SparkSession
import org.scalatest.funsuite.AnyFunSuite

/** The gate at injection: this jar acts only on the Spark line it was built for, and names the
  * supported lines when it steps aside. */
class SparkLineGateSuite extends AnyFunSuite {

  test("the jar's line is the running Spark's line, so the gate is open") {
    assert(SparkLineGate.builtLine() == SparkLineGate.lineOf(org.apache.spark.SPARK_VERSION))
    assert(SparkLineGate.mismatch(org.apache.spark.SPARK_VERSION) == null)
    assert(SparkLineGate.open())
  }

  test("another line, or a line no jar exists for, is refused with every supported line named") {
    val lines = SparkLineGate.supportedLines().split(", ").toSeq
    assert(lines.contains(SparkLineGate.builtLine()) && lines.size >= 2, lines)
    val others = lines.filterNot(_ == SparkLineGate.builtLine()).map(_ + ".0") :+ "4.4.0" :+ "5.0.0-preview1"
    for (v <- others) {
      val why = SparkLineGate.mismatch(v)
      assert(why != null, v)
      assert(why.contains(s"this is Spark $v") && why.contains(s"built for Spark ${SparkLineGate.builtLine()}"), why)
      assert(lines.forall(why.contains), why)
    }
  }

  test("a patch release of the same line is served") {
    val Array(major, minor) = SparkLineGate.builtLine().split('.')
    for (v <- Seq(s"$major.$minor.0", s"$major.$minor.99", s"$major.$minor.1-SNAPSHOT"))
      assert(SparkLineGate.mismatch(v) == null, v)
  }

  test("the extension injects lmspark's rules through the gate") {
    val spark = SparkSession.builder().master("local[1]").config("spark.ui.enabled", "false")
      .config("spark.sql.extensions", classOf[LmSparkExtensions].getName).getOrCreate()
    try {
      val dir = java.nio.file.Files.createTempDirectory("lmspark-gate").toString + "/t"
      spark.range(100).write.parquet(dir)
      val plan = spark.read.parquet(dir).where("id > 10").queryExecution.executedPlan.toString
      assert(plan.contains("LmParquetScan"), plan)
    } finally spark.stop()
  }
}
