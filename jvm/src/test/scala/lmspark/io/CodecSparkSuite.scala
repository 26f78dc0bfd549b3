package lmspark.io

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths, StandardCopyOption}

import org.apache.parquet.format.Util
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.io.CodecFixtures._
import lmspark.plan.LmMetrics
import lmspark.testutil._

/** Codecs and page checksums end to end through a Spark session with lmspark: BROTLI (which vanilla
  * Spark cannot read) against pyarrow's values, the corpus LZ4 files, and
  * `spark.lmspark.verifyChecksums` taken from the session conf. */
class CodecSparkSuite extends AnyFunSuite with LmSparkSession {

  /** A directory holding only a copy of `file`. */
  private def dirWith(file: Path): String = {
    val d = Paths.get(newDir(file.getFileName.toString.stripSuffix(".parquet")))
    Files.createDirectories(d)
    Files.copy(file, d.resolve(file.getFileName), StandardCopyOption.REPLACE_EXISTING)
    d.toString
  }

  /** Runs `df` with lmspark on; its rows and plan, after checking lmspark read every file itself. */
  private def lmRows(df: => DataFrame): Array[Row] = withConf("spark.lmspark.enabled" -> "true") {
    val d = df
    val rows = d.collect()
    val plan: SparkPlan = d.queryExecution.executedPlan
    val scans = lmScans(plan)
    assert(scans.nonEmpty, s"lmspark's scan was not used:\n$plan")
    assert(scans.map(_.metrics(LmMetrics.FilesFallback).value).sum == 0, s"a file fell back to Spark:\n$plan")
    assert(scans.map(_.metrics(LmMetrics.FilesRead).value).sum >= 1)
    rows
  }

  /** The rows of a CSV oracle, typed as the file's Spark schema says. */
  private def csvRows(oracle: Csv, schema: StructType): Array[Row] =
    oracle.rows.map { r =>
      Row.fromSeq(schema.fields.toSeq.map { f =>
        val cell = r(oracle.names.indexOf(f.name))
        cellValue(cell, f.dataType) match {
          case b: lmspark.testutil.ScalaCompat.ArraySeq[_] if f.dataType == StringType =>
            new String(b.asInstanceOf[lmspark.testutil.ScalaCompat.ArraySeq[Byte]].toArray, StandardCharsets.UTF_8)
          case b: lmspark.testutil.ScalaCompat.ArraySeq[_] => b.asInstanceOf[lmspark.testutil.ScalaCompat.ArraySeq[Byte]].toArray
          case v => v
        }
      })
    }.toArray

  test("BROTLI files read through lmspark, without fallback, equal pyarrow's values") {
    for (name <- Seq("brotli_v1.parquet", "brotli_v2.parquet")) {
      val dir = dirWith(resource(name))
      val rows = lmRows(spark.read.parquet(dir))
      val expected = csvRows(csv("values.csv"), spark.read.parquet(dir).schema)
      assert(rows.length == expected.length)
      assert(normalized(rows) == normalized(expected), name)
      // Filters and projections go through the same pages.
      val some = lmRows(spark.read.parquet(dir).where("i32 > 0").select("word", "i64"))
      assert(normalized(some) == normalized(
        expected.filter(r => !r.isNullAt(0) && r.getInt(0) > 0).map(r => Row(r.get(3), r.get(1)))))
    }
  }

  test("vanilla Spark cannot read BROTLI pages (so lmspark is the only reader here)") {
    val dir = dirWith(resource("brotli_v1.parquet"))
    withConf("spark.lmspark.enabled" -> "false") {
      val e = intercept[Exception](spark.read.parquet(dir).collect())
      val chain = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(String.valueOf).mkString("\n")
      assert(chain.contains("Brotli"), chain)
    }
  }

  test("corpus LZ4 and LZ4_RAW files read through lmspark as vanilla Spark reads them") {
    for (name <- Seq("hadoop_lz4_compressed", "hadoop_lz4_compressed_larger", "lz4_raw_compressed",
        "lz4_raw_compressed_larger")) {
      val dir = dirWith(corpus(s"$name.parquet"))
      checkSparkAnswerAndLmUsed(spark.read.parquet(dir))
      lmRows(spark.read.parquet(dir))
    }
  }

  test("corpus raw-block LZ4 file (non-Hadoop) reads through lmspark as pyarrow reads it") {
    val dir = dirWith(corpus("non_hadoop_lz4_compressed.parquet"))
    val rows = lmRows(spark.read.parquet(dir))
    val expected = csvRows(csv("corpus_non_hadoop_lz4_compressed.csv"), spark.read.parquet(dir).schema)
    assert(normalized(rows) == normalized(expected))
  }

  /** A parquet-java file with page CRCs whose first page of the first column has a wrong CRC (the
    * data intact, every offset unchanged). */
  private lazy val badCrcFile: (String, Path) = {
    val specs = TestTypes.all.filter(s => Set("int32", "string").contains(s.name))
    val config = FileConfig(CompressionCodecName.SNAPPY, v2 = false, EncMode.Fallback)
    val columns = for ((s, i) <- specs.toIndexedSeq.zipWithIndex)
      yield TestColumn(s, Nulls.SomeNulls, TestFileWriter.generate(s, Nulls.SomeNulls, config.mode, seed = 77L + i))
    val dir = Paths.get(newDir("badcrc"))
    Files.createDirectories(dir)
    val path = dir.resolve("part-0.parquet")
    TestFileWriter.write(path, config, columns, pageChecksums = true)
    val lm = new LmFile(path)
    val start = try lm.chunk(0, 0).getStartingPos.toInt finally lm.close()
    val all = Files.readAllBytes(path)
    val header = Util.readPageHeader(new java.io.ByteArrayInputStream(all, start, all.length - start))
    assert(header.isSetCrc)
    val old = serialized(header)
    val changed = (8 until 24).iterator.map { bit =>
      val h = header.deepCopy(); h.setCrc(h.crc ^ (1 << bit)); h
    }.find(h => serialized(h).length == old.length).get
    System.arraycopy(serialized(changed), 0, all, start, old.length)
    Files.write(path, all)
    (dir.toString, path)
  }

  private def serialized(h: org.apache.parquet.format.PageHeader): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    Util.writePageHeader(h, out)
    out.toByteArray
  }

  test("spark.lmspark.verifyChecksums from the session conf: off reads, on fails naming file and page") {
    val (dir, path) = badCrcFile
    withConf("spark.lmspark.verifyChecksums" -> "false") {
      checkSparkAnswerAndLmUsed(spark.read.parquet(dir))
    }
    withConf("spark.lmspark.verifyChecksums" -> "true", "spark.lmspark.enabled" -> "true") {
      val e = intercept[Exception](spark.read.parquet(dir).collect())
      val chain = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(String.valueOf).mkString("\n")
      for (s <- Seq("page CRC32 mismatch", path.toString, "row group 0", "page 0 of the chunk"))
        assert(chain.contains(s), s"'$s' missing in:\n$chain")
      // The other column has correct CRCs and reads.
      val other = spark.read.parquet(dir).columns.last
      lmRows(spark.read.parquet(dir).select(other))
    }
  }
}
