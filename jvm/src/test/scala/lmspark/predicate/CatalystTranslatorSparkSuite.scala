package lmspark.predicate

import scala.util.Random

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.catalyst.expressions.{BindReferences, GenericInternalRow}
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.LmSparkSession

/** [[CatalystTranslator]] on the `dataFilters` Spark itself hands a Parquet scan, after analysis
  * and optimisation of SQL filters: which conjuncts are translated, and that each translated one
  * passes exactly the rows Catalyst's passes (on the file's rows). */
class CatalystTranslatorSparkSuite extends AnyFunSuite with LmSparkSession with PropertyCases {

  private val schema = StructType(Seq(
    StructField("i", IntegerType), StructField("l", LongType), StructField("sh", ShortType),
    StructField("by", ByteType), StructField("f", FloatType), StructField("d", DoubleType),
    StructField("s", StringType), StructField("b", BinaryType), StructField("dt", DateType),
    StructField("ts", TimestampType), StructField("ntz", TimestampNTZType), StructField("dec", DecimalType(10, 2)),
    StructField("bo", BooleanType), StructField("st", StructType(Seq(StructField("a", IntegerType))))))

  /** SQL filters, and whether every conjunct Spark pushes to the scan must be translated. */
  private val filters: Seq[(String, Boolean)] = Seq(
    "i > 2" -> true,
    "i = 3 or l < 0" -> true,
    "not (d < 0.5)" -> true,
    "d = double('NaN') or f = float('NaN')" -> true,
    "d <=> 0.0 or d < -1" -> true,
    "f > 1.5 and f <= float('Infinity')" -> true,
    "s like 'ab%'" -> true,
    "s like '%b'" -> true,
    "s like '%é%'" -> true,
    "s in ('a', 'ab', null)" -> true,
    "not (s in ('a', 'ab'))" -> true,
    "s is null or s >= 'b'" -> true,
    "cast(i as bigint) > 3" -> true,
    "cast(by as double) < 1.5" -> true,
    "dt >= date'2019-04-12'" -> true,
    "cast(dt as timestamp) >= timestamp'2019-04-12 10:00:00'" -> true,
    "cast(dt as timestamp) = timestamp'2019-04-12 00:00:00'" -> true,
    "ntz < timestamp_ntz'2019-04-12 00:00:00'" -> true,
    "ts between timestamp'2019-04-11 00:00:00' and timestamp'2019-04-13 00:00:00'" -> true,
    "dec > 1.5" -> true,
    "dec in (1.50, 0, -2.5)" -> true,
    "bo" -> true,
    "not bo" -> true,
    "b = X'0102' or b < X'01'" -> true,
    "l in (1, 2, 3)" -> true,
    "sh < 3 and by >= -2" -> true,
    "ts > timestamp'2019-04-10 00:00:00' and s is null" -> true,
    "cast(i as string) = '3'" -> false,
    "upper(s) = 'A'" -> false,
    "s like 'a%b'" -> false,
    "i % 2 = 1" -> false,
    "st.a = 1" -> true, // a struct field (through structs only) is a column of its own
    "collate(s, 'UTF8_LCASE') = 'a'" -> false,
    "coalesce(i, 0) = 0" -> false,
    "i = l" -> false,
    "cast(ts as date) = date'2019-04-12'" -> true, // the optimizer unwraps it into a range of ts
    "cast(ts as date) = cast(ntz as date)" -> false)

  private def randomRows(r: Random, n: Int): IndexedSeq[GenericInternalRow] = {
    val pools = schema.fields.map(f => if (f.name == "st") IndexedSeq.empty else PredicateGen.pool(f.dataType, r))
    IndexedSeq.fill(n) {
      new GenericInternalRow(schema.fields.indices.map { c =>
        val f = schema.fields(c)
        if (f.name == "st") (if (r.nextInt(4) == 0) null else new GenericInternalRow(Array[Any](r.nextInt(3))))
        else PredicateGen.columnValues(f.dataType, pools(c), 1, r)(0)
      }.toArray[Any])
    }
  }

  private lazy val (path, rows) = {
    val r = new Random(20260422L)
    val rows = randomRows(r, 400)
    val toScala = CatalystTypeConverters.createToScalaConverter(schema)
    val external = rows.map(toScala(_).asInstanceOf[Row])
    val p = newDir("translate")
    spark.createDataFrame(spark.sparkContext.parallelize(external, 2), schema).write.parquet(p)
    (p, rows)
  }

  /** The value of scan column `i` ([[ScanColumns]] id: a requested column, or a struct field below one)
    * in a row of requested-column `values` (at `required` positions). */
  private def valueOf(schema: StructType, values: Array[Any], required: Array[Int], i: Int): Any = {
    val ids = new ScanColumns(schema)
    if (i < ids.requested) values(required(i))
    else {
      val f = ids.structField(i)
      var t: DataType = schema(f.top).dataType
      f.ordinals.foldLeft(values(required(f.top))) { (v, o) =>
        val st = t.asInstanceOf[StructType]
        t = st(o).dataType
        if (v == null) null else v.asInstanceOf[org.apache.spark.sql.catalyst.InternalRow].get(o, t)
      }
    }
  }

  /** Runs `where` against the file with Spark's own scan and checks what the scan was given. */
  private def check(where: String, mustTranslateAll: Option[Boolean]): (Int, Int) = {
    val df = spark.read.parquet(path).where(where)
    val plan = withConf("spark.lmspark.enabled" -> "false", "spark.sql.session.timeZone" -> "America/Los_Angeles") {
      executedPlan(df)
    }
    val scans = collectWithSubqueries(plan) { case s: FileSourceScanExec => s }
    // The optimizer may prove a combination FALSE and drop the scan: nothing reaches a scan then.
    if (scans.isEmpty) {
      assert(mustTranslateAll.isEmpty, s"$where: no scan in\n$plan")
      return (0, -1)
    }
    val scan = scans.head
    val tr = CatalystTranslator.translate(scan.dataFilters, scan.requiredSchema, caseSensitive = false)
    def ctx = s"$where\n  data filters ${scan.dataFilters.mkString(" ;; ")}\n  translated ${tr.translated.mkString(" ;; ")}" +
      s"\n  untranslated ${tr.untranslated.mkString(" ;; ")}\n  predicate ${tr.predicate}"
    mustTranslateAll.foreach { all =>
      if (all) assert(tr.untranslated.isEmpty && tr.translated.nonEmpty, ctx)
      else assert(tr.untranslated.nonEmpty, ctx)
    }
    // Rows in the scan's output order.
    val positions = scan.output.map(a => schema.fieldIndex(a.name))
    val required = scan.requiredSchema.fieldNames.map(n => scan.output.indexWhere(_.name == n))
    for (c <- tr.translated) {
      val bound = BindReferences.bindReference(c, scan.output)
      val p = CatalystTranslator.translate(Seq(c), scan.requiredSchema, caseSensitive = false).predicate
      val f = Evaluator.compile(p)
      rows.foreach { full =>
        val values = positions.map(full.get(_, null)).toArray[Any]
        val out = new GenericInternalRow(values)
        val expected = PredicateGen.catalyst(bound, out) == Kleene.T
        val got = f(i => valueOf(scan.requiredSchema, values, required, i)) == Kleene.T
        assert(got == expected, s"$c -> $p on $out: Catalyst passes $expected\n$ctx")
      }
    }
    (tr.translated.size, tr.untranslated.size)
  }

  test("SQL filters: supported ones fully translated, others not; translated conjuncts exact on every row") {
    filters.foreach { case (w, all) => check(w, Some(all)) }
  }

  test("random combinations of SQL filters: translated conjuncts exact on every row") {
    var translated = 0
    var noScan = 0
    cases("spark-translate", 30) { r =>
      def pick(): String = filters(r.nextInt(filters.size))._1
      def gen(depth: Int): String =
        if (depth == 0 || r.nextInt(3) == 0) s"(${pick()})"
        else r.nextInt(3) match {
          case 0 => s"(${gen(depth - 1)} and ${gen(depth - 1)})"
          case 1 => s"(${gen(depth - 1)} or ${gen(depth - 1)})"
          case _ => s"(not ${gen(depth - 1)})"
        }
      val (t, u) = check(gen(3), None)
      translated += t
      if (u < 0) noScan += 1
    }
    info(s"$translated conjuncts translated; $noScan filters proven FALSE by Spark's optimizer (no scan)")
  }
}
