package lmspark.scan

import java.nio.file.Paths

import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{Path => HadoopPath}
import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.column.page.DataPageV2
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.MessageTypeParser
import org.scalatest.funsuite.AnyFunSuite

import lmspark.plan.LmMetrics
import lmspark.testutil.{GroupFiles, LmSparkSession, NestedData}

/** Nested layouts other writers produce, read by lmspark itself with vanilla Spark's answer:
  * 2-level lists (a repeated primitive or group inside LIST, element names `array`, `bag`,
  * `<name>_tuple`, a repeated group of several fields), repeated fields without LIST, `MAP_KEY_VALUE`,
  * lists of maps, maps of structs, required and optional levels everywhere; written by parquet-java
  * in every layout of [[GroupFiles.layouts]] (pages v1 / v2, dictionary on / off, 7 or 100 rows per
  * page), queried whole, column by column and under a filter, and with requested fields the file
  * lacks (which read as nulls). Also v2 pages whose `num_rows` is their level count, as pyarrow 11
  * and earlier wrote them (a test resource, `gen_arrow11_v2.py`). */
class NestedLayoutsSuite extends AnyFunSuite with LmSparkSession {

  override protected def sparkConf: Map[String, String] = Map(
    "spark.sql.shuffle.partitions" -> "1",
    "spark.sql.codegen.wholeStage" -> "false")

  private val seed = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261125L)

  private val schemas: Seq[(String, String)] = Seq(
    "2-level list of a primitive" -> "optional group a (LIST) { repeated int32 array; }",
    "2-level list of a group named array" -> "optional group a (LIST) { repeated group array { required binary str (UTF8); optional int32 n; } }",
    "2-level list of a group named _tuple" -> "optional group a (LIST) { repeated group a_tuple { optional binary str (UTF8); } }",
    "2-level list of a group of two fields" -> "required group a (LIST) { repeated group item { optional int64 x; required boolean y; } }",
    "3-level list with element name bag / array (Spark legacy)" ->
      "optional group a (LIST) { repeated group bag { optional int32 array; } }",
    "3-level list with element name item (pyarrow legacy)" -> "optional group a (LIST) { repeated group list { optional double item; } }",
    "repeated primitive without LIST" -> "repeated int32 a;",
    "repeated group without LIST" -> "repeated group a { optional int64 x; repeated binary y (UTF8); }",
    "MAP_KEY_VALUE" -> "optional group a (MAP) { repeated group map (MAP_KEY_VALUE) { required binary key (UTF8); optional int32 value; } }",
    "map of structs" -> "optional group a (MAP) { repeated group key_value { required int32 key; optional group value { optional double x; optional group y (LIST) { repeated group list { optional int64 element; } } } } }",
    "list of maps" -> "optional group a (LIST) { repeated group list { optional group element (MAP) { repeated group key_value { required binary key (UTF8); optional boolean value; } } } }",
    "struct of lists of structs" -> "optional group a { required group b (LIST) { repeated group list { optional group element { optional int32 x; optional group z { optional binary w; } } } } optional int64 c; }",
    "list of lists of lists" -> "optional group a (LIST) { repeated group list { optional group element (LIST) { repeated group list { required group element (LIST) { repeated group list { optional int32 element; } } } } } }")

  schemas.zipWithIndex.foreach { case ((name, field), n) =>
    test(s"$name: whole, projected, filtered, with missing fields, in every layout") {
      val schema = MessageTypeParser.parseMessageType(s"message m { required int64 id; optional int32 k; $field optional int32 z; }")
      GroupFiles.layouts.zipWithIndex.foreach { case (layout, l) =>
        val dir = newDir(s"layout-$n-$l")
        new java.io.File(dir).mkdirs()
        GroupFiles.write(schema, layout, 1500, new Random(seed + 31L * n + l), Paths.get(dir, "part-0.parquet"))
        val fileSchema = spark.read.parquet(dir).schema
        val a = fileSchema("a").dataType
        // A requested field the file lacks, inside the nested column: nulls (whole-struct nulls when all are missing).
        val extended = a match {
          case s: org.apache.spark.sql.types.StructType => Some(fileSchema.add("zz", org.apache.spark.sql.types.IntegerType)
            .copy(fields = fileSchema.fields.map(f => if (f.name == "a") f.copy(dataType = s.add("missing", "string")) else f)))
          case _ => None
        }
        val queries: Seq[() => org.apache.spark.sql.DataFrame] = Seq(
          () => spark.read.parquet(dir),
          () => spark.read.parquet(dir).select("a"),
          () => spark.read.parquet(dir).where("id % 5 = 1").select("id", "a"),
          () => spark.read.parquet(dir).where("k = 3").select("a", "z")) ++
          extended.map(s => () => spark.read.schema(s).parquet(dir))
        queries.zipWithIndex.foreach { case (q, i) => same(s"$name, layout $layout, query $i (seed $seed)", q) }
      }
    }
  }

  test("a 2-level list whose element group is pruned to one field: the row-based reader's answer (the vectorized one fails)") {
    val schema = MessageTypeParser.parseMessageType(
      "message m { required int64 id; optional group a (LIST) { repeated group element { optional int32 x; optional boolean y; } } }")
    GroupFiles.layouts.zipWithIndex.foreach { case (layout, l) =>
      val dir = newDir(s"collapsed-$l")
      new java.io.File(dir).mkdirs()
      GroupFiles.write(schema, layout, 800, new Random(seed + l), Paths.get(dir, "part-0.parquet"))
      spark.read.parquet(dir).createOrReplaceTempView("collapsed")
      Seq("SELECT id, a.x FROM collapsed", "SELECT id, p, e.y FROM collapsed LATERAL VIEW OUTER posexplode(a) v AS p, e").foreach { q =>
        val expected = withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false",
          "spark.sql.parquet.enableVectorizedReader" -> "false") {
          spark.sql(q).collect().toSeq.map(NestedData.canonical).sorted
        }
        val df = spark.sql(q)
        val actual = df.collect().toSeq.map(NestedData.canonical).sorted
        assert(actual == expected, s"layout $layout, $q: ${actual.diff(expected).take(3)} vs ${expected.diff(actual).take(3)}")
        assert(lmScans(df.queryExecution.executedPlan).forall(_.metrics(LmMetrics.FilesFallback).value == 0), s"layout $layout, $q")
      }
    }
  }

  test("v2 pages as Arrow C++ before 12.0 wrote them (num_rows = num_values, a pyarrow 11 file): lmspark's reads and " +
    "skips count records by their levels, with vanilla's answer") {
    val url = getClass.getResource("/nested/arrow11_v2_num_rows.parquet")
    assert(url != null, "missing test resource nested/arrow11_v2_num_rows.parquet (gen_arrow11_v2.py)")
    val file = Paths.get(url.toURI)
    // The file has the writer's flaw: in every repeated column each v2 page's num_rows is its level
    // count, and these counts add up to more than the row group's rows.
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new HadoopPath(file.toString), new Configuration()))
    try {
      assert(reader.getFooter.getFileMetaData.getCreatedBy.startsWith("parquet-cpp-arrow version 11."))
      val repeated = reader.getFooter.getFileMetaData.getSchema.getColumns.toArray(Array.empty[ColumnDescriptor])
        .filter(_.getMaxRepetitionLevel > 0)
      assert(repeated.length == 4, repeated.toSeq)
      var group = reader.readNextRowGroup()
      var groups = 0
      while (group != null) {
        for (d <- repeated) {
          val pages = group.getPageReader(d)
          var rows = 0L
          var page = pages.readPage()
          while (page != null) {
            val v2 = page.asInstanceOf[DataPageV2]
            assert(v2.getRowCount == v2.getValueCount, s"$d: a page with num_rows ${v2.getRowCount}, num_values ${v2.getValueCount}")
            rows += v2.getRowCount
            page = pages.readPage()
          }
          assert(rows > group.getRowCount, s"$d: num_rows add up to $rows, the row group has ${group.getRowCount} rows")
        }
        groups += 1
        group = reader.readNextRowGroup()
      }
      assert(groups == 3)
    } finally reader.close()
    val dir = newDir("arrow11-v2")
    new java.io.File(dir).mkdirs()
    java.nio.file.Files.copy(file, Paths.get(dir, "part-0.parquet"))
    val queries: Seq[(String, () => org.apache.spark.sql.DataFrame)] = Seq(
      "whole" -> (() => spark.read.parquet(dir)),
      "the nested columns" -> (() => spark.read.parquet(dir).select("l", "s", "m")),
      "scattered rows" -> (() => spark.read.parquet(dir).where("id % 97 = 3")),
      "a run of rows" -> (() => spark.read.parquet(dir).where("id between 500 and 530").select("id", "l", "m")),
      "a struct field's filter" -> (() => spark.read.parquet(dir).where("s.a = 3 and id > 600")),
      "one row" -> (() => spark.read.parquet(dir).where("id = 777").select("m", "s.tags")))
    queries.foreach { case (what, q) => same(s"arrow 11 v2 pages, $what", q) }
  }

  /** lmspark's rows equal vanilla's for `q`, and lmspark read every file itself. */
  private def same(what: String, q: () => org.apache.spark.sql.DataFrame): Unit = {
    val expected = withConf("spark.lmspark.enabled" -> "false", "spark.sql.parquet.filterPushdown" -> "false") {
      q().collect().toSeq.map(NestedData.canonical).sorted
    }
    val df = q()
    val actual = df.collect().toSeq.map(NestedData.canonical).sorted
    assert(actual == expected, s"$what: ${actual.diff(expected).take(3)} vs ${expected.diff(actual).take(3)}")
    val scans = lmScans(df.queryExecution.executedPlan)
    assert(scans.nonEmpty && scans.forall(_.metrics(LmMetrics.FilesFallback).value == 0),
      s"$what: not read by lmspark itself\n${df.queryExecution.executedPlan}")
  }

  test("struct fields matched as Spark matches them: all requested fields missing, case-insensitive, by field id") {
    import org.apache.spark.sql.types._
    val schema = MessageTypeParser.parseMessageType("""message m { required int64 id = 1;
      optional group s = 2 { optional int32 Alpha = 3; optional binary beta (UTF8) = 4;
        optional group l (LIST) = 5 { repeated group list { optional int32 element; } } } }""")
    val dir = newDir("matching")
    new java.io.File(dir).mkdirs()
    GroupFiles.write(schema, GroupFiles.layouts.head, 800, new Random(seed), Paths.get(dir, "part-0.parquet"))
    def read(t: StructType) = () => spark.read.schema(t).parquet(dir)
    val missingAll = new StructType().add("id", LongType).add("s", new StructType().add("x", IntegerType).add("y", StringType))
    // Spark 4.1+ keeps a null struct null and a present one present (a carrier field gives its null
    // bits) unless returnNullStructIfAllFieldsMissing; before 4.1 such a struct is always null.
    Seq("true", "false").foreach { legacy =>
      withConf("spark.sql.legacy.parquet.returnNullStructIfAllFieldsMissing" -> legacy) {
        same(s"all fields missing (legacy $legacy)", read(missingAll))
      }
    }
    val mixedCase = new StructType().add("id", LongType).add("S", new StructType().add("alpha", IntegerType).add("BETA", StringType))
    withConf("spark.sql.caseSensitive" -> "false") { same("case-insensitive", read(mixedCase)) }
    withConf("spark.sql.caseSensitive" -> "true") { same("case-sensitive (no match: nulls)", read(mixedCase)) }
    def id(n: Int) = new MetadataBuilder().putLong("parquet.field.id", n).build()
    val byId = new StructType().add("id", LongType, nullable = false, id(1))
      .add("renamed", new StructType().add("b2", StringType, nullable = true, id(4)).add("a2", IntegerType, nullable = true, id(3))
        .add("none", IntegerType, nullable = true, id(99)), nullable = true, id(2))
    withConf("spark.sql.parquet.fieldId.read.enabled" -> "true") { same("by field id", read(byId)) }
  }
}
