package lmspark.plan

import scala.util.Random

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.LmConf
import lmspark.testutil.{LmFlags, LmSparkSession, NestedData}

/** Struct fields nothing above the scan reads are left unread ([[NestedFieldUse]]), and that never
  * changes an answer: seeded random files (`id`, `k`, a struct `s` and a list of structs `a` of
  * random fields, nulls at every level, written by Spark with random page layouts) and queries
  * of every shape the analysis walks or refuses (explode and posexplode, outer or not, with
  * filters, aggregates, sorts, joins, self-joins through a reused CTE, unions, whole elements,
  * `size` / `IS NULL` tests, element access, lambdas), each under a combination of the pipeline's
  * flags: every case equals vanilla Spark with lmspark and filter pushdown off. Fixed cases check
  * what is left unread and that its leaves are not read.
  *
  * `LMSPARK_TEST_SEED` (default 20261127) changes every file and case; a failure prints the seed,
  * the file's parameters, the SQL and the flags. */
class NestedFieldUseSuite extends AnyFunSuite with LmSparkSession {

  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.datetime.java8API.enabled" -> "true",
    "spark.sql.shuffle.partitions" -> "2")

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261127L)
  private val Files = 12
  private val CasesPerFile = 20

  private final case class Written(dir: String, params: String, s: StructType, e: StructType)

  private def fields(r: Random): StructType =
    StructType((0 until 2 + r.nextInt(3)).map(i => StructField(s"f$i", NestedData.randomType(2, r), r.nextInt(4) != 0)))

  private def write(number: Int): Written = {
    val r = new Random(seed * 1000003L + number)
    val s = fields(r)
    val e = fields(r)
    val schema = StructType(Seq(StructField("id", LongType, nullable = false), StructField("k", IntegerType),
      StructField("s", s, r.nextInt(4) != 0), StructField("a", ArrayType(e, r.nextBoolean()), r.nextInt(4) != 0)))
    val count = 50 + r.nextInt(500)
    val rows = (0 until count).map { i =>
      Row(i.toLong, if (r.nextInt(8) == 0) null else r.nextInt(20),
        NestedData.value(schema(2).dataType, schema(2).nullable, r), NestedData.value(schema(3).dataType, schema(3).nullable, r))
    }
    val v2 = r.nextBoolean()
    val dictionary = r.nextBoolean()
    val pageRows = Seq(7, 50, 1000)(r.nextInt(3))
    val params = s"pages ${if (v2) "v2" else "v1"}, dictionary $dictionary, $pageRows rows per page, $count rows, " +
      s"schema ${schema.catalogString}"
    val dir = newDir(s"field-use-$number")
    spark.createDataFrame(spark.sparkContext.parallelize(rows, 1), schema).write
      .option("parquet.enable.dictionary", dictionary.toString)
      .option("parquet.writer.version", if (v2) "PARQUET_2_0" else "PARQUET_1_0")
      .option("parquet.page.row.count.limit", pageRows.toString)
      .option("parquet.block.size", (1 << 16).toString)
      .parquet(dir)
    Written(dir, params, s, e)
  }

  /** Field paths below a struct type (`f0`, `f0.f1`, ...). */
  private def paths(t: StructType): Seq[(String, DataType)] = NestedData.structPaths("", t).map { case (p, d) => (p.drop(1), d) }

  private def orderable(t: DataType): Boolean = t match {
    case _: MapType => false
    case a: ArrayType => orderable(a.elementType)
    case s: StructType => s.fields.forall(f => orderable(f.dataType))
    case _ => true
  }

  /** A random query over `w`'s table `t`. */
  private def query(w: Written, r: Random): String = {
    def pick(t: StructType): String = { val ps = paths(t); ps(r.nextInt(ps.size))._1 }
    def pickOrderable(t: StructType): Option[String] = {
      val ps = paths(t).filter(p => orderable(p._2)).map(_._1)
      if (ps.isEmpty) None else Some(ps(r.nextInt(ps.size)))
    }
    val e1 = pick(w.e)
    val e2 = pick(w.e)
    val s1 = pick(w.s)
    val s2 = pick(w.s)
    val filter = Seq("", " WHERE id % 3 = 0", " WHERE k > 5", " WHERE k IS NULL")(r.nextInt(4))
    r.nextInt(16) match {
      case 0 => s"SELECT id, e.$e1, e.$e2 FROM t LATERAL VIEW explode(a) v AS e$filter"
      case 1 => s"SELECT id, p, e.$e1 FROM t LATERAL VIEW OUTER posexplode(a) v AS p, e$filter"
      case 2 => s"SELECT id, e IS NULL, e.$e1 IS NOT NULL FROM t LATERAL VIEW OUTER explode(a) v AS e$filter"
      case 3 => s"SELECT count(*), count(e.$e1) FROM t LATERAL VIEW explode(a) v AS e WHERE e.$e2 IS NOT NULL"
      case 4 => s"SELECT id, size(a), s IS NULL, s.$s1 FROM t$filter"
      case 5 => s"SELECT id, s.$s1 FROM t WHERE s.$s2 IS NOT NULL"
      case 6 => s"SELECT id, e FROM t LATERAL VIEW explode(a) v AS e$filter"
      case 7 => s"SELECT id, s FROM t WHERE size(a) > 1"
      case 8 => s"SELECT x.id, y.f FROM t x JOIN (SELECT id, e.$e1 AS f FROM t LATERAL VIEW explode(a) v AS e) y ON x.id = y.id WHERE x.k > 3"
      case 9 => s"SELECT id, e.$e1 FROM t LATERAL VIEW explode(a) v AS e WHERE id < 20 UNION ALL SELECT id, e.$e1 FROM t LATERAL VIEW explode(a) v AS e WHERE k = 1"
      case 10 => s"SELECT id, a.$e1 FROM t$filter"
      case 11 => s"SELECT id, get(a, 0).$e1, get(a, 1) IS NULL, size(a.$e2) FROM t$filter"
      case 12 => pickOrderable(w.e).fold(s"SELECT id, e.$e1 FROM t LATERAL VIEW explode(a) v AS e")(o =>
        s"SELECT id, e.$o FROM t LATERAL VIEW explode(a) v AS e ORDER BY id, e.$o")
      case 13 => s"WITH c AS (SELECT id, e FROM t LATERAL VIEW explode(a) v AS e) " +
        s"SELECT c1.id, c1.e.$e1, c2.e.$e2 FROM c c1 JOIN c c2 ON c1.id = c2.id"
      case 14 => s"SELECT id, transform(a, x -> x.$e1) FROM t$filter"
      case _ => s"SELECT id, e.$e1, s.$s1 FROM t LATERAL VIEW OUTER explode(a) v AS e WHERE s IS NOT NULL OR e IS NULL"
    }
  }

  private def rowsOf(df: DataFrame): Seq[String] = df.collect().toSeq.map(NestedData.canonical).sorted

  private val flags: IndexedSeq[LmFlags] = new Random(seed ^ 0xf1e1dL).shuffle(LmFlags.all)

  test(s"random files and queries: $Files files x $CasesPerFile cases, lmspark leaving fields unread = vanilla") {
    var failures = Vector.empty[String]
    var pruned = 0
    (0 until Files).foreach { n =>
      val w = write(n)
      spark.read.parquet(w.dir).createOrReplaceTempView("t")
      val r = new Random(seed * 7919L + n)
      (0 until CasesPerFile).foreach { c =>
        val text = query(w, r)
        val f = flags((n * CasesPerFile + c) % flags.size)
        val described = s"seed $seed, file $n (${w.params}), case $n:$c: $text; flags $f"
        try {
          val expected = withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
            rowsOf(spark.sql(text))
          }
          withConf(("spark.lmspark.enabled" -> "true") +: f.conf: _*) {
            val df = spark.sql(text)
            val actual = rowsOf(df)
            if (lmScans(df.queryExecution.executedPlan).exists(_.unreadFields.nonEmpty)) pruned += 1
            if (actual != expected)
              failures :+= s"rows differ: $described\n  only lmspark: ${actual.diff(expected).take(3)}\n" +
                s"  only vanilla: ${expected.diff(actual).take(3)}\n${df.queryExecution.executedPlan}"
          }
        } catch {
          case e: Exception => failures :+= s"failed: $described\n  $e"
        }
      }
    }
    assert(failures.isEmpty, s"${failures.size} of ${Files * CasesPerFile} cases failed; first ones:\n${failures.take(3).mkString("\n")}")
    assert(pruned >= Files * CasesPerFile / 4, s"only $pruned cases left a field unread")
  }

  private lazy val fixed: String = {
    val dir = newDir("field-use-fixed")
    spark.range(0, 3000, 1, 1).selectExpr("id", "cast(id % 10 as int) AS k",
      "named_struct('x', id, 'y', concat('name-', id), 'z', named_struct('p', id * 2, 'q', repeat('q', 40))) AS s",
      "transform(sequence(0, cast(id % 5 as int)), i -> named_struct('n', i, 'c', repeat('c', 60), 'd', id * 1.5)) AS a")
      .write.option("parquet.page.row.count.limit", "200").parquet(dir)
    dir
  }

  private def unreadOf(df: DataFrame): Set[String] =
    lmScans(executedPlan(df)).flatMap(_.unreadFields.map(_.mkString("."))).toSet

  private def bytesRead(q: String, prune: Boolean): Long =
    withConf(LmConf.PRUNING_NESTED_FIELDS.key -> prune.toString) {
      val df = spark.sql(q)
      lmScans(executedPlan(df)).map(_.metrics(LmMetrics.BytesRead).value).sum
    }

  test("explode then struct fields: only those leaves (and the list's structure) are read, and EXPLAIN lists the rest") {
    spark.read.parquet(fixed).createOrReplaceTempView("fixed")
    // (With one field, Spark itself explodes `a.n` and its schema pruning reads only `n`.)
    val q = "SELECT id, e.n, e.d FROM fixed LATERAL VIEW explode(a) v AS e WHERE k = 3"
    checkSparkAnswerAndLmUsed(spark.sql(q))
    assert(unreadOf(spark.sql(q)) == Set("a.element.c"))
    val text = spark.sql(q).queryExecution.explainString(org.apache.spark.sql.execution.ExplainMode.fromString("simple"))
    assert(text.contains("LmUnreadFields: [a.element.c]"), text)
    assert(bytesRead(q, prune = true) < bytesRead(q, prune = false))
    withConf(LmConf.PRUNING_NESTED_FIELDS.key -> "false") {
      assert(unreadOf(spark.sql(q)).isEmpty)
      checkSparkAnswerAndLmUsed(spark.sql(q))
    }
  }

  /** Whether struct-field path `p` (`element` inside a list) is in `t`. */
  private def hasPath(t: DataType, p: Seq[String]): Boolean = (t, p) match {
    case (_, Seq()) => true
    case (st: StructType, f +: rest) => st.fields.find(_.name == f).exists(x => hasPath(x.dataType, rest))
    case (at: ArrayType, "element" +: rest) => hasPath(at.elementType, rest)
    case _ => false
  }

  test("structure-only uses keep one leaf; whole uses and lambdas keep everything; a union reads what it outputs") {
    spark.read.parquet(fixed).createOrReplaceTempView("fixed")
    // `unread`: what lmspark leaves unread of what Spark's own pruning requested.
    def check(q: String, unread: Set[String]): Unit = {
      val plan = checkSparkAnswerAndLmUsed(spark.sql(q))
      val required = lmScans(plan).map(_.requiredSchema)
      val expected = unread.filter(u => required.exists(t => hasPath(t, u.split('.').toSeq)))
      assert(unreadOf(spark.sql(q)) == expected, q)
    }
    // `s IS NULL` and `size(a)` alone: Spark reads both whole; no field is used, and the reader
    // keeps one leaf of each (the first) for their structure.
    check("SELECT id, size(a), s IS NULL FROM fixed WHERE k = 1", Set("s.x", "s.y", "s.z", "a.element.n", "a.element.c", "a.element.d"))
    assert(unreadOf(spark.sql("SELECT id, size(a), s IS NULL FROM fixed WHERE k = 1")).size == 6)
    check("SELECT id, s.z.q FROM fixed WHERE s IS NOT NULL", Set("s.x", "s.y", "s.z.p"))
    check("SELECT id, e FROM fixed LATERAL VIEW explode(a) v AS e WHERE k = 2", Set.empty)
    check("SELECT id, transform(a, x -> x.n) FROM fixed WHERE k = 2", Set.empty)
    check("SELECT id, e.n FROM fixed LATERAL VIEW explode(a) v AS e WHERE k = 2 " +
      "UNION ALL SELECT id, e.n FROM fixed LATERAL VIEW explode(a) v AS e WHERE k = 4", Set("a.element.c", "a.element.d"))
    check("SELECT e.n, count(*), max(e.d) FROM fixed LATERAL VIEW explode(a) v AS e GROUP BY e.n", Set("a.element.c"))
    check("SELECT id, get(a, 1).d, get(a, 0) IS NULL FROM fixed WHERE k = 2", Set("a.element.n", "a.element.c"))
    check("SELECT id, e FROM fixed LATERAL VIEW explode(a.n) v AS e WHERE k = 2", Set("a.element.c", "a.element.d"))
  }
}
