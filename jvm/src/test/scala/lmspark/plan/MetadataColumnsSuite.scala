package lmspark.plan

import scala.util.Random

import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.{FilterColumn, LmSparkSession}
import lmspark.testutil.RandomPredicates

/**
 * `_metadata` through lmspark's scan, against Spark's reader (lmspark off, pushdown off): the
 * file's constant fields (which Spark's file scan fills) and `row_index` (which lmspark's reader
 * fills: each row's index in its file, whatever the row group, the split, the page-index selection
 * or the filter-first pass left out before it).
 *
 * Files: two, each of several row groups of 100-row pages, `k` sorted (so page indexes select),
 * `v` random with nulls. Seeded random filters over both, with `_metadata` fields and columns
 * projected, over batch sizes, split sizes, output modes and selection policies. The seed is
 * printed; `LMSPARK_TEST_SEED=<seed>` reruns a failing case, whose SQL is printed.
 */
class MetadataColumnsSuite extends AnyFunSuite with LmSparkSession {

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261129L)
  private val rowsPerFile = 3000

  private lazy val (path, values) = {
    val r = new Random(seed)
    val p = newDir("metadata")
    val data = (0 until 2 * rowsPerFile).map { i =>
      (i.toLong, (i % rowsPerFile) / 3, if (r.nextInt(10) == 0) None else Some(r.nextInt(1000)), s"s${r.nextInt(50)}")
    }
    val conf = spark.sparkContext.hadoopConfiguration
    conf.set("parquet.block.size", "8192")
    conf.set("parquet.page.row.count.limit", "100")
    try {
      // One file per half of the ids, each written in id order.
      data.grouped(rowsPerFile).foreach { half =>
        spark.createDataFrame(half).toDF("id", "k", "v", "s").coalesce(1).write.mode("append").parquet(p)
      }
    } finally { conf.unset("parquet.block.size"); conf.unset("parquet.page.row.count.limit") }
    (p, data)
  }

  private def columns: IndexedSeq[FilterColumn] = IndexedSeq(
    FilterColumn("id", LongType, values.map(_._1), IndexedSeq(0)),
    FilterColumn("k", IntegerType, values.map(_._2), IndexedSeq(0)),
    FilterColumn("v", IntegerType, values.map(_._3.fold(null: Any)(v => v)), IndexedSeq(0)),
    FilterColumn("s", StringType, values.map(_._4), IndexedSeq(0)))

  private val projections = Seq(
    Seq("id", "_metadata.row_index"),
    Seq("_metadata.row_index"),
    Seq("k", "v", "_metadata.file_name", "_metadata.row_index"),
    Seq("s", "_metadata"),
    Seq("v", "_metadata.file_path", "_metadata.file_size", "_metadata.file_block_start"))

  test("the files have several row groups and pages, and page indexes") {
    info(s"seed $seed")
    val files = new java.io.File(path).listFiles().filter(_.getName.endsWith(".parquet"))
    assert(files.length == 2)
    files.foreach { f =>
      val reader = org.apache.parquet.hadoop.ParquetFileReader.open(org.apache.parquet.hadoop.util.HadoopInputFile
        .fromPath(new org.apache.hadoop.fs.Path(f.getAbsolutePath), spark.sessionState.newHadoopConf()))
      try assert(reader.getFooter.getBlocks.size > 2, f) finally reader.close()
    }
  }

  test("_metadata with row_index: seeded random filters and projections, Spark's answers") {
    val r = new Random(seed)
    val gen = new RandomPredicates(columns, r)
    val settings = Seq(
      Seq("spark.lmspark.batchSize" -> "4096"),
      Seq("spark.lmspark.batchSize" -> "37", "spark.lmspark.selection.policy" -> "mask"),
      Seq("spark.sql.files.maxPartitionBytes" -> "16KB", "spark.sql.files.openCostInBytes" -> "1",
        "spark.lmspark.selection.policy" -> "selectors"),
      Seq("spark.lmspark.output" -> "row", "spark.lmspark.lateMaterialization.enabled" -> "false"))
    var served = 0
    (0 until 120).foreach { i =>
      val predicate = gen.predicate()
      val projection = projections(i % projections.size)
      val conf = settings(i % settings.size)
      val sql = s"SELECT ${projection.mkString(", ")} WHERE $predicate  [${conf.mkString(", ")}]"
      withClue(s"case $i (seed $seed): $sql\n") {
        withConf(conf: _*) {
          def q = spark.read.parquet(path).where(predicate).select(projection.map(col): _*)
          val plan = checkSparkAnswer(q)
          if (lmScans(plan).nonEmpty) served += 1
        }
      }
    }
    assert(served >= 60, s"lmspark served $served of 120 cases")
  }

  test("a filter on _metadata.row_index stays Spark's, with Spark's answers") {
    def q = spark.read.parquet(path).where("_metadata.row_index % 7 = 3 AND k > 100")
      .select(col("id"), col("_metadata.row_index"))
    val plan = checkSparkAnswerAndLmUsed(q)
    assert(q.count() == values.count { case (id, k, _, _) => id % rowsPerFile % 7 == 3 && k > 100 }, plan)
  }

  test("row_index is each row's index in its file") {
    def q = spark.read.parquet(path).select(col("id"), col("_metadata.row_index"), col("_metadata.file_name"))
    checkSparkAnswerAndLmUsed(q)
    withConf("spark.lmspark.enabled" -> "true", "spark.sql.files.maxPartitionBytes" -> "16KB",
        "spark.sql.files.openCostInBytes" -> "1") {
      val rows = q.collect()
      assert(rows.length == values.size)
      // Each file holds one half of the ids, sorted: a row's index is its id within its half.
      rows.foreach(row => assert(row.getLong(1) == row.getLong(0) % rowsPerFile, row))
    }
  }
}
