package lmspark.scan

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types.StructType
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.LocalInputFile
import lmspark.meta.FooterReader
import lmspark.plan.LmMetrics
import lmspark.testutil.LmSparkSession

/** Dictionary-preserving scans end to end: Spark-written dictionary-encoded files (strings, ints,
  * narrow ints, decimals of every width, timestamps in micros and millis, dates, a column that
  * falls back to plain pages) give vanilla Spark's answers with preservation on and off, on- and
  * off-heap, with and without whole-stage codegen; and the scan's batches really carry
  * dictionaries only when preservation is on. */
class DictionaryScanSuite extends AnyFunSuite with LmSparkSession {

  private def parquetFiles(dir: String): Seq[File] =
    new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).sortBy(_.getName).toSeq

  /** A table written by Spark with `timestampType`. With parquet-java's v1 writer (`v2` false)
    * every low-cardinality column but `d38` (FIXED_LEN_BYTE_ARRAY, never dictionary-encoded by the
    * v1 writer) has only dictionary pages, `hs` (each value thrice, more values than the small
    * dictionary limit holds, 200-row pages) falls back to plain pages mid-chunk and `id` is plain
    * from its first page. The v2 writer would fall back to DELTA encodings,
    * so its table has only the low-cardinality columns, all dictionary-encoded. */
  private def writeTable(timestampType: String, v2: Boolean): String = {
    val p = newDir(s"dict-$timestampType")
    withConf("spark.sql.parquet.outputTimestampType" -> timestampType) {
      val df = spark.range(0, 30000, 1, 2).select(
        col("id"),
        concat(lit("v"), (col("id") % 17).cast("string")).as("s"),
        when(col("id") % 5 === 0, lit(null)).otherwise(concat(lit("n\u00e9"), (col("id") % 9).cast("string"))).as("ns"),
        ((col("id") % 23) - 11).cast("int").as("i"),
        (col("id") % 3 - 1).cast("tinyint").as("b"),
        ((col("id") % 11) * 7 - 30).cast("decimal(9,2)").as("d9"),
        ((col("id") % 13) * 1234567 - 5).cast("decimal(18,3)").as("d18"),
        ((col("id") % 7) * lit(BigDecimal("12345678901234567890.123")) - 3).cast("decimal(38,5)").as("d38"),
        timestamp_seconds(lit(1700000000L) + (col("id") % 19) * 3601).as("ts"),
        date_add(lit("2020-01-01").cast("date"), (col("id") % 29).cast("int")).as("dt"),
        concat(lit("h"), (col("id") / 3).cast("long").cast("string")).as("hs"))
      (if (v2) df.drop("id", "hs") else df).write
        .option("parquet.dictionary.page.size", "4096")
        .option("parquet.page.row.count.limit", "200")
        .option("parquet.writer.version", if (v2) "v2" else "v1")
        .parquet(p)
    }
    p
  }

  private lazy val micros: String = writeTable("TIMESTAMP_MICROS", v2 = false)
  private lazy val millis: String = writeTable("TIMESTAMP_MILLIS", v2 = true)

  /** The columns of `p` with only dictionary pages, those falling back mid-chunk, and plain ones. */
  private def dictionaryOnly(p: String): Seq[String] =
    Seq("s", "ns", "i", "b", "d9", "d18", "ts", "dt") ++ (if (p == millis) Seq("d38") else Nil)
  private def fallingBack(p: String): Seq[String] = if (p == micros) Seq("hs") else Nil
  private def plainOnly(p: String): Seq[String] = if (p == micros) Seq("id", "d38") else Nil

  private def queries(p: String): Seq[() => DataFrame] = {
    val hs = if (p == micros) col("hs") else lit("none")
    Seq(
      () => spark.read.parquet(p),
      () => spark.read.parquet(p).where(col("s") === "v3").select("s", "i", "d38", "ts", "b"),
      () => spark.read.parquet(p).groupBy("s").agg(sum("i"), max("d18"), min("d9"), max("d38"), min("ts"),
        count("ns"), max("dt"), sum("b")),
      () => spark.read.parquet(p).where(col("i") < -5).select(hs, col("ns"), col("d38")))
  }

  test("the test tables have the page encodings the other tests rely on") {
    for (p <- Seq(micros, millis); f <- parquetFiles(p)) {
      val r = ParquetFileReader.open(new LocalInputFile(f.toPath))
      try {
        for (block <- r.getFooter.getBlocks.asScala; chunk <- block.getColumns.asScala) {
          val stats = chunk.getEncodingStats
          val name = chunk.getPath.toDotString
          if (fallingBack(p).contains(name))
            assert(stats.hasDictionaryEncodedPages && stats.hasNonDictionaryEncodedPages, s"$f $name: $stats")
          else if (dictionaryOnly(p).contains(name))
            assert(stats.hasDictionaryEncodedPages && !stats.hasNonDictionaryEncodedPages, s"$f $name: $stats")
          else assert(plainOnly(p).contains(name) && !stats.hasDictionaryEncodedPages, s"$f $name: $stats")
        }
      } finally r.close()
    }
  }

  test("Spark queries over dictionary-encoded files equal vanilla Spark, preservation on and off") {
    val variants = Seq(
      Seq("spark.lmspark.batchSize" -> "4096"),
      Seq("spark.lmspark.batchSize" -> "7"),
      Seq("spark.lmspark.batchSize" -> "1000", "spark.sql.columnVector.offheap.enabled" -> "true"),
      Seq("spark.lmspark.batchSize" -> "333", "spark.sql.codegen.wholeStage" -> "false"))
    val runs = variants.map("true" -> _) :+ ("false" -> variants.head)
    for (p <- Seq(micros, millis); (preserve, variant) <- runs) {
      withConf(("spark.lmspark.dictionary.preserve.enabled" -> preserve) +: variant: _*) {
        for (q <- queries(p)) {
          val plan = checkSparkAnswerAndLmUsed(q())
          val scan = lmScans(plan).head
          assert(scan.metrics(LmMetrics.FilesRead).value > 0 && scan.metrics(LmMetrics.FilesFallback).value == 0,
            s"lmspark must read the files itself ($preserve, $variant)")
        }
      }
    }
  }

  test("the scan's batches carry dictionaries only with preservation on, with the same rows") {
    val conf = spark.sessionState.newHadoopConf()
    def read(f: File, schema: StructType, preserve: Boolean, offHeap: Boolean): (Seq[Seq[Any]], Map[String, (Int, Int)]) = {
      val settings = ScanSettings(schema, new StructType(), batchSize = 100, offHeapVectors = offHeap,
        caseSensitive = false, datetimeRebaseModeInRead = "CORRECTED", preserveDictionary = preserve)
      val open = FooterReader.open(conf, new Path(f.getAbsolutePath), f.length, f.lastModified, 0, f.length)
      val plan = FileReadPlan.build(open.footer, schema, settings).fold(why => fail(why), identity)
      val reader = new FileBatchReader(open, plan, InternalRow.empty, settings,
        LmMetrics.scanMetrics(LmMetrics.create(spark.sparkContext)))
      val rows = Seq.newBuilder[Seq[Any]]
      val counts = scala.collection.mutable.Map.empty[String, (Int, Int)].withDefaultValue((0, 0))
      try {
        while (reader.hasNext) {
          val batch = reader.next()
          for (c <- schema.fields.indices) {
            val v = batch.column(c).asInstanceOf[org.apache.spark.sql.execution.vectorized.WritableColumnVector]
            val (kept, all) = counts(schema(c).name)
            counts(schema(c).name) = (kept + (if (v.hasDictionary) 1 else 0), all + 1)
          }
          batch.rowIterator().asScala.foreach(r => rows += r.copy().toSeq(schema).map {
            case b: Array[Byte] => b.toSeq
            case other => other
          })
        }
      } finally reader.close()
      (rows.result(), counts.toMap)
    }
    for (p <- Seq(micros, millis); f <- parquetFiles(p); offHeap <- Seq(false, true)) {
      val schema = spark.read.parquet(p).schema
      val (eagerRows, eager) = read(f, schema, preserve = false, offHeap)
      val (lazyRows, kept) = read(f, schema, preserve = true, offHeap)
      assert(lazyRows.size == 15000 && lazyRows == eagerRows, s"$f offHeap=$offHeap: rows differ")
      assert(eager.values.forall(_._1 == 0), s"$f: dictionaries with preservation off: $eager")
      // Every batch of an all-dictionary column keeps its dictionary; a falling-back column keeps
      // it in some batches and decodes others; a plain column never has one.
      for (c <- dictionaryOnly(p)) assert(kept(c)._1 == kept(c)._2 && kept(c)._2 > 0, s"$f offHeap=$offHeap $c: $kept")
      for (c <- fallingBack(p)) assert(kept(c)._1 > 0 && kept(c)._1 < kept(c)._2, s"$f offHeap=$offHeap $c: $kept")
      for (c <- plainOnly(p)) assert(kept(c)._1 == 0, s"$f offHeap=$offHeap $c: $kept")
    }
  }
}
