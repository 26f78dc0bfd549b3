package lmspark.fuzz

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths, StandardCopyOption}

import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.TestFiles

/**
 * The byte-level fuzz test: valid seed files ([[FuzzSeeds]]) are mutated ([[Mutator]])
 * and every mutant is read in a child process with a time and memory limit ([[FuzzRunner]],
 * [[FuzzChild]]) by lmspark and by two references, vanilla Spark's vectorized reader and
 * parquet-java's record reader.
 *
 * Allowed outcomes for lmspark: rows identical to some reference's (`same-as-reference`), an error
 * whose message names the file (`error-naming-file`), handing the file to Spark's reader
 * (`handed-to-spark`, what the scan does when the footer describes something lmspark does not
 * read), or a footer Spark cannot infer a schema from (`schema-not-inferable`: no reader is
 * reached). Failures: `hang`, `crash`, `oom`, `different-rows` (rows matching no reference),
 * `rows-but-every-reference-failed`, `error-without-file`.
 *
 * lmspark reads each file a second time asking for some rows only (`lm-wanted`: [[FuzzChild.isWanted]]'s,
 * as a top-k's second pass asks, so row groups and pages holding none are skipped undecoded). That
 * read is judged the same way against the wanted rows of the whole reads, lmspark's own included.
 * Where no whole read gave rows, its rows are allowed (the damage may lie in pages the wanted rows do
 * not need) and counted as the seed's wanted rows (`seeds-wanted-rows`) or not (`wanted-rows-unverified`).
 *
 * A second run mutates only the footer's row-group table ([[Mutator.mutateRowGroupTable]]): there
 * the seed's row count is the truth, and lmspark returning another count without an error fails
 * the test even when a reference returns that count too (`row-count-not-the-seeds`), as does a count
 * of wanted rows other than the seed's (`wanted-row-count-not-the-seeds`; their order follows the
 * row-group table, which may list the row groups in another order).
 *
 * `LMSPARK_FUZZ_MUTANTS` (default 300), `LMSPARK_FUZZ_FOOTER_MUTANTS` (default 150) and
 * `LMSPARK_FUZZ_SEED` set the runs' sizes and seed;
 * `LMSPARK_FUZZ_ONLY=3,17` runs only those mutant numbers. The counts per outcome and one line per
 * failing mutant go to `target/fuzz-outcomes.md` and `target/fuzz-footer-outcomes.md`, the failing
 * mutants to `target/fuzz-failures-<run>/`.
 */
class FuzzSuite extends AnyFunSuite with BeforeAndAfterAll {

  private val mutantCount = sys.env.get("LMSPARK_FUZZ_MUTANTS").map(_.trim.toInt).getOrElse(300)
  private val footerMutantCount = sys.env.get("LMSPARK_FUZZ_FOOTER_MUTANTS").map(_.trim.toInt).getOrElse(150)
  private val runSeed = sys.env.get("LMSPARK_FUZZ_SEED").map(_.trim.toLong).getOrElse(20261122L)
  private val only: Option[Set[Int]] =
    sys.env.get("LMSPARK_FUZZ_ONLY").filter(_.trim.nonEmpty).map(_.split(",").map(_.trim.toInt).toSet)
  private val workers = 2
  private val stallSeconds = 30

  private lazy val dir: Path = Files.createTempDirectory("lmspark-fuzz")
  private lazy val seeds: IndexedSeq[Path] = FuzzSeeds.write(dir.resolve("seeds"))
  private lazy val seedResults: Map[Path, Map[String, ReadResult]] = {
    val (r, errors) = FuzzRunner.run(seeds, workers, stallSeconds, dir.resolve("logs-seeds"))
    assert(errors.isEmpty, errors.mkString("\n"))
    r
  }

  override def afterAll(): Unit = try TestFiles.deleteRecursively(dir) finally super.afterAll()

  private def rows(r: Option[ReadResult]): Option[String] = r.filter(_.kind == "ROWS").map(_.detail)

  /** Seeds lmspark reads the way the references that can read them do: lmspark gives rows, at least
    * one reference gives the same rows, and no reference gives other rows. (Spark 4.1.3's vectorized
    * reader rejects BYTE_STREAM_SPLIT and some dictionary / decimal layouts; parquet-java's example
    * reader some logical types.) */
  private def agreeing(p: Path): Boolean = {
    val r = seedResults(p)
    val lm = rows(r.get("lm"))
    val references = Seq("spark", "pq").flatMap(n => rows(r.get(n)))
    lm.isDefined && references.nonEmpty && references.forall(lm.contains) &&
      rows(r.get("lm-wanted")).exists(w => r.get("lm").flatMap(FuzzSuite.wantedPart).contains(w))
  }

  /** The Variant seed (a column Spark 4.1 wrote shredded): where this line's Spark reads it as a Variant,
    * lmspark declines it (a Variant column goes to Spark's reader) and its mutants test that decision
    * on damaged footers; where Spark reads it as the group it is stored as, it must agree like any seed. */
  private def declined(p: Path): Boolean =
    p.getFileName.toString.startsWith("variant_") && seedResults(p).get("lm").exists(_.kind == "FALLBACK")

  test("every seed file reads the same with lmspark, vanilla Spark and parquet-java") {
    assert(seeds.size >= 13, seeds)
    val bad = seeds.filterNot(p => agreeing(p) || declined(p)).map(p => s"${p.getFileName}: ${seedResults(p)}")
    assert(bad.isEmpty, bad.mkString("seeds the readers disagree on:\n", "\n", ""))
    val pqRead = seeds.count(p => rows(seedResults(p).get("pq")).isDefined)
    val sparkRead = seeds.count(p => rows(seedResults(p).get("spark")).isDefined)
    info(s"${seeds.size} seeds; vanilla Spark reads $sparkRead of them, parquet-java $pqRead")
  }

  test("classification: rows must match some reference, errors must name the file") {
    val p = Paths.get("/tmp/x/m00001-seed.parquet")
    def c(lm: ReadResult, spark: ReadResult, pq: ReadResult) = FuzzSuite.classify(p, Map("lm" -> lm, "spark" -> spark, "pq" -> pq))
    val rowsA = ReadResult("ROWS", "aaaa 10")
    val rowsB = ReadResult("ROWS", "bbbb 10")
    val failed = ReadResult("ERROR", "java.io.IOException: bad")
    assert(c(rowsA, failed, rowsA) == "same-as-reference")
    assert(c(rowsA, rowsA, rowsB) == "same-as-reference")
    assert(c(rowsA, rowsB, rowsB) == "different-rows")
    assert(c(rowsA, rowsB, failed) == "different-rows")
    assert(c(rowsA, failed, ReadResult("OOM", "")) == "rows-but-every-reference-failed")
    assert(c(ReadResult("ERROR", s"x: bad page (file $p, column a, row group 0)"), rowsA, rowsA) == "error-naming-file")
    assert(c(ReadResult("ERROR", "x: in m00001-seed.parquet"), failed, failed) == "error-naming-file")
    assert(c(ReadResult("ERROR", "java.lang.ArrayIndexOutOfBoundsException: 5"), failed, failed) == "error-without-file")
    // With the seed's row count as the truth, the references' agreement does not save a wrong count.
    val seedRows = Some(10L)
    assert(FuzzSuite.classify(p, Map("lm" -> rowsA, "spark" -> rowsA, "pq" -> rowsA), seedRows) == "same-as-reference")
    assert(FuzzSuite.classify(p, Map("lm" -> ReadResult("ROWS", "cccc 0"), "spark" -> ReadResult("ROWS", "cccc 0")), seedRows) ==
      "row-count-not-the-seeds")
    // The wanted-rows read, against the wanted part of the whole reads (lmspark's own included).
    def w(wanted: ReadResult, lm: ReadResult, spark: ReadResult, seed: ReadResult = failed, truth: Boolean = false) =
      FuzzSuite.classifyWanted(p, Map("lm-wanted" -> wanted, "lm" -> lm, "spark" -> spark, "pq" -> failed), seed, truth)
    val wholeA = ReadResult("ROWS", "aaaa 10 wwww 2")
    val wantedW = ReadResult("ROWS", "wwww 2")
    assert(w(wantedW, failed, wholeA) == "same-as-reference")
    assert(w(wantedW, wholeA, failed) == "same-as-reference")
    assert(w(ReadResult("ROWS", "vvvv 2"), failed, wholeA) == "different-rows")
    assert(w(ReadResult("ROWS", "vvvv 2"), wholeA, failed) == "different-rows")
    assert(w(wantedW, failed, failed) == "wanted-rows-unverified")
    assert(w(wantedW, failed, failed, seed = wantedW) == "seeds-wanted-rows")
    assert(w(wantedW, wholeA, wholeA, seed = ReadResult("ROWS", "uuuu 2"), truth = true) == "same-as-reference")
    assert(w(wantedW, wholeA, wholeA, seed = ReadResult("ROWS", "wwww 3"), truth = true) == "wanted-row-count-not-the-seeds")
    assert(w(ReadResult("ERROR", "java.lang.ArrayIndexOutOfBoundsException: 5"), wholeA, wholeA) == "error-without-file")
    assert(FuzzSuite.outcomes.filterNot(FuzzSuite.allowed) ==
      Seq("hang", "crash", "oom", "different-rows", "rows-but-every-reference-failed", "error-without-file",
        "row-count-not-the-seeds", "wanted-row-count-not-the-seeds"))
  }

  test("the runner reports a crash, a hang and an OOM of a child as such, and carries on with the next read") {
    val readers = Seq("selftest-crash", "selftest-hang", "selftest-oom", "lm")
    val (r, errors) = FuzzRunner.run(seeds.take(1), 1, 5, dir.resolve("logs-selftest"), readers)
    assert(errors.isEmpty, errors.mkString("\n"))
    val got = readers.map(n => n -> r(seeds.head).get(n).map(_.kind))
    assert(got == Seq("selftest-crash" -> Some("CRASH"), "selftest-hang" -> Some("HANG"), "selftest-oom" -> Some("OOM"),
      "lm" -> rows(seedResults(seeds.head).get("lm")).map(_ => "ROWS")), got)
    assert(r(seeds.head)("lm") == seedResults(seeds.head)("lm"))
    val classified = Seq("selftest-crash", "selftest-hang", "selftest-oom")
      .map(n => FuzzSuite.classify(seeds.head, Map("lm" -> r(seeds.head)(n))))
    assert(classified == Seq("crash", "hang", "oom"))
  }

  test("mutants of the seeds: rows equal to a reference's or an error naming the file, never a hang, crash or OOM") {
    runMutants("mutants", mutantCount, "fuzz-outcomes.md", truth = false)(Mutator.mutate)
  }

  test("mutants of the row-group table: the seed's rows or an error naming the file, never rows lost in silence") {
    runMutants("footer-mutants", footerMutantCount, "fuzz-footer-outcomes.md", truth = true)(Mutator.mutateRowGroupTable)
  }

  /** Makes `count` mutants of the agreeing seeds with `mutate`, reads each with every reader in
    * child processes, classifies lmspark's outcome (with `truth`, a row count other than the seed's
    * is a failure even when a reference gives it too), writes the counts per outcome to
    * `target/<report>`, and fails on any failing outcome. */
  private def runMutants(name: String, count: Int, report: String, truth: Boolean)(mutate: (FileLayout, Long) => Mutant): Unit = {
    // (Mutants of a declined seed only where a row count is not asked for.)
    val usable = seeds.filter(agreeing) ++ (if (truth) Nil else seeds.filter(declined))
    assert(usable.nonEmpty)
    val layouts = usable.map(p => new FileLayout(Files.readAllBytes(p)))
    val seedRows = usable.map(p => if (declined(p)) -1L else rowCount(seedResults(p)("lm")))
    val seedWanted = usable.map(p => seedResults(p).getOrElse("lm-wanted", ReadResult("NOTRUN", "")))
    val mutantDir = Files.createDirectories(dir.resolve(name))
    final case class Made(index: Int, seed: Long, from: Int, path: Path, description: String)
    val made = (0 until count).filter(i => only.forall(_.contains(i))).map { i =>
      val k = i % usable.size
      val mseed = runSeed * 1000003L + i
      val m = mutate(layouts(k), mseed)
      val base = usable(k).getFileName.toString.stripSuffix(".parquet")
      val path = mutantDir.resolve(f"m$i%05d-$base.parquet")
      Files.write(path, m.bytes)
      Made(i, mseed, k, path, m.description)
    }
    val started = System.nanoTime()
    val (results, errors) = FuzzRunner.run(made.map(_.path), workers, stallSeconds, dir.resolve(s"logs-$name"))
    val seconds = (System.nanoTime() - started) / 1e9
    assert(errors.isEmpty, errors.mkString("\n"))

    // Each mutant's outcome for the whole read and for the wanted rows.
    val classified = made.map { m =>
      val r = results.getOrElse(m.path, Map.empty)
      (m, FuzzSuite.classify(m.path, r, if (truth) Some(seedRows(m.from)) else None),
        FuzzSuite.classifyWanted(m.path, r, seedWanted(m.from), truth), r)
    }
    val counts = classified.groupBy(_._2).map { case (o, xs) => o -> xs.size }
    val wantedCounts = classified.groupBy(_._3).map { case (o, xs) => o -> xs.size }
    val failing = classified.filterNot(c => FuzzSuite.allowed(c._2) && FuzzSuite.allowed(c._3))

    val failDir = Paths.get("target", s"fuzz-failures-$name")
    TestFiles.deleteRecursively(failDir)
    if (failing.nonEmpty) Files.createDirectories(failDir)
    failing.foreach { case (m, _, _, _) =>
      Files.copy(m.path, failDir.resolve(m.path.getFileName), StandardCopyOption.REPLACE_EXISTING)
    }
    val table = FuzzSuite.outcomes.filter(o => counts.contains(o) || wantedCounts.contains(o)).map { o =>
      s"| $o | ${counts.getOrElse(o, 0)} | ${wantedCounts.getOrElse(o, 0)} | ${if (FuzzSuite.allowed(o)) "allowed" else "FAILURE"} |"
    }
    val seedsText = usable.map(_.getFileName.toString).mkString(", ")
    def show(r: Map[String, ReadResult], reader: String, limit: Int): String =
      r.get(reader).fold("none") { x => val t = x.toString; if (t.length > limit) t.take(limit) + "..." else t }
    val lines = failing.map { case (m, o, ow, r) =>
      s"- mutant ${m.index} (mutation seed ${m.seed}, seed file ${usable(m.from).getFileName}): ${m.description} -> **$o**, " +
        s"wanted rows **$ow**; lm: ${show(r, "lm", 2000)}; lm-wanted: ${show(r, "lm-wanted", 2000)}; " +
        s"spark: ${show(r, "spark", 300)}; pq: ${show(r, "pq", 300)}"
    }
    val text = (Seq(
      s"# Fuzz outcomes: $name",
      "",
      s"$count mutants (run seed $runSeed${only.fold("")(o => s", only ${o.toSeq.sorted.mkString(",")}")}) of " +
        f"${usable.size} seed files, read in $seconds%.0f s by $workers children at a time" +
        (if (truth) "; a row count other than the seed's is a failure." else "."),
      "",
      "| outcome | mutants (whole file) | mutants (wanted rows) | |",
      "|---|---|---|---|") ++ table ++ Seq(
      "",
      s"Failing mutants (copied to $failDir/; rerun one with LMSPARK_FUZZ_SEED=$runSeed " +
        "LMSPARK_FUZZ_ONLY=<n>):",
      if (lines.isEmpty) "none" else lines.mkString("\n"),
      "",
      s"Seed files: $seedsText",
      "")).mkString("\n")
    Files.createDirectories(Paths.get("target"))
    Files.write(Paths.get("target", report), text.getBytes(StandardCharsets.UTF_8))
    info(table.mkString("\n"))
    info(f"${made.size} mutants read in $seconds%.0f s")
    assert(failing.isEmpty, s"${failing.size} mutants failed (see target/$report):\n${lines.mkString("\n")}")
  }

  private def rowCount(r: ReadResult): Long = FuzzSuite.rowCount(r)
}

object FuzzSuite {

  val outcomes: Seq[String] = Seq("same-as-reference", "error-naming-file", "handed-to-spark", "schema-not-inferable",
    "seeds-wanted-rows", "wanted-rows-unverified", "hang", "crash", "oom", "different-rows",
    "rows-but-every-reference-failed", "error-without-file", "row-count-not-the-seeds", "wanted-row-count-not-the-seeds")

  def allowed(outcome: String): Boolean = Set("same-as-reference", "error-naming-file", "handed-to-spark",
    "schema-not-inferable", "seeds-wanted-rows", "wanted-rows-unverified")(outcome)

  /** The row count of a read's `ROWS` detail. */
  def rowCount(r: ReadResult): Long = r.detail.trim.split(" ")(1).toLong

  /** The wanted rows' digest and count in a whole read's `ROWS` detail (as `lm-wanted` prints them). */
  def wantedPart(r: ReadResult): Option[String] =
    if (r.kind != "ROWS") None
    else r.detail.trim.split(" ") match {
      case Array(_, _, digest, count) => Some(s"$digest $count")
      case _ => None
    }

  /** An outcome other than rows, the same for either of lmspark's reads. */
  private def notRows(path: Path, lm: ReadResult): String = lm.kind match {
    case "HANG" => "hang"
    case "OOM" => "oom"
    case "CRASH" => "crash"
    case "ERROR" =>
      if (lm.detail.contains(path.toString) || lm.detail.contains(path.getFileName.toString)) "error-naming-file"
      else "error-without-file"
    case "FALLBACK" => "handed-to-spark"
    case "NOSCHEMA" => "schema-not-inferable"
    case other => s"unknown-$other"
  }

  /** lmspark's outcome reading the wanted rows of one mutant: the wanted part of some whole read
    * (a reference's or lmspark's own); where there is none, whether they are the wanted rows of the
    * seed (`seed`: its `lm-wanted` read). With `truth`, as many wanted rows as the seed's. */
  def classifyWanted(path: Path, r: Map[String, ReadResult], seed: ReadResult, truth: Boolean): String =
    r.get("lm-wanted") match {
      case None => "crash"
      case Some(w) if w.kind != "ROWS" => notRows(path, w)
      case Some(w) if truth && (seed.kind != "ROWS" || rowCount(seed) != rowCount(w)) => "wanted-row-count-not-the-seeds"
      case Some(w) =>
        val whole = Seq("lm", "spark", "pq").flatMap(r.get).filter(_.kind == "ROWS")
        if (whole.exists(x => wantedPart(x).contains(w.detail))) "same-as-reference"
        else if (whole.nonEmpty) "different-rows"
        else if (seed.kind == "ROWS" && seed.detail == w.detail) "seeds-wanted-rows"
        else "wanted-rows-unverified"
    }

  /** lmspark's outcome on one mutant, from the readers' results; with `seedRows`, rows whose count
    * is not the seed's are lost (or invented) in silence, whatever the references say. */
  def classify(path: Path, r: Map[String, ReadResult], seedRows: Option[Long] = None): String = r.get("lm") match {
    case None => "crash"
    case Some(lm) if lm.kind != "ROWS" => notRows(path, lm)
    case Some(lm) if seedRows.exists(_ != rowCount(lm)) => "row-count-not-the-seeds"
    case Some(lm) =>
      val references = Seq("spark", "pq").flatMap(r.get).filter(_.kind == "ROWS")
      if (references.exists(_.detail == lm.detail)) "same-as-reference"
      else if (references.isEmpty) "rows-but-every-reference-failed"
      else "different-rows"
  }
}
