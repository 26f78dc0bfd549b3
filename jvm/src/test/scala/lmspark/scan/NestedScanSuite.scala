package lmspark.scan

import scala.util.Random

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.plan.LmMetrics
import lmspark.testutil.{LmFlags, LmSparkSession, NestedData, RandomPredicates}

/** Nested columns, differentially: seeded random files of random nested schemas (structs, lists and
  * maps 1 to 4 levels deep, every level nullable or not, nulls at every level, empty lists, lists of
  * nulls, maps with null values, lists long enough to span pages), written by Spark in the standard
  * and the legacy layout (`writeLegacyFormat`), pages v1 and v2, dictionary on and off, small pages
  * and row groups; random projections (whole columns, pruned struct fields, fields of list
  * elements, map values) and filters (flat columns, struct fields, list sizes, combinations), each
  * under a combination of the pipeline's flags ([[LmFlags]], taken in turn from a seeded shuffle).
  * Every case's rows equal vanilla Spark's with lmspark and filter pushdown off, as multisets; every
  * lmspark scan read its files itself (none handed to Spark's reader).
  * 24 files of 32 cases run every one of the 432 flag combinations at least once (40 files ran each
  * about three times and took 5 to 10 minutes of `make test`, too long for CI's time limit).
  *
  * `LMSPARK_TEST_SEED` (default 20261125) changes every file and case; a failure prints the seed,
  * the file's parameters, the SQL and the flags; `LMSPARK_TEST_CASE=<file>:<case>` runs one case. */
class NestedScanSuite extends AnyFunSuite with LmSparkSession {

  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.datetime.java8API.enabled" -> "true",
    "spark.sql.shuffle.partitions" -> "1",
    "spark.sql.codegen.wholeStage" -> "false",
    "spark.sql.codegen.factoryMode" -> "NO_CODEGEN")

  private val seed: Long = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261125L)
  private val only: Option[(Int, Int)] = sys.env.get("LMSPARK_TEST_CASE").map(_.trim).filter(_.contains(":"))
    .map { s => val Array(f, c) = s.split(":"); (f.toInt, c.toInt) }

  private val Files = 24
  private val CasesPerFile = 32
  require(Files * CasesPerFile >= LmFlags.all.size, "every flag combination runs")

  /** One written file: its generation parameters, Spark schema and rows (as written). */
  private final case class Written(number: Int, dir: String, params: String, schema: StructType, rows: IndexedSeq[Row])

  private def write(number: Int): Written = {
    val r = new Random(seed * 1000003L + number)
    val nested = (0 until 1 + r.nextInt(3)).map(i => StructField(s"n$i", NestedData.nestedType(1 + r.nextInt(4), r), r.nextInt(5) != 0))
    val schema = StructType(StructField("id", LongType, nullable = false) +: StructField("k", IntegerType) +: nested)
    val count = 100 + r.nextInt(900)
    val rows = (0 until count).map { i =>
      Row.fromSeq(i.toLong +: (if (r.nextInt(8) == 0) null else r.nextInt(50)) +:
        nested.map(f => NestedData.value(f.dataType, f.nullable, r)))
    }
    val legacy = r.nextInt(3) == 0
    val v2 = r.nextBoolean()
    val dictionary = r.nextInt(3) != 0
    val pageSize = Seq(256, 1024, 8192)(r.nextInt(3))
    val blockSize = Seq(4096, 65536, 1 << 20)(r.nextInt(3))
    val params = s"legacy layout $legacy, pages ${if (v2) "v2" else "v1"}, dictionary $dictionary, page size $pageSize, " +
      s"row group size $blockSize, $count rows, schema ${schema.catalogString}"
    val dir = newDir(s"nested-$number")
    withConf("spark.sql.parquet.writeLegacyFormat" -> legacy.toString) {
      spark.createDataFrame(spark.sparkContext.parallelize(rows, 1), schema).write
        .option("parquet.enable.dictionary", dictionary.toString)
        .option("parquet.writer.version", if (v2) "PARQUET_2_0" else "PARQUET_1_0")
        .option("parquet.page.size", pageSize.toString)
        .option("parquet.page.row.count.limit", (pageSize / 16).toString)
        .option("parquet.block.size", blockSize.toString)
        .parquet(dir)
    }
    Written(number, dir, params, schema, rows)
  }

  /** A random query over the file's columns: its projection and its WHERE clause (or none). */
  private def query(w: Written, r: Random): (String, String) = {
    val nested = w.schema.fields.drop(2)
    val paths = nested.toSeq.flatMap(f => NestedData.structPaths(f.name, f.dataType))
    def column(): String = {
      val f = nested(r.nextInt(nested.length))
      f.dataType match {
        case _: StructType if paths.exists(_._1.startsWith(f.name + ".")) && r.nextBoolean() =>
          val ps = paths.filter(_._1.startsWith(f.name + "."))
          ps(r.nextInt(ps.size))._1
        case ArrayType(s: StructType, _) if r.nextBoolean() => s"${f.name}.${s.fields(r.nextInt(s.length)).name}"
        case _: MapType if r.nextInt(3) == 0 => s"map_values(${f.name})"
        case _ => f.name
      }
    }
    val projection = r.nextInt(6) match {
      case 0 => "*"
      case 1 => "id, " + nested.map(_.name).mkString(", ")
      case 2 => "count(*)"
      case _ => ("id" +: Seq.fill(1 + r.nextInt(3))(column())).distinct.mkString(", ")
    }
    val leafPaths = paths.filter { case (_, t) => !t.isInstanceOf[StructType] && !t.isInstanceOf[ArrayType] &&
      !t.isInstanceOf[MapType] && t != BinaryType }
    def structFilter(): String = {
      val (p, t) = leafPaths(r.nextInt(leafPaths.size))
      val fields = p.split('.').toSeq
      val top = w.schema(fields.head)
      val values = w.rows.map(row => NestedData.at(row.get(w.schema.fieldIndex(fields.head)), fields.tail, top.dataType))
        .filter(_ != null)
      if (values.isEmpty || r.nextInt(4) == 0) s"$p IS ${if (r.nextBoolean()) "" else "NOT "}NULL"
      else {
        val lit = RandomPredicates.literal(t, values(r.nextInt(values.size)))
        s"$p ${Seq("=", "<=", ">", "<=>")(r.nextInt(4))} $lit"
      }
    }
    def flatFilter(): String = r.nextInt(5) match {
      case 0 => s"id < ${r.nextInt(math.max(1, w.rows.size / 20)) + 1}"
      case 1 => s"id % 7 = ${r.nextInt(7)}"
      case 2 => s"k = ${r.nextInt(50)}"
      case 3 => "k IS NULL"
      case _ => s"id BETWEEN ${r.nextInt(w.rows.size)} AND ${r.nextInt(w.rows.size)}"
    }
    def elementFilter(): String = {
      val cs = nested.filter(f => f.dataType.isInstanceOf[ArrayType] || f.dataType.isInstanceOf[MapType])
      if (cs.isEmpty) flatFilter() else s"size(${cs(r.nextInt(cs.length)).name}) > ${r.nextInt(3)}"
    }
    def one(): String = r.nextInt(7) match {
      case 0 | 1 | 2 => flatFilter()
      case 3 | 4 if leafPaths.nonEmpty => structFilter()
      case 5 => elementFilter()
      case _ => if (leafPaths.nonEmpty) structFilter() else flatFilter()
    }
    val where = r.nextInt(6) match {
      case 0 => ""
      case 1 => s"${one()} AND ${one()}"
      case 2 => s"(${one()}) OR (${one()})"
      case _ => one()
    }
    (projection, where)
  }

  private def sql(w: Written, projection: String, where: String): String =
    s"SELECT $projection FROM parquet.`${w.dir}`" + (if (where.isEmpty) "" else s" WHERE $where")

  private def rootCause(e: Throwable): Throwable = if (e.getCause == null || (e.getCause eq e)) e else rootCause(e.getCause)

  private def rowsOf(df: DataFrame): Seq[String] = df.collect().toSeq.map(NestedData.canonical).sorted

  private val flags: IndexedSeq[LmFlags] = new Random(seed ^ 0x5eedL).shuffle(LmFlags.all)

  test(s"random nested files and queries: $Files files x $CasesPerFile cases, lmspark = vanilla, no file handed to Spark") {
    var failures = Vector.empty[String]
    var cases = 0
    val files = only.fold(0 until Files)(o => o._1 to o._1)
    files.foreach { n =>
      val w = write(n)
      val r = new Random(seed * 7919L + n)
      val caseNumbers = only.fold(0 until CasesPerFile)(o => o._2 to o._2)
      (0 until CasesPerFile).foreach { c =>
        val (projection, where) = query(w, r)
        val f = flags((n * CasesPerFile + c) % flags.size)
        if (caseNumbers.contains(c)) {
          cases += 1
          val text = sql(w, projection, where)
          val described = s"seed $seed, file $n (${w.params}), case $n:$c: $text; flags $f"
          try {
            val expected = withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
              rowsOf(spark.sql(text))
            }
            withConf(("spark.lmspark.enabled" -> "true") +: f.conf: _*) {
              val df = spark.sql(text)
              val actual = rowsOf(df)
              val plan = df.queryExecution.executedPlan
              val scans = lmScans(plan)
              // (A filter the optimizer proves empty leaves no scan at all.)
              if (scans.isEmpty && sparkParquetScans(plan).nonEmpty) failures :+= s"lmspark's scan was not used: $described\n$plan"
              scans.foreach { s =>
                if (s.metrics(LmMetrics.FilesFallback).value != 0)
                  failures :+= s"a file was handed to Spark's reader: $described\n${s.metrics(LmMetrics.FilesFallback)}"
              }
              if (actual != expected)
                failures :+= s"rows differ: $described\n  only lmspark: ${actual.diff(expected).take(3)}\n" +
                  s"  only vanilla: ${expected.diff(actual).take(3)}"
            }
          } catch {
            case e: Exception =>
              if (only.isDefined) e.printStackTrace(System.out)
              failures :+= s"failed: $described\n  $e" + (if (only.isDefined) rootCause(e).getStackTrace.take(14).mkString("\n    ", "\n    ", "") else "")
          }
          if (only.isDefined) {
            println(s"case $n:$c: $text\n${w.params}")
            org.apache.commons.io.FileUtils.copyDirectory(new java.io.File(w.dir), new java.io.File(s"/tmp/nested-debug-$n"))
          }
        }
      }
    }
    assert(failures.isEmpty, s"${failures.size} of $cases cases failed; first ones:\n${failures.take(5).mkString("\n")}")
    if (only.isEmpty) assert(cases == Files * CasesPerFile)
  }

  test("row and columnar output are identical on a 150-column table mixing flat and nested columns") {
    val r = new Random(seed ^ 150L)
    val fields = (0 until 149).map { i =>
      val t = if (i % 3 == 0) NestedData.nestedType(1 + r.nextInt(3), r) else NestedData.randomType(0, r)
      StructField(s"c$i", t, nullable = r.nextInt(6) != 0)
    }
    val schema = StructType(StructField("id", LongType, nullable = false) +: fields)
    val rows = (0 until 600).map(i => Row.fromSeq(i.toLong +: fields.map(f => NestedData.value(f.dataType, f.nullable, r))))
    val dir = newDir("wide-mixed")
    spark.createDataFrame(spark.sparkContext.parallelize(rows, 1), schema).write
      .option("parquet.page.row.count.limit", "50").option("parquet.block.size", "65536").parquet(dir)
    Seq(s"SELECT * FROM parquet.`$dir`", s"SELECT * FROM parquet.`$dir` WHERE id % 9 = 2 OR id > 590").foreach { q =>
      val expected = withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
        rowsOf(spark.sql(q))
      }
      val byMode = Seq("row", "columnar").map { mode =>
        withConf("spark.lmspark.output" -> mode) {
          val df = spark.sql(q)
          val out = rowsOf(df)
          val scans = lmScans(df.queryExecution.executedPlan)
          assert(scans.nonEmpty && scans.forall(_.metrics(LmMetrics.FilesFallback).value == 0), s"$mode: not read by lmspark")
          assert(scans.forall(_.supportsColumnar == (mode == "columnar")), s"$mode: the scan's output mode")
          out
        }
      }
      assert(byMode.head == byMode(1), s"$q: row and columnar output differ")
      assert(byMode.head == expected, s"$q: lmspark differs from vanilla")
    }
  }

  test("filters on struct fields prune row groups by dictionary and by bloom filter, and are evaluated first") {
    // Rows 500g .. 500g + 499 hold st.code values g*1000 .. g*1000 + 9 (small dictionaries), and st.key
    // is unique and scattered (a bloom filter tells row groups apart where min/max cannot).
    val dir = newDir("struct-pruning")
    spark.range(0, 4000, 1, 1).selectExpr("id",
      "named_struct('code', CAST((id DIV 500) * 1000 + (id % 10) AS INT), " +
        "'key', CONCAT('k', CAST((id * 7919) % 4000 AS STRING)), 'inner', named_struct('x', id % 3)) AS st",
      "transform(sequence(0, CAST(id % 3 AS INT)), i -> id + i) AS xs")
      .write.option("parquet.block.size", "4096").option("parquet.page.row.count.limit", "100")
      .option("parquet.bloom.filter.enabled#st.key", "true").option("parquet.bloom.filter.expected.ndv#st.key", "1000")
      .parquet(dir)
    def metric(q: String, name: String): Long = {
      val df = spark.sql(q)
      df.collect()
      lmScans(df.queryExecution.executedPlan).map(_.metrics(name).value).sum
    }
    def check(q: String): Unit = checkSparkAnswerAndLmUsed(spark.sql(q))
    val rowGroups = metric(s"SELECT count(*) FROM parquet.`$dir`", LmMetrics.RowGroupsTotal)
    assert(rowGroups >= 8, s"$rowGroups row groups")
    withConf("spark.lmspark.pageIndex.enabled" -> "false", "spark.lmspark.pruning.statistics.enabled" -> "false",
        "spark.lmspark.pruning.guarantees.enabled" -> "false") {
      // With statistics off, the dictionaries prune: 2005 is in the rows 1000-1499 only.
      val q = s"SELECT id, st, xs FROM parquet.`$dir` WHERE st.code = 2005"
      check(q)
      assert(metric(q, LmMetrics.PrunedByDictionary) >= rowGroups / 2, "dictionary pruning on st.code")
      val b = s"SELECT id, st FROM parquet.`$dir` WHERE st.key = 'k1234'"
      check(b)
      assert(metric(b, LmMetrics.PrunedByBloomFilter) >= rowGroups - 2, "bloom filter pruning on st.key")
    }
    val late = s"SELECT id, xs FROM parquet.`$dir` WHERE st.inner.x = 1 AND st.code % 7 = 3"
    check(late)
    assert(metric(late, LmMetrics.RowGroupsLate) > 0, "the struct field filter ran first")
    check(s"SELECT st.inner FROM parquet.`$dir` WHERE st.inner.x IS NULL OR st.code > 7000")
  }
}
