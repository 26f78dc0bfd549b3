package lmspark.testutil

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.file.{Files, Path, Paths}
import java.time.{Instant, LocalDate, LocalDateTime, ZoneOffset}
import java.util.Arrays

import lmspark.testutil.ScalaCompat.ArraySeq
import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.types._

/**
 * How the values of one generated column are laid out: the share of nulls (and whether they come in
 * runs, so that whole pages are null), and the values' cardinality: `low` draws from a pool of
 * `poolSize` values (dictionary-encoded), `high` draws fresh values, `fallback` draws from the pool for
 * the first `lowShare` of the rows and fresh values after (a dictionary that falls back mid-chunk when
 * the dictionary page limit is small); `runLength` > 1 repeats each drawn value for up to that many rows
 * (clustered data without sorting).
 */
final case class ValueLayout(nullRate: Double, nullRuns: Boolean, cardinality: String, poolSize: Int, lowShare: Double,
    runLength: Int) {
  override def toString: String = {
    val nulls = if (nullRate == 0) "no nulls" else f"nulls ${nullRate}%.2f${if (nullRuns) " in runs" else ""}"
    val card = cardinality match {
      case "low" => s"low cardinality ($poolSize values)"
      case "fallback" => f"pool of $poolSize for ${lowShare * 100}%.0f%% then high cardinality"
      case other => s"$other cardinality"
    }
    s"$nulls, $card${if (runLength > 1) s", runs up to $runLength" else ""}"
  }
}

object ValueLayout {
  def random(r: Random, allowNulls: Boolean): ValueLayout = {
    val nullRate =
      if (!allowNulls) 0.0
      else Seq(0.0, 0.0, 0.03, 0.2, 0.5, 0.9, 1.0)(r.nextInt(7))
    val cardinality = Seq("low", "low", "high", "high", "fallback")(r.nextInt(5))
    ValueLayout(nullRate, r.nextInt(3) == 0, cardinality, 1 + r.nextInt(if (r.nextBoolean()) 4 else 40),
      0.2 + r.nextDouble() * 0.6, if (r.nextInt(4) == 0) 2 + r.nextInt(60) else 1)
  }

  /** `n` values laid out as `layout` says, drawing fresh values with `fresh`. */
  def values[T](layout: ValueLayout, n: Int, r: Random)(fresh: => T): IndexedSeq[Any] = {
    val pool = IndexedSeq.fill(layout.poolSize)(fresh)
    val out = new Array[Any](n)
    var i = 0
    var nullLeft = 0
    while (i < n) {
      val fromPool = layout.cardinality match {
        case "low" => true
        case "fallback" => i < n * layout.lowShare
        case _ => false
      }
      val v: Any = if (fromPool) pool(r.nextInt(pool.size)) else fresh
      val run = if (layout.runLength > 1) 1 + r.nextInt(layout.runLength) else 1
      var k = 0
      while (k < run && i < n) {
        val isNull =
          if (layout.nullRate >= 1.0) true
          else if (layout.nullRate == 0.0) false
          else if (layout.nullRuns) {
            if (nullLeft > 0) { nullLeft -= 1; true }
            else if (r.nextDouble() < layout.nullRate / 40) { nullLeft = r.nextInt(120); true }
            else r.nextDouble() < layout.nullRate / 2
          } else r.nextDouble() < layout.nullRate
        out(i) = if (isNull) null else v
        i += 1
        k += 1
      }
    }
    ArraySeq.unsafeWrapArray(out)
  }
}

/** One column of a file written by Spark: its name, Spark type, nullability and value layout. */
final case class SparkDiffColumn(name: String, dataType: DataType, nullable: Boolean, layout: ValueLayout) {
  override def toString: String = s"$name ${dataType.simpleString}${if (nullable) "" else " not null"} ($layout)"
}

/** One column of a file written with parquet-java's column writers ([[TestFileWriter]]): a [[TypeSpec]]
  * of [[TestTypes]], its nullability and value layout. */
final case class JavaDiffColumn(spec: TypeSpec, nulls: Nulls, layout: ValueLayout, index: Int) {
  def name: String = s"${spec.name}_${nulls.suffix}_$index"
  override def toString: String = s"$name ($layout)"
}

/**
 * The generation parameters of one random file of the late-materialization differential suite: its
 * schema (2-9 columns), data layout (rows, clustering) and writer settings (row groups, page sizes,
 * dictionary on / off / falling back, page version, codec). Written either by Spark (`SparkWritten`)
 * or with parquet-java's column writers (`JavaWritten`, which also gives DELTA and BYTE_STREAM_SPLIT
 * encodings). `describe` prints everything needed to write the same file again; the same `(seed,
 * index)` always gives the same spec and the same file.
 */
sealed trait DiffFileSpec {
  def index: Int
  def rows: Int
  def describe: String
}

final case class SparkWritten(index: Int, rows: Int, columns: IndexedSeq[SparkDiffColumn], sortBy: Option[String],
    rowGroupRows: Int, options: Seq[(String, String)], timestampType: String, dataSeed: Long) extends DiffFileSpec {
  def schema: StructType = StructType(columns.map(c => StructField(c.name, c.dataType, c.nullable)))
  def describe: String =
    s"file $index written by Spark: $rows rows${sortBy.fold("")(c => s" sorted by $c")}, " +
      s"row groups of $rowGroupRows rows, ${options.map { case (k, v) => s"$k=$v" }.mkString(", ")}, outputTimestampType=$timestampType, " +
      s"data seed $dataSeed; columns: ${columns.mkString("; ")}"
}

final case class JavaWritten(index: Int, rows: Int, columns: IndexedSeq[JavaDiffColumn], sortBy: Option[Int],
    config: FileConfig, rowGroupRows: IndexedSeq[Int], dictionaryPageSize: Int, dataSeed: Long) extends DiffFileSpec {
  def describe: String =
    s"file $index written with parquet-java: $rows rows in row groups of ${rowGroupRows.mkString("/")}" +
      s"${sortBy.fold("")(i => s" sorted by ${columns(i).name}")}, $config (page row limit ${config.mode.pageRowLimit}, " +
      s"page bytes ${config.mode.pageBytes}), dictionary page size $dictionaryPageSize, data seed $dataSeed; " +
      s"columns: ${columns.mkString("; ")}"
}

object DiffFiles {

  /** Row counts avoid multiples of the batch sizes the suite uses (4096 and 37). */
  private def rowCount(r: Random): Int =
    Iterator.continually(700 + r.nextInt(3300)).find(n => n % 37 != 0 && n % 4096 != 0).get

  /** Spark types of Spark-written files: every listed type, the three decimal ranges, and strings of
    * several kinds (told apart by the generator, see [[sparkValue]]). */
  private val sparkTypes: IndexedSeq[(String, DataType)] = IndexedSeq(
    "int" -> IntegerType, "long" -> LongType, "short" -> ShortType, "byte" -> ByteType,
    "double" -> DoubleType, "float" -> FloatType,
    "str" -> StringType, "str" -> StringType, "str" -> StringType,
    "dec" -> DecimalType(9, 2), "dec" -> DecimalType(5, 0), "dec" -> DecimalType(18, 3), "dec" -> DecimalType(14, 6),
    "dec" -> DecimalType(30, 5), "dec" -> DecimalType(38, 10),
    "date" -> DateType, "ts" -> TimestampType, "ntz" -> TimestampNTZType, "bool" -> BooleanType)

  /** The spec of file `index` for `seed`: about two thirds are written by Spark. */
  def spec(seed: Long, index: Int): DiffFileSpec = {
    val r = new Random(seed * 1000003L + index * 7919L + 17)
    if (index % 3 == 2) javaSpec(index, r) else sparkSpec(index, r)
  }

  private def sparkSpec(index: Int, r: Random): SparkWritten = {
    val rows = rowCount(r)
    val n = 2 + r.nextInt(8)
    val columns = (0 until n).map { i =>
      val (prefix, dt) = sparkTypes(r.nextInt(sparkTypes.size))
      val nullable = r.nextInt(5) != 0
      SparkDiffColumn(s"c${i}_$prefix", dt, nullable, ValueLayout.random(r, nullable))
    }
    val sortBy = if (r.nextInt(5) < 2) Some(columns(r.nextInt(n)).name) else None
    val dictionary = r.nextInt(3) != 0
    val rowGroupRows = 150 + r.nextInt(1200)
    val options = Seq(
      "parquet.page.row.count.limit" -> (10 + r.nextInt(200)).toString,
      "parquet.page.size" -> Seq("1024", "2048", "8192")(r.nextInt(3)),
      "parquet.enable.dictionary" -> dictionary.toString,
      "parquet.writer.version" -> (if (r.nextBoolean()) "v2" else "v1"),
      "compression" -> Seq("snappy", "zstd", "gzip", "uncompressed", "lz4_raw")(r.nextInt(5))) ++
      (if (dictionary && r.nextBoolean()) Seq("parquet.dictionary.page.size" -> (128 + r.nextInt(2000)).toString) else Nil)
    SparkWritten(index, rows, columns, sortBy, rowGroupRows, options, Seq("INT96", "TIMESTAMP_MICROS", "TIMESTAMP_MILLIS")(r.nextInt(3)),
      r.nextLong())
  }

  private def javaSpec(index: Int, r: Random): JavaWritten = {
    val rows = rowCount(r)
    val n = 2 + r.nextInt(8)
    val specs = TestTypes.all
    val columns = (0 until n).map { i =>
      val nulls = Seq(Nulls.Required, Nulls.SomeNulls, Nulls.SomeNulls, Nulls.AllNulls)(r.nextInt(4))
      val layout = nulls match {
        case Nulls.Required => ValueLayout.random(r, allowNulls = false)
        case Nulls.AllNulls => ValueLayout.random(r, allowNulls = false).copy(nullRate = 1.0)
        case Nulls.SomeNulls => ValueLayout.random(r, allowNulls = true) match {
          case l if l.nullRate == 0.0 || l.nullRate == 1.0 => l.copy(nullRate = 0.1)
          case l => l
        }
      }
      JavaDiffColumn(specs(r.nextInt(specs.size)), nulls, layout, i)
    }
    val mode = EncMode.all(r.nextInt(EncMode.all.size))
    val config = FileConfig(TestFiles.codecs(r.nextInt(TestFiles.codecs.size)), r.nextBoolean(), mode)
    val groups = {
      val target = 200 + r.nextInt(1200)
      val sizes = Iterator.iterate((rows, List.empty[Int])) { case (left, acc) =>
        val s = math.min(left, math.max(1, target + r.nextInt(200) - 100)); (left - s, s :: acc)
      }.dropWhile(_._1 > 0).next()._2.reverse
      sizes.toIndexedSeq
    }
    val dictionaryPageSize = if (mode.fallsBack || r.nextInt(3) == 0) 128 + r.nextInt(2000) else 1 << 20
    JavaWritten(index, rows, columns, if (r.nextInt(5) < 2) Some(r.nextInt(n)) else None, config, groups,
      dictionaryPageSize, r.nextLong())
  }

  // ---- values ----

  private val alphabet = IndexedSeq("a", "b", "z", "A", "é", "ü", "日", "😀", "0", " ", "ab", "\u00ff", "%", "_", "x")
  private val asciiAlphabet = IndexedSeq("a", "b", "c", "z", "0", "1", "-")

  private def special[T](r: Random, normal: => T, specials: IndexedSeq[T]): T =
    if (r.nextInt(100) < 12) specials(r.nextInt(specials.size)) else normal

  private def unscaled(r: Random, precision: Int): BigInteger = {
    val bound = BigInteger.TEN.pow(precision)
    val v = new BigInteger(bound.bitLength() + 8, r.self).mod(bound)
    val digits = r.nextInt(precision) + 1 // mostly shorter values, some at full precision
    val small = v.mod(BigInteger.TEN.pow(digits))
    if (r.nextBoolean()) small.negate() else small
  }

  /** A fresh value of `c` (a Spark external value with the Java 8 datetime API). String columns
    * differ by column number: short ASCII, non-ASCII with empty strings, or longer mixed text. */
  private def sparkValue(c: SparkDiffColumn, column: Int, r: Random): Any = c.dataType match {
    case IntegerType => special(r, r.nextInt(2001) - 1000, IndexedSeq(Int.MinValue, Int.MaxValue, 0, -1))
    case LongType => special(r, r.nextLong() % 1000000000000L, IndexedSeq(Long.MinValue, Long.MaxValue, 0L, -1L))
    case ShortType => (r.nextInt(65536) - 32768).toShort
    case ByteType => (r.nextInt(256) - 128).toByte
    case DoubleType => special(r, (r.nextInt(20001) - 10000) / 8.0,
      IndexedSeq(Double.NaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity, Double.MinPositiveValue, Double.MaxValue))
    case FloatType => special(r, (r.nextInt(20001) - 10000) / 4.0f,
      IndexedSeq(Float.NaN, -0.0f, 0.0f, Float.PositiveInfinity, Float.NegativeInfinity, Float.MaxValue))
    case StringType => column % 3 match {
      case 0 => Seq.fill(1 + r.nextInt(4))(asciiAlphabet(r.nextInt(asciiAlphabet.size))).mkString
      case 1 => Seq.fill(r.nextInt(5))(alphabet(r.nextInt(alphabet.size))).mkString
      case _ => Seq.fill(r.nextInt(25))(alphabet(r.nextInt(alphabet.size))).mkString
    }
    case t: DecimalType => new JBigDecimal(unscaled(r, t.precision), t.scale)
    case DateType =>
      if (r.nextInt(100) == 0) LocalDate.of(1200, 3, 1).plusDays(r.nextInt(100))
      else LocalDate.ofEpochDay(r.nextInt(60000) - 20000L)
    case TimestampType => Instant.ofEpochSecond(r.nextInt(2000000000) - 1000000000L, r.nextInt(1000000) * 1000L)
    case TimestampNTZType =>
      LocalDateTime.ofEpochSecond(r.nextInt(2000000000) - 1000000000L, r.nextInt(1000000) * 1000, ZoneOffset.UTC)
    case BooleanType => r.nextBoolean()
    case other => throw new IllegalArgumentException(s"no generator for $other")
  }

  /** Writes `spec` under `dir` (a new directory) and returns the Parquet file's path. */
  def write(spark: SparkSession, spec: DiffFileSpec, dir: Path): Path = spec match {
    case s: SparkWritten => writeWithSpark(spark, s, dir)
    case j: JavaWritten => writeWithParquetJava(j, dir)
  }

  private def writeWithSpark(spark: SparkSession, s: SparkWritten, dir: Path): Path = {
    val r = new Random(s.dataSeed)
    val columns = s.columns.zipWithIndex.map { case (c, i) => ValueLayout.values(c.layout, s.rows, r)(sparkValue(c, i, r)) }
    val rows = (0 until s.rows).map(i => Row.fromSeq(columns.map(_(i))))
    val conf = spark.conf
    val key = "spark.sql.parquet.outputTimestampType"
    val old = conf.getOption(key)
    conf.set(key, s.timestampType)
    try {
      val df = spark.createDataFrame(rows.asJava, s.schema).coalesce(1)
      WriterLayouts.writeRowGroups(s.sortBy.fold(df)(c => df.sortWithinPartitions(c)), dir.toString, s.rowGroupRows, s.options.toMap)
    } finally old.fold(conf.unset(key))(conf.set(key, _))
    Files.list(dir).iterator().asScala.find(_.toString.endsWith(".parquet"))
      .getOrElse(throw new IllegalStateException(s"Spark wrote no Parquet file in $dir"))
  }

  /** Physical values in an order that clusters equal values (signed numbers, unsigned bytes), nulls first. */
  private val physicalOrder: Ordering[Any] = new Ordering[Any] {
    def compare(a: Any, b: Any): Int = (a, b) match {
      case (null, null) => 0
      case (null, _) => -1
      case (_, null) => 1
      case (x: Boolean, y: Boolean) => java.lang.Boolean.compare(x, y)
      case (x: Int, y: Int) => Integer.compare(x, y)
      case (x: Long, y: Long) => java.lang.Long.compare(x, y)
      case (x: Float, y: Float) => java.lang.Float.compare(x, y)
      case (x: Double, y: Double) => java.lang.Double.compare(x, y)
      case (x: ArraySeq[_], y: ArraySeq[_]) =>
        Arrays.compareUnsigned(x.asInstanceOf[ArraySeq[Byte]].toArray, y.asInstanceOf[ArraySeq[Byte]].toArray)
      case _ => throw new IllegalArgumentException(s"cannot order $a and $b")
    }
  }

  private def writeWithParquetJava(j: JavaWritten, dir: Path): Path = {
    val r = new Random(j.dataSeed)
    val columns = j.columns.map(c => ValueLayout.values(c.layout, j.rows, r)(c.spec.gen(r)))
    val order = j.sortBy.fold((0 until j.rows).toIndexedSeq)(k => (0 until j.rows).sortBy(i => columns(k)(i))(physicalOrder))
    val starts = j.rowGroupRows.scanLeft(0)(_ + _)
    val testColumns = j.columns.zip(columns).map { case (c, values) =>
      val groups = j.rowGroupRows.indices.map(g => (starts(g) until starts(g + 1)).map(i => values(order(i))))
      TestColumn(c.spec, c.nulls, groups, s"_${c.index}")
    }
    Files.createDirectories(dir)
    val path = Paths.get(dir.toString, s"java-${j.index}.parquet")
    TestFileWriter.write(path, j.config, testColumns, dictionaryPageSize = Some(j.dictionaryPageSize))
    path
  }
}
