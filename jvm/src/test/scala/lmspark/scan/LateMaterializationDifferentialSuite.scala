package lmspark.scan

import java.nio.file.{Path, Paths}

import scala.collection.mutable
import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.{Failure, Success, Try}

import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.SparkPlan
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.LocalInputFile
import lmspark.plan.LmMetrics
import lmspark.testutil.{PageStarts, DiffFileSpec, DiffTimes, DiffFiles, FilterColumn, LmCase, LmCases, LmFlags, LmSparkSession, Projection,
  RowMultiset}

/**
 * The late-materialization pipeline, differentially: seeded random files (2-9 columns of every flat type,
 * nulls from none to all, dictionary-encoded / plain / falling back mid-chunk, clustered or random, several
 * row groups of small pages, page v1 and v2, written by Spark or by parquet-java's column writers with
 * DELTA and BYTE_STREAM_SPLIT encodings too), random predicates over 1-3 columns and random projections
 * ([[LmCases]]). Every case's rows under lmspark, in several combinations of the pipeline's flags
 * ([[LmFlags]]: three with late materialization on and one with it off per case; across the suite every one
 * of the 432 combinations), equal vanilla Spark's with lmspark and filter pushdown off, as multisets,
 * exactly (NaN = NaN, -0.0 != 0.0).
 *
 * Speed: vanilla Spark reads each file once (lmspark and pushdown off) into a local relation, which it
 * filters on the driver for the expected rows; the cases of a group run as one UNION ALL query (one lmspark
 * scan per case, each with its own filter and projection; columns a case does not select are NULL, and a
 * `__case` column tells the cases apart). A union that fails is rerun case by case, and a case whose rows
 * differ from the local relation's is checked against vanilla Spark reading the file itself.
 *
 * Also checked in every run: lmspark's scan ran (no Spark Parquet scan; every lmspark scan read its file
 * itself), pages and row groups read are within the totals, nothing was filtered first with late
 * materialization off, and nothing came from the predicate cache when it is off.
 *
 * `LMSPARK_TEST_SEED` (default 20261122) changes every file and case; each failure prints the seed, the
 * case number, the file's generation parameters, the SQL and the flags; `LMSPARK_TEST_CASE=<n>` runs that
 * case alone, printing its plans.
 */
class LateMaterializationDifferentialSuite extends AnyFunSuite with LmSparkSession {

  /** Interpreted expressions and no whole-stage code generation, except in every fourth group of cases
    * ([[codegenConf]]): compiling the generated code of every query would take most of the time. */
  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.datetime.java8API.enabled" -> "true",
    "spark.sql.shuffle.partitions" -> "1",
    "spark.sql.codegen.wholeStage" -> "false",
    "spark.sql.codegen.factoryMode" -> "NO_CODEGEN")

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261122L)
  private val onlyCase: Option[Int] = sys.env.get("LMSPARK_TEST_CASE").map(_.trim).filter(_.nonEmpty).map(_.toInt)

  private val Files = 24
  private val CasesPerFile = 88
  private val GroupSize = 11
  require(CasesPerFile % GroupSize == 0)
  private val Groups = Files * CasesPerFile / GroupSize

  private def caseSeed(n: Int): Long = seed * 6364136223846793005L + n * 1442695040888963407L
  private def fileOf(n: Int): Int = n / CasesPerFile
  private def groupOf(n: Int): Int = n / GroupSize

  /** Whether case `n`'s lmspark runs use Spark's code generation (whole-stage and expressions). */
  private def codegen(n: Int): Boolean = groupOf(n) % 4 == 0
  private def codegenConf(n: Int): Seq[(String, String)] =
    if (codegen(n)) Seq("spark.sql.codegen.wholeStage" -> "true", "spark.sql.codegen.factoryMode" -> "FALLBACK") else Nil

  /** A written file: its spec, path, column values (from vanilla Spark's read) and the two views the
    * cases query: `lmView` reads the file, `refView` is the local relation of vanilla Spark's rows. */
  private final case class Table(spec: DiffFileSpec, path: Path, columns: IndexedSeq[FilterColumn], lmView: String,
      refView: String, referenceConf: Seq[(String, String)]) {
    def source: String = s"parquet.`$path`"
  }

  private def load(index: Int): Table = {
    val spec = DiffFiles.spec(seed, index)
    try loadSpec(index, spec)
    catch {
      case e: org.scalatest.exceptions.TestCanceledException => throw e // the line cannot write this file
      case e: Exception => throw new RuntimeException(s"[seed $seed] could not write or read ${spec.describe}", e)
    }
  }

  private def loadSpec(index: Int, spec: DiffFileSpec): Table = {
    val t0 = System.nanoTime()
    val path = DiffFiles.write(spark, spec, Paths.get(newDir(s"lmdiff-$index")))
    val df = spark.read.parquet(path.toString)
    val (rows, referenceConf) = referenceRead(spec, spark.read.parquet(path.toString))
    val starts = PageStarts.of(path)
    val columns = df.schema.fields.toIndexedSeq.zipWithIndex.map { case (f, i) =>
      FilterColumn(f.name, f.dataType, rows.toIndexedSeq.map(_.get(i)), starts)
    }
    val (lmView, refView) = (s"lmdiff_lm_$index", s"lmdiff_ref_$index")
    df.createOrReplaceTempView(lmView)
    spark.createDataFrame(rows.toSeq.asJava, df.schema).createOrReplaceTempView(refView)
    times.loadNanos += System.nanoTime() - t0
    Table(spec, path, columns, lmView, refView, referenceConf)
  }

  private val RowReader = Seq("spark.sql.parquet.enableVectorizedReader" -> "false")

  /**
   * Vanilla Spark's rows of the file, read by both of its readers (the vectorized one and the
   * parquet-java based row reader), and the reader configuration the reference keeps using. The two
   * must agree; where the vectorized reader fails or disagrees (it rejects BYTE_STREAM_SPLIT pages, and
   * Spark 4.1.3 misreads some DELTA_BYTE_ARRAY decimal pages), the row reader is the reference, and
   * the disagreement is logged (a vanilla Spark problem, not lmspark's).
   */
  private def referenceRead(spec: DiffFileSpec, df: => DataFrame): (Array[Row], Seq[(String, String)]) = {
    val byRows = withConf(RowReader: _*)(referenceRows(df))
    def canonical(rows: Array[Row]) = rows.toSeq.map(r => (0 until r.length).map(i => RowMultiset.canonical(r.get(i))))
    Try(referenceRows(df)) match {
      case Success(vectorized) if canonical(vectorized) == canonical(byRows) => (vectorized, Nil)
      case other =>
        val why = other.fold(e => s"fails: ${rootCause(e)}", _ => "returns other rows")
        info(s"vanilla Spark's vectorized reader $why; the reference uses its row reader (${spec.describe})")
        vanillaReaderProblems += 1
        (byRows, RowReader)
    }
  }

  /** The file's cases, in order; a case that repeats an earlier one of the file is drawn again (with the
    * next seed), so that every case is distinct. */
  private def cases(t: Table, index: Int): IndexedSeq[LmCase] = {
    val seen = mutable.Set.empty[(String, String)]
    (index * CasesPerFile until (index + 1) * CasesPerFile).map { n =>
      val drawn = (0 until 100).iterator.map(k => LmCases.generate(n, t.columns, caseSeed(n) + k * 0x9e3779b97f4a7c15L))
      drawn.find(c => seen.add((c.where, c.projection.sql))).getOrElse(LmCases.generate(n, t.columns, caseSeed(n)))
    }
  }

  // ---- queries ----

  /** The cases as one UNION ALL over `view`: `__case`, `__cnt` (count(*) cases), then every column of
    * the file, NULL where the case does not select it. */
  private def unionSql(t: Table, view: String, cs: Seq[LmCase]): String = cs.map { c =>
    val selected = c.projection match {
      case Projection.Columns(columns) => columns.map(_.name).toSet
      case Projection.CountStar => Set.empty[String]
    }
    val columns = t.columns.map(f => if (selected(f.name)) f.sql else s"CAST(NULL AS ${f.dataType.sql}) AS ${f.sql}")
    val count = if (c.projection == Projection.CountStar) "count(*)" else "CAST(NULL AS BIGINT)"
    s"SELECT ${c.number} AS __case, $count AS __cnt, ${columns.mkString(", ")} FROM $view WHERE ${c.where}"
  }.mkString("\nUNION ALL\n")

  /** Rows per case number (a union's rows without `__case`). */
  private def byCase(rows: Array[Row], cs: Seq[LmCase]): Map[Int, RowMultiset] = {
    val grouped = rows.groupBy(_.getInt(0)).map { case (n, rs) =>
      n -> RowMultiset.of(rs.toSeq.map(r => (1 until r.length).map(i => RowMultiset.canonical(r.get(i)))))
    }
    cs.map(c => c.number -> grouped.getOrElse(c.number, RowMultiset.empty)).toMap
  }

  private def rootCause(e: Throwable): Throwable =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).toSeq.last

  /** The same error: the same class with the same message. */
  private def sameError(a: Throwable, b: Throwable): Boolean =
    a.getClass == b.getClass && a.getMessage == b.getMessage

  // ---- bookkeeping ----

  private val failures = ArrayBuffer.empty[String]
  private val distinctCases = mutable.Set.empty[(Int, String, String)]
  private val combosPerCase = mutable.Map.empty[Int, Int].withDefaultValue(0)
  private val combosRun = mutable.Set.empty[LmFlags]
  private val pipelineTotals = mutable.LinkedHashMap.empty[String, Long]
  private var filesDone = 0
  private var lmQueries = 0
  private var referenceDisagreements = 0
  /** Cases where lmspark failed with the very error vanilla Spark reading the file raises. */
  private var errorsSharedWithVanilla = 0
  private var vanillaReaderProblems = 0
  private val times = new DiffTimes
  /** CPU time of the thread running the file tests (planning, driver-side work). */
  private var driverCpuNanos = 0L

  private def rerunHint(n: Int): String =
    s"LMSPARK_TEST_SEED=$seed LMSPARK_TEST_CASE=$n ./sbtw 'testOnly ${getClass.getName}'"

  private def record(t: Table, c: LmCase, flags: Option[LmFlags], problem: String): Unit =
    failures += s"[seed $seed, case ${c.number}] $problem\n" +
      s"    file: ${t.spec.describe}\n" +
      s"    flags: ${flags.fold("(reference run)")(_.toString)}; Spark code generation " +
      s"${if (codegen(c.number)) "on" else "off (spark.sql.codegen.wholeStage=false, spark.sql.codegen.factoryMode=NO_CODEGEN)"}\n" +
      s"    SQL: ${c.sql(t.source)}\n" +
      s"    rerun: ${rerunHint(c.number)}"

  private def metric(p: SparkPlan, name: String): Long = lmScans(p).map(_.metrics.get(name).fold(0L)(_.value)).sum

  /** What is wrong with how lmspark ran, from the plan and its metrics. */
  private def planProblems(p: SparkPlan, flags: LmFlags): Seq[String] = {
    val out = ArrayBuffer.empty[String]
    def text = lmScans(p).map(_.metrics.toSeq.sortBy(_._1).map { case (k, v) => s"$k=${v.value}" }.mkString(", "))
      .mkString("; ")
    if (sparkParquetScans(p).nonEmpty) out += s"Spark's Parquet scan ran instead of lmspark's:\n$p"
    lmScans(p).foreach { s =>
      if (s.metrics(LmMetrics.FilesRead).value == 0 && s.metrics(LmMetrics.SplitsPruned).value == 0)
        out += s"an lmspark scan read no file itself and dropped no split at planning ($text)"
      if (s.metrics(LmMetrics.FilesFallback).value != 0) out += s"a file was handed to Spark's reader ($text)"
    }
    def m(name: String) = metric(p, name)
    if (m(LmMetrics.PagesRead) > m(LmMetrics.PagesTotal)) out += s"more pages read than there are ($text)"
    if (m(LmMetrics.RowGroupsRead) > m(LmMetrics.RowGroupsTotal)) out += s"more row groups read than there are ($text)"
    if (m(LmMetrics.RowGroupsLate) + m(LmMetrics.RowGroupsWhole) > m(LmMetrics.RowGroupsTotal))
      out += s"more row groups read filter-first or whole than there are ($text)"
    if (!flags.lateMaterialization && (m(LmMetrics.RowGroupsLate) != 0 || m(LmMetrics.RowsScanned) != 0))
      out += s"row groups read filter-first with late materialization off ($text)"
    if (flags.cacheMaxBytes.contains(0L) && m(LmMetrics.CacheHits) != 0)
      out += s"predicate cache hits with the cache off ($text)"
    out.toSeq
  }

  private val pipelineMetrics = Seq(LmMetrics.RowGroupsTotal, LmMetrics.RowGroupsRead, LmMetrics.RowGroupsLate,
    LmMetrics.RowGroupsWhole, LmMetrics.RowsScanned, LmMetrics.RowsMaterialized, LmMetrics.CacheHits,
    LmMetrics.CacheEvictions, LmMetrics.PagesTotal, LmMetrics.PagesRead)

  private def tally(p: SparkPlan, flags: LmFlags): Unit = {
    val tag = if (flags.lateMaterialization) "LM on" else "LM off"
    pipelineMetrics.foreach { k =>
      val key = s"$tag $k"
      pipelineTotals(key) = pipelineTotals.getOrElse(key, 0L) + metric(p, k)
    }
  }

  // ---- running cases ----

  /** The reference query of `cs`: each case's filter over the local relation, every column. */
  private def referenceSql(t: Table, cs: Seq[LmCase]): String = cs.map { c =>
    s"SELECT ${c.number} AS __case, ${t.columns.map(_.sql).mkString(", ")} FROM ${t.refView} WHERE ${c.where}"
  }.mkString("\nUNION ALL\n")

  /** `rows` (every column, as [[referenceSql]] selects them) of case `c` in the shape of [[unionSql]]'s
    * rows: the count, then the selected columns' values, NULL for the others. */
  private def project(t: Table, c: LmCase, rows: Seq[Row]): RowMultiset = c.projection match {
    case Projection.CountStar =>
      RowMultiset.of(Seq(java.lang.Long.valueOf(rows.size.toLong) +: t.columns.map(_ => null)))
    case Projection.Columns(columns) =>
      val selected = t.columns.map(f => columns.exists(_.name == f.name))
      RowMultiset.of(rows.map(r => null +: t.columns.indices.map(i => if (selected(i)) RowMultiset.canonical(r.get(i + 1)) else null)))
  }

  /** Expected rows of `cs`: vanilla Spark filters the local relation (all cases in one union, folded by
    * the optimizer, no job); a union that fails is split up, and a case whose reference fails alone is a
    * generator bug, reported as a failure. */
  private def expectedRows(t: Table, cs: Seq[LmCase]): Map[Int, RowMultiset] =
    Try(times.timed(reference = true)(spark.sql(referenceSql(t, cs)).collect())) match {
      case Success(rows) =>
        val grouped = rows.toSeq.groupBy(_.getInt(0))
        cs.map(c => c.number -> project(t, c, grouped.getOrElse(c.number, Nil))).toMap
      case Failure(_) if cs.size > 1 => cs.flatMap(c => expectedRows(t, Seq(c))).toMap
      case Failure(e) =>
        record(t, cs.head, None, s"the reference query failed (a generator bug): ${rootCause(e)}")
        Map.empty
    }

  /** Vanilla Spark reading the file itself (lmspark and pushdown off), in the union's shape. */
  private def vanillaRows(t: Table, c: LmCase): Try[RowMultiset] =
    Try(times.timed(reference = true)(withConf(t.referenceConf: _*)(referenceRows(spark.sql(unionSql(t, t.lmView, Seq(c)))))))
      .map(byCase(_, Seq(c))(c.number))

  /** Runs `cs` (cases with expected rows) under `flags` as one union; `verbose`: print the plan. */
  private def runUnder(t: Table, cs: Seq[LmCase], expected: Map[Int, RowMultiset], flags: LmFlags,
      verbose: Boolean = false): Unit = {
    lmQueries += 1
    val result = withConf((("spark.lmspark.enabled" -> "true") +: flags.conf) ++ codegenConf(cs.head.number): _*) {
      val df = spark.sql(unionSql(t, t.lmView, cs))
      Try(times.timed(reference = false)(df.collect())).map(rows => (rows, df.queryExecution.executedPlan))
    }
    result match {
      case Failure(e) if cs.size > 1 =>
        val (before, sharedBefore) = (failures.size, errorsSharedWithVanilla)
        cs.foreach(c => runUnder(t, Seq(c), expected, flags, verbose))
        if (failures.size == before && errorsSharedWithVanilla == sharedBefore)
          record(t, cs.head, Some(flags), s"lmspark failed on the union of cases ${cs.map(_.number).mkString(", ")} " +
            s"but on none of them alone: ${rootCause(e)}")
      case Failure(e) =>
        // Vanilla Spark reading the file (pushdown off) is the answer lmspark owes: failing as it fails,
        // with the same error, is that answer, whatever the local relation's reference gave.
        vanillaRows(t, cs.head) match {
          case Failure(v) if sameError(rootCause(v), rootCause(e)) => errorsSharedWithVanilla += 1
          case other =>
            val vanilla = other.fold(v => s"vanilla Spark reading the file fails otherwise: ${rootCause(v)}",
              rows => s"vanilla Spark answers ${rows.size} rows")
            record(t, cs.head, Some(flags), s"lmspark failed: ${rootCause(e)} ($vanilla)")
        }
      case Success((rows, plan)) =>
        if (verbose) info(s"plan under $flags:\n$plan")
        tally(plan, flags)
        val actual = byCase(rows, cs)
        cs.foreach { c =>
          combosPerCase(c.number) += 1
          combosRun += flags
          if (actual(c.number) != expected(c.number)) {
            vanillaRows(t, c) match {
              case Success(v) if v == actual(c.number) => referenceDisagreements += 1
              case Success(v) =>
                record(t, c, Some(flags), s"lmspark's rows differ from vanilla Spark's: ${actual(c.number).size} vs ${v.size} " +
                  s"rows; only in lmspark: ${actual(c.number).moreThan(v)}; only in Spark: ${v.moreThan(actual(c.number))}")
              case Failure(e) => record(t, c, Some(flags), s"vanilla Spark failed reading the file: ${rootCause(e)}")
            }
          }
        }
        planProblems(plan, flags).foreach(p => record(t, cs.head, Some(flags),
          s"$p${if (cs.size > 1) s" (in the union of cases ${cs.map(_.number).mkString(", ")})" else ""}"))
    }
  }

  /** Runs a group of cases whose expected rows are known under the group's flag combinations. */
  private def runGroup(t: Table, cs: Seq[LmCase], expected: Map[Int, RowMultiset]): Unit = {
    val ok = cs.filter(c => expected.contains(c.number))
    if (ok.nonEmpty) LmFlags.forGroup(seed, groupOf(ok.head.number), Groups).foreach(f => runUnder(t, ok, expected, f))
    ok.foreach(c => distinctCases += ((fileOf(c.number), c.where, c.projection.sql)))
  }

  private def assertNoFailures(): Unit = {
    val all = failures.toList
    failures.clear()
    if (all.nonEmpty) {
      val kinds = all.map(_.split("] ", 2).last.takeWhile(c => c != '(' && c != ':' && c != '\n').trim)
        .groupBy(identity).toSeq.sortBy(-_._2.size).map { case (k, v) => s"${v.size} x $k" }
      fail(s"${all.size} failures (seed $seed): ${kinds.mkString("; ")}\n" + all.take(8).mkString("\n"))
    }
  }

  override protected def afterAll(): Unit = {
    try {
      val cpu = java.lang.management.ManagementFactory.getOperatingSystemMXBean match {
        case os: com.sun.management.OperatingSystemMXBean => f"${os.getProcessCpuTime / 1e9}%.1f s"
        case _ => "?"
      }
      println(f"LateMaterializationDifferentialSuite: seed $seed, ${distinctCases.size} distinct cases in $filesDone files, " +
        f"process CPU time $cpu (test thread ${driverCpuNanos / 1e9}%.1f s), " +
        s"$lmQueries lmspark queries; ${times.summary}; local-relation reference " +
        s"disagreements with vanilla reading the file: $referenceDisagreements; errors raised by vanilla reading " +
        s"the file too: $errorsSharedWithVanilla; files the vectorized vanilla reader " +
        s"could not read right: $vanillaReaderProblems")
      if (pipelineTotals.nonEmpty)
        println(s"LateMaterializationDifferentialSuite pipeline metrics (summed): " +
          pipelineTotals.map { case (k, v) => s"$k=$v" }.mkString(", "))
    } finally super.afterAll()
  }

  // ---- tests ----

  onlyCase match {
    case Some(n) =>
      test(s"case $n alone (LMSPARK_TEST_CASE)") {
        val t = load(fileOf(n))
        val c = cases(t, fileOf(n))(n % CasesPerFile)
        info(s"seed $seed, case $n\nfile: ${t.spec.describe}\nSQL: ${c.sql(t.source)}")
        val expected = expectedRows(t, Seq(c))
        expected.get(n).foreach { rows =>
          info(s"expected ${rows.size} rows")
          LmFlags.forGroup(seed, groupOf(n), Groups).foreach(f => runUnder(t, Seq(c), expected, f, verbose = true))
        }
        assertNoFailures()
      }

    case None =>
      test("every flag combination is assigned, each case under at least three, late materialization on and off") {
        val assigned = (0 until Groups).map(LmFlags.forGroup(seed, _, Groups))
        val missing = LmFlags.all.toSet -- assigned.flatten
        assert(missing.isEmpty, s"${missing.size} combinations never run, e.g. ${missing.headOption}")
        assigned.foreach { fs =>
          assert(fs.distinct.size == 3)
          assert(fs.exists(_.lateMaterialization) && fs.exists(!_.lateMaterialization))
        }
      }

      for (i <- 0 until Files) {
        test(s"file $i") {
          if (i == 0) info(s"seed $seed")
          val cpu0 = java.lang.management.ManagementFactory.getThreadMXBean.getCurrentThreadCpuTime
          val t = load(i)
          info(t.spec.describe)
          val cs = cases(t, i)
          val expected = expectedRows(t, cs)
          cs.grouped(GroupSize).foreach(runGroup(t, _, expected))
          filesDone += 1
          driverCpuNanos += java.lang.management.ManagementFactory.getThreadMXBean.getCurrentThreadCpuTime - cpu0
          assertNoFailures()
        }
      }

      test("at least 2,000 distinct cases ran, each under at least three flag combinations, all combinations ran") {
        assume(filesDone == Files, "runs only after every file's test ran")
        assert(distinctCases.size >= 2000, s"only ${distinctCases.size} distinct (file, predicate, projection) cases")
        val few = combosPerCase.filter(_._2 < 3)
        assert(few.isEmpty, s"cases run under fewer than three combinations: ${few.take(5)}")
        val notRun = LmFlags.all.toSet -- combosRun
        assert(notRun.isEmpty, s"${notRun.size} flag combinations never ran, e.g. ${notRun.headOption}")
      }
  }
}
