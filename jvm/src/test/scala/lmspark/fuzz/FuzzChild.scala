package lmspark.fuzz

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.hadoop.mapred.FileSplit
import org.apache.hadoop.mapreduce.TaskAttemptID
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.hadoop.{ParquetFileReader, ParquetInputFormat, ParquetReader}
import org.apache.parquet.hadoop.example.GroupReadSupport
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.MessageType
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.parquet.{ParquetReadSupport, ParquetToSparkSchemaConverter, VectorizedParquetRecordReader}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

import lmspark.meta.FooterReader
import lmspark.plan.ScanMetrics
import lmspark.scan.{FileBatchReader, FileReadPlan, ScanSettings, WantedRows}

/**
 * The child process of the fuzz test: reads each file named on its command line, one after
 * another, with four readers, and prints one line per reader per file as soon as that read ends:
 *
 *   - `lm`: lmspark's scan layer ([[FooterReader]], [[FileReadPlan]], [[FileBatchReader]]) on the
 *     whole file, every column, no filter, batch after batch, without a SparkSession;
 *   - `lm-wanted`: the same, asked for the rows [[isWanted]] names only ([[WantedRows]], as a top-k's
 *     second pass asks): row groups and pages holding none of them are skipped, not decoded;
 *   - `spark`: vanilla Spark's `VectorizedParquetRecordReader`, initialised as Spark's
 *     `ParquetFileFormat` does (a split over the whole file, `ParquetReadSupport`, requested schema);
 *   - `pq`: parquet-java's record reader with its example `Group` materializer.
 *
 * Arguments: `<readers>=<file>`, readers a comma-separated subset of `lm,lm-wanted,spark,pq` (or of
 * the `selftest-*` readers that hang, exhaust the heap or halt the JVM, for the runner's own test).
 * Lines: `begin <reader> <file>` before a read, then `<reader> <file> ROWS <digest> <rows>
 * <wanted digest> <wanted rows>` (the whole read's, then its wanted rows'; `lm-wanted` prints the
 * first two only, of the rows it yielded),
 * `<reader> <file> ERROR <exception class>: <message>`, `lm <file> FALLBACK <reason>` (lmspark hands
 * the file to Spark's reader) or `<reader> <file> NOSCHEMA <message>` (Spark could not even infer a
 * schema from the footer, so no reader is reached). Rows are compared in [[CanonicalRows]] form.
 * Every read uses the schema Spark infers from the file's own footer, datetime rebasing CORRECTED
 * for both Spark readers, and the split `[0, file length)`.
 */
object FuzzChild {

  private val batchSize = 997

  /** The Hadoop conf of every reader: Spark's schema-conversion settings at their defaults. */
  private def hadoopConf(): Configuration = {
    val c = new Configuration()
    c.setBoolean(SQLConf.PARQUET_BINARY_AS_STRING.key, false)
    c.setBoolean(SQLConf.PARQUET_INT96_AS_TIMESTAMP.key, true)
    c.setBoolean(SQLConf.CASE_SENSITIVE.key, false)
    c.setBoolean(SQLConf.PARQUET_INFER_TIMESTAMP_NTZ_ENABLED.key, true)
    c.setBoolean(SQLConf.LEGACY_PARQUET_NANOS_AS_LONG.key, false)
    c.setBoolean(SQLConf.PARQUET_FIELD_ID_READ_ENABLED.key, false)
    c.setBoolean(SQLConf.IGNORE_MISSING_PARQUET_FIELD_ID.key, false)
    c.set(SQLConf.SESSION_LOCAL_TIMEZONE.key, "UTC")
    c
  }

  private def oneLine(s: String): String = {
    val t = String.valueOf(s).replaceAll("[\\r\\n\\t]+", " | ")
    // Whole (the parent looks for the file's name anywhere in it), within reason.
    if (t.length > 100000) t.substring(0, 100000) + "..." else t
  }

  private def describe(e: Throwable): String = s"${e.getClass.getName}: ${oneLine(e.getMessage)}"

  def main(args: Array[String]): Unit = {
    val out = new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8")
    // Whatever the libraries log goes to stderr, never among the result lines.
    System.setOut(System.err)
    args.foreach { arg =>
      val eq = arg.indexOf('=')
      val wanted = arg.substring(0, eq).split(",").toSet
      val f = arg.substring(eq + 1)
      val conf = hadoopConf()
      val file = new File(f)
      // The schema Spark would infer from this file's footer (None: inference itself fails).
      val inferred: Either[String, (MessageType, StructType)] =
        try {
          val r = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(f), conf),
            HadoopReadOptions.builder(conf, new Path(f)).build())
          val footer = try r.getFooter finally r.close()
          val parquet = footer.getFileMetaData.getSchema
          Right((parquet, new ParquetToSparkSchemaConverter(conf).convert(parquet)))
        } catch { case e: Throwable => Left(describe(e)) }
      for ((name, read) <- Seq[(String, () => String)](
          "lm" -> (() => readLm(file, conf, inferred, wantedOnly = false)),
          "lm-wanted" -> (() => readLm(file, conf, inferred, wantedOnly = true)),
          "spark" -> (() => readSpark(file, conf, inferred)),
          "pq" -> (() => readParquetJava(file, conf, inferred)),
          // Misbehaving readers for the runner's own test (never asked for in a fuzz run).
          "selftest-hang" -> (() => { Thread.sleep(Long.MaxValue); "" }),
          "selftest-oom" -> (() => { val hold = new java.util.ArrayList[Array[Long]]()
            while (true) hold.add(new Array[Long](1 << 20)); "" }),
          "selftest-crash" -> (() => { Runtime.getRuntime.halt(7); "" })) if wanted(name)) {
        out.println(s"begin $name $f")
        val result =
          try read()
          catch { case e: Throwable if !e.isInstanceOf[OutOfMemoryError] => s"ERROR ${describe(e)}" }
        out.println(s"$name $f $result")
      }
    }
    out.flush()
  }

  private def metrics(): ScanMetrics = {
    def m() = new SQLMetric("sum", 0L)
    ScanMetrics(m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m(), m())
  }

  /** The rows `lm-wanted` asks for, by the file's row ordinal: one row in 53 and two runs, one across
    * the generated seeds' first row-group boundary (row 400). */
  def isWanted(ordinal: Long): Boolean = ordinal % 53 == 7 || (ordinal >= 395 && ordinal < 405) || (ordinal >= 530 && ordinal < 545)

  /** How far `lm-wanted` looks for wanted rows (a damaged footer may claim any row count). */
  private val MaxWantedOrdinal = 1L << 22

  /** A read's digests: every row, and with `whole` (a read of every row) the wanted ones among
    * them, by ordinal. */
  private final class Digests(whole: Boolean) {
    private val all = new CanonicalRows
    private val wanted = new CanonicalRows
    def add(row: String): Unit = { if (whole && isWanted(all.count)) wanted.add(row); all.add(row) }
    def addBatch(batch: ColumnarBatch, schema: StructType): Unit = {
      var i = 0
      while (i < batch.numRows()) { add(CanonicalRows.rowOf(batch, i, schema)); i += 1 }
    }
    def result: String = s"ROWS ${all.hex} ${all.count}" + (if (whole) s" ${wanted.hex} ${wanted.count}" else "")
  }

  private def readLm(file: File, conf: Configuration, inferred: Either[String, (MessageType, StructType)],
      wantedOnly: Boolean): String = {
    val size = file.length()
    val open = FooterReader.open(conf, new Path(file.getAbsolutePath), size, file.lastModified(), 0, size)
    val schema = inferred match {
      case Right((_, s)) => s
      case Left(why) => open.close(); return s"NOSCHEMA $why"
    }
    val settings = ScanSettings(schema, new StructType(), batchSize = batchSize, offHeapVectors = false,
      caseSensitive = false, datetimeRebaseModeInRead = "CORRECTED", int96RebaseModeInRead = "CORRECTED")
    val plan = try FileReadPlan.build(open.footer, schema, settings) catch { case e: Throwable => open.close(); throw e }
    plan match {
      case Left(why) => open.close(); s"FALLBACK ${oneLine(why)}"
      case Right(p) =>
        val wanted =
          if (!wantedOnly) null
          else {
            val claimed = open.footer.getBlocks.asScala.map(b => math.max(0L, b.getRowCount)).sum
            new WantedRows(Iterator.range(0, math.min(claimed, MaxWantedOrdinal).toInt).map(_.toLong).filter(isWanted).toArray)
          }
        val reader = try new FileBatchReader(open, p, InternalRow.empty, settings, metrics(), wanted)
        catch { case e: Throwable => open.close(); throw e }
        val rows = new Digests(whole = !wantedOnly)
        try while (reader.hasNext) rows.addBatch(reader.next(), schema)
        finally reader.close()
        rows.result
    }
  }

  private def readSpark(file: File, conf: Configuration, inferred: Either[String, (MessageType, StructType)]): String = {
    val schema = inferred match {
      case Right((_, s)) => s
      case Left(why) => return s"NOSCHEMA $why"
    }
    val c = new Configuration(conf)
    c.set(ParquetInputFormat.READ_SUPPORT_CLASS, classOf[ParquetReadSupport].getName)
    c.set(ParquetReadSupport.SPARK_ROW_REQUESTED_SCHEMA, schema.json)
    val reader = new VectorizedParquetRecordReader(null, "CORRECTED", "UTC", "CORRECTED", "UTC", false, batchSize)
    try {
      reader.initialize(new FileSplit(new Path(file.getAbsolutePath), 0, file.length(), Array.empty[String]),
        new TaskAttemptContextImpl(c, new TaskAttemptID()))
      reader.initBatch(new StructType(), InternalRow.empty)
      val rows = new Digests(whole = true)
      while (reader.nextBatch()) rows.addBatch(reader.resultBatch(), schema)
      rows.result
    } finally reader.close()
  }

  private def readParquetJava(file: File, conf: Configuration,
      inferred: Either[String, (MessageType, StructType)]): String = {
    val (parquet, schema) = inferred match {
      case Right(p) => p
      case Left(why) => return s"NOSCHEMA $why"
    }
    val reader = ParquetReader.builder(new GroupReadSupport(), new Path(file.getAbsolutePath)).withConf(conf)
      .withFileRange(0, file.length()).build()
    try {
      val rows = new Digests(whole = true)
      var g = reader.read()
      while (g != null) { rows.add(CanonicalRows.groupRow(g, parquet, schema)); g = reader.read() }
      rows.result
    } finally reader.close()
  }
}
