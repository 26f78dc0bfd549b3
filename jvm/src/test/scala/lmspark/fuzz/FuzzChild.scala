package lmspark.fuzz

import java.io.File

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

import lmspark.meta.FooterReader
import lmspark.plan.ScanMetrics
import lmspark.scan.{FileBatchReader, FileReadPlan, ScanSettings}

/**
 * The child process of the fuzz test: reads each file named on its command line, one after
 * another, with three readers, and prints one line per reader per file as soon as that read ends:
 *
 *   - `lm`: lmspark's scan layer ([[FooterReader]], [[FileReadPlan]], [[FileBatchReader]]) on the
 *     whole file, every column, no filter, batch after batch, without a SparkSession;
 *   - `spark`: vanilla Spark's `VectorizedParquetRecordReader`, initialised as Spark's
 *     `ParquetFileFormat` does (a split over the whole file, `ParquetReadSupport`, requested schema);
 *   - `pq`: parquet-java's record reader with its example `Group` materializer.
 *
 * Arguments: `<readers>=<file>`, readers a comma-separated subset of `lm,spark,pq` (or of the
 * `selftest-*` readers that hang, exhaust the heap or halt the JVM, for the runner's own test).
 * Lines: `begin <reader> <file>` before a read, then `<reader> <file> ROWS <digest> <rows>`,
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
          "lm" -> (() => readLm(file, conf, inferred)),
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

  private def readLm(file: File, conf: Configuration, inferred: Either[String, (MessageType, StructType)]): String = {
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
        val reader = try new FileBatchReader(open, p, InternalRow.empty, settings, metrics())
        catch { case e: Throwable => open.close(); throw e }
        val rows = new CanonicalRows
        try while (reader.hasNext) rows.addBatch(reader.next(), schema)
        finally reader.close()
        s"ROWS ${rows.hex} ${rows.count}"
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
      val rows = new CanonicalRows
      while (reader.nextBatch()) rows.addBatch(reader.resultBatch(), schema)
      s"ROWS ${rows.hex} ${rows.count}"
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
      val rows = new CanonicalRows
      var g = reader.read()
      while (g != null) { rows.addGroup(g, parquet, schema); g = reader.read() }
      s"ROWS ${rows.hex} ${rows.count}"
    } finally reader.close()
  }
}
