package lmspark.plan

import java.math.{BigDecimal => JBigDecimal}
import java.time.{Instant, LocalDate}

import scala.jdk.CollectionConverters._
import scala.util.Random

import io.delta.tables.DeltaTable
import org.apache.spark.sql.{DataFrame, Row, functions}
import org.apache.spark.sql.execution.{FileSourceScanExec, SimpleMode, SparkPlan}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.shim.DeltaTables
import lmspark.testutil.{FilterColumn, LmSparkSession, RandomPredicates}

/**
 * Delta Lake tables through lmspark, against Delta's own reader (lmspark off, filter pushdown off)
 * on the same session: seeded random filters and projections over real Delta tables written by
 * Delta itself.
 *  - A table whose scan reads as plain Parquet (no deletion vectors marked, no column mapping) is
 *    read by lmspark's scan, partitioned or not.
 *  - A table with deletion vectors in its files, or with column mapping, is declined with the reason
 *    in every `EXPLAIN` mode, and Delta's reader (kept intact) gives the rows.
 * Row counts are also checked against the generated rows themselves (deleted rows never come back).
 *
 * The seed is printed; `LMSPARK_TEST_SEED=<seed>` reruns a failing case, whose SQL is printed.
 */
class DeltaScanSuite extends AnyFunSuite with LmSparkSession {

  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.extensions" -> "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog" -> "org.apache.spark.sql.delta.catalog.DeltaCatalog")

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261129L)

  private val schema = StructType(Seq(
    StructField("id", LongType, nullable = false), StructField("k", IntegerType), StructField("l", LongType),
    StructField("d", DoubleType), StructField("s", StringType), StructField("cat", StringType),
    StructField("dec", DecimalType(9, 2)), StructField("dt", DateType), StructField("ts", TimestampType),
    StructField("bool", BooleanType)))

  private val rowCount = 2400

  /** `rowCount` seeded rows of [[schema]], about 5 % nulls in every nullable column. */
  private def rows(r: Random): Seq[Row] = {
    def maybe[T](v: => T): Any = if (r.nextInt(100) < 5) null else v
    (0 until rowCount).map { i =>
      Row(i.toLong, maybe(r.nextInt(2001) - 1000), maybe(r.nextLong() % 1000000000L),
        maybe(if (r.nextInt(50) == 0) Double.NaN else (r.nextInt(20001) - 10000) / 8.0),
        maybe(Seq.fill(r.nextInt(5))(('a' + r.nextInt(5)).toChar).mkString), maybe(f"c${r.nextInt(12)}%02d"),
        maybe(JBigDecimal.valueOf(r.nextInt(2000001) - 1000000L, 2)), maybe(LocalDate.ofEpochDay(r.nextInt(20000) - 5000L)),
        maybe(Instant.ofEpochSecond(r.nextInt(2000000000) - 1000000000L, r.nextInt(1000000) * 1000L)),
        maybe(r.nextBoolean()))
    }
  }

  /** Writes `data` as a new Delta table in 4 files (partitioned by `cat` if asked), with the
    * given table-property defaults, and returns its path. */
  private def deltaTable(label: String, data: Seq[Row], partitioned: Boolean, properties: (String, String)*): String = {
    val path = newDir(label)
    val defaults = properties.map { case (k, v) => s"spark.databricks.delta.properties.defaults.$k" -> v }
    withConf(defaults: _*) {
      val w = spark.createDataFrame(data.asJava, schema).repartition(4).write.format("delta")
      (if (partitioned) w.partitionBy("cat") else w).save(path)
    }
    path
  }

  private def read(path: String): DataFrame = spark.read.format("delta").load(path)

  /** The Delta scans of `plan` lmspark declined, with their reasons. */
  private def declinedDeltaScans(plan: SparkPlan): Seq[(FileSourceScanExec, Seq[String])] =
    sparkParquetScans(plan).flatMap(s => Fallback.reasonsOf(s).map(s -> _))

  /** `n` seeded random (filter, projection) pairs over `data`'s columns, each checked against
    * Delta's reader; `served`: lmspark's scan must read the table, else it must be declined with a
    * reason containing `reason`. Failures are gathered and reported with the seed and SQL. */
  private def differential(label: String, path: String, data: Seq[Row], n: Int, served: Boolean, reason: String = ""): Int = {
    val columns = schema.fields.toIndexedSeq.zipWithIndex.map { case (f, i) =>
      FilterColumn(f.name, f.dataType, data.toIndexedSeq.map(_.get(i)), IndexedSeq(0))
    }
    val r = new Random(seed ^ label.hashCode)
    val gen = new RandomPredicates(columns, r)
    val failures = Seq.newBuilder[String]
    var scans = 0
    (0 until n).foreach { i =>
      val predicate = gen.predicate()
      val projection = r.shuffle(schema.fieldNames.toSeq).take(1 + r.nextInt(schema.size))
      val sql = s"SELECT ${projection.mkString(", ")} WHERE $predicate"
      try {
        val plan = checkSparkAnswer(read(path).where(predicate).select(projection.map(functions.col): _*))
        // A predicate Spark's optimizer proves false leaves no scan at all (an empty local relation).
        val scanned = lmScans(plan).nonEmpty || sparkParquetScans(plan).nonEmpty
        if (scanned) scans += 1
        if (scanned && served && lmScans(plan).isEmpty) failures += s"$label #$i: lmspark's scan was not used\n    $sql\n$plan"
        if (scanned && !served) {
          val declined = declinedDeltaScans(plan)
          if (lmScans(plan).nonEmpty || declined.isEmpty || !declined.forall(_._2.exists(_.contains(reason))))
            failures += s"$label #$i: expected a decline naming '$reason', got ${declined.map(_._2)}\n    $sql\n$plan"
        }
      } catch {
        case e: org.scalatest.exceptions.TestFailedException => failures += s"$label #$i: ${e.getMessage}\n    $sql"
      }
    }
    val all = failures.result()
    if (all.nonEmpty) fail(s"${all.size} of $n cases failed (seed $seed; rerun with LMSPARK_TEST_SEED=$seed):\n" +
      all.take(5).mkString("\n"))
    assert(scans >= n / 2, s"only $scans of $n cases scanned the table (the rest were optimized away)")
    info(s"$label: $n cases, $scans of them scanned the table")
    n
  }

  test("Delta classes are on this line's classpath") {
    assert(DeltaTables.available)
    info(s"seed $seed")
  }

  test("a Delta table read as plain Parquet goes through lmspark's scan, with Delta's answers") {
    val data = rows(new Random(seed))
    val path = deltaTable("plain", data, partitioned = false)
    assert(read(path).count() == data.size)
    differential("plain", path, data, 50, served = true)
  }

  test("a partitioned Delta table goes through lmspark's scan, with Delta's answers") {
    val data = rows(new Random(seed + 1))
    val path = deltaTable("partitioned", data, partitioned = true)
    differential("partitioned", path, data, 30, served = true)
  }

  test("deletion vectors enabled but none written: the scan reads as plain Parquet") {
    val data = rows(new Random(seed + 2))
    val path = deltaTable("dv-none", data, partitioned = false, "enableDeletionVectors" -> "true")
    differential("dv-none", path, data, 15, served = true)
  }

  test("deleted rows marked in deletion vectors: declined with the reason in EXPLAIN, Delta's rows") {
    val data = rows(new Random(seed + 3))
    val path = deltaTable("dv", data, partitioned = false, "enableDeletionVectors" -> "true")
    DeltaTable.forPath(spark, path).delete("id % 7 = 3")
    // The table's own oracle: the generated rows minus the deleted ones, for lmspark on and off.
    val kept = data.count(_.getLong(0) % 7 != 3)
    withConf("spark.lmspark.enabled" -> "true") { assert(read(path).count() == kept) }
    withConf("spark.lmspark.enabled" -> "false") { assert(read(path).count() == kept) }
    val df = read(path).where("k > 0")
    val plan = executedPlan(df)
    val reasons = declinedDeltaScans(plan).flatMap(_._2)
    assert(reasons.exists(_.contains("Delta deletion vectors")), plan)
    val explain = df.queryExecution.explainString(SimpleMode)
    assert(explain.contains("lmspark fallback: Delta deletion vectors"), explain)
    differential("dv", path, data.filter(_.getLong(0) % 7 != 3), 30, served = false, "Delta deletion vectors")
  }

  test("column mapping by name: declined with the reason, Delta's rows after a rename") {
    val data = rows(new Random(seed + 4))
    val path = deltaTable("cm-name", data, partitioned = false,
      "columnMapping.mode" -> "name", "minReaderVersion" -> "2", "minWriterVersion" -> "5")
    spark.sql(s"ALTER TABLE delta.`$path` RENAME COLUMN k TO k_renamed")
    val df = read(path).where("k_renamed > 0")
    val plan = checkSparkAnswer(read(path).where("k_renamed > 0"))
    assert(declinedDeltaScans(plan).flatMap(_._2).exists(_.contains("Delta column mapping, mode name")), plan)
    assert(df.count() == data.count(r => !r.isNullAt(1) && r.getInt(1) > 0))
  }

  test("column mapping by id: declined with the reason, Delta's rows") {
    val data = rows(new Random(seed + 5))
    val path = deltaTable("cm-id", data, partitioned = false,
      "columnMapping.mode" -> "id", "minReaderVersion" -> "2", "minWriterVersion" -> "5")
    differential("cm-id", path, data, 25, served = false, "Delta column mapping, mode id")
  }
}
