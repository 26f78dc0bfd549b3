package lmspark.scan

import java.io.Closeable

import org.apache.hadoop.conf.Configuration
import org.apache.spark.internal.Logging
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.{FileSourceOptions, InternalRow}
import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.execution.datasources.{FileFormat, PartitionedFile}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType

import lmspark.LmConf
import lmspark.meta.FooterReader
import lmspark.plan.{FileFallbackReasons, ScanMetrics}
import lmspark.predicate.Predicate
import lmspark.shim.{SparkInternals, TableFiles}

/**
 * Spark's `ParquetFileFormat` with lmspark's per-file reader. It lives only inside
 * `LmParquetScanExec`, so Spark's file listing, splitting and partition handling stay Spark's.
 *
 * For each file split it reads the footer and builds a [[FileReadPlan]]. If lmspark can read the
 * file, [[FileBatchReader]] reads it; otherwise the file goes to Spark's own vectorized reader
 * (built without filter pushdown, so it does not trust file statistics either), and the
 * `filesFallback` metric counts it. [[ReaderSetups]] reuses Spark's reader and the broadcast
 * configuration across queries. Either way the query is answered. `predicate` is the scan's
 * translated `dataFilters`; lmspark's reader uses it only to skip row groups and pages that
 * provably hold no passing row. `unreadFields` are the nested columns' struct fields the plan never
 * reads ([[ScanSettings]]). `table` is what the table format adds ([[TableFiles]]): each file's
 * marked rows ([[RowMarks]]), its constant columns, and the reader of the files lmspark hands over
 * (the table format's own, e.g. Delta's).
 */
class LmParquetFileFormat(metrics: ScanMetrics, predicate: Predicate, fileFallbackReasons: FileFallbackReasons,
    unreadFields: Set[Seq[String]] = Set.empty, table: TableFiles = TableFiles.PlainParquet)
  extends ParquetFileFormat with Logging {

  override def toString: String = "Parquet (lmspark)"

  override def buildReaderWithPartitionValues(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      filters: Seq[Filter],
      options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] = {
    val read = buildSplitReader(sparkSession, dataSchema, partitionSchema, requiredSchema, options, hadoopConf,
      flagAllMarked = false)
    val scanMetrics = metrics
    val all = (file: PartitionedFile) => read(file, null, Predicate.True).batches.asInstanceOf[Iterator[InternalRow]]
    if (!new FileSourceOptions(CaseInsensitiveMap(options)).ignoreCorruptFiles) all
    else (file: PartitionedFile) => CorruptFileCounter.count(scanMetrics.filesSkippedCorrupt)(
      new CorruptFileCounter(all(file), scanMetrics.filesSkippedCorrupt).asInstanceOf[Iterator[InternalRow]])
  }

  /**
   * The per-split read: for a file lmspark can read, [[FileBatchReader]]'s batches (with
   * [[WantedRows]], only those rows); otherwise Spark's own vectorized reader's, which yields every
   * row of the split ([[SplitRead.everyRow]]). Built on the driver; the function runs in tasks.
   * With `flagAllMarked`, rows the table format drops are all yielded, flagged in its mark column
   * (which `requiredSchema` must hold), so that the batches hold every row of the split
   * ([[ScanSettings.flagAllMarked]]). A predicate given per split (`bound`, over `requiredSchema`;
   * only without wanted rows) is ANDed to the scan's: lmspark's reader then skips the row groups
   * and pages that provably hold no row passing it (and, reading filter-first, the rows that fail
   * it), so the batches hold only some of the split's rows, every row passing `bound` among them;
   * Spark's reader ignores it and yields every row. With `wholeChunks`, each row group read fetches
   * its columns' whole chunks in one request ([[ScanSettings.wholeChunks]]).
   */
  def buildSplitReader(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      options: Map[String, String],
      hadoopConf: Configuration,
      flagAllMarked: Boolean,
      wholeChunks: Boolean = false): (PartitionedFile, WantedRows, Predicate) => SplitRead = {
    // lmspark always returns batches, whatever the wrapped scan asked for (it asks for rows when
    // whole-stage codegen is off or the schema is wide), so Spark's reader must return batches too.
    val confEntries = ReaderSetups.entriesOf(hadoopConf)
    val sparkReader = ReaderSetups.sparkReader(sparkSession, table, dataSchema, partitionSchema, requiredSchema,
      options + (FileFormat.OPTION_RETURNING_BATCH -> "true"), hadoopConf, confEntries)

    val sqlConf = sparkSession.sessionState.conf
    val scanSettings = ScanSettings.of(sqlConf, options, requiredSchema, partitionSchema, predicate, unreadFields)
      .withTable(table).copy(flagAllMarked = flagAllMarked, wholeChunks = wholeChunks)
    val confBroadcast = ReaderSetups.hadoopConf(sparkSession, hadoopConf, confEntries)
    val scanMetrics = metrics
    val reasons = fileFallbackReasons
    val files = table

    (file: PartitionedFile, wanted: WantedRows, bound: Predicate) => {
      require(wanted == null || bound == Predicate.True, "a read of wanted rows takes no bound")
      val conf = confBroadcast.value.value
      val settings = if (bound == Predicate.True) scanSettings
        else scanSettings.copy(predicate = Predicate.and(Seq(scanSettings.predicate, bound)))
      val open = FooterReader.open(conf, file.toPath, file.fileSize, file.modificationTime,
        file.start, file.length, settings.open)
      val planned = try FileReadPlan.build(open.footer, settings.fileSchema, settings, open.unknownLogicalTypes)
      catch { case e: Throwable => open.close(); throw e }
      planned match {
        case Right(plan) =>
          scanMetrics.filesRead += 1
          val reader = try {
            val marks = files.markedRows(file, conf).map(new RowMarks(_)).orNull
            new FileBatchReader(open, plan, file.partitionValues, settings, scanMetrics, wanted, marks)
          } catch { case e: Throwable => open.close(); throw e }
          SplitRead(reader, everyRow = wanted == null && bound == Predicate.True, () => reader.fetchAhead())
        case Left(reason) =>
          open.close()
          logInfo(s"lmspark hands ${file.filePath} to Spark's reader: $reason")
          scanMetrics.filesFallback += 1
          reasons.add(reason)
          SplitRead(sparkReader(file), everyRow = true)
      }
    }
  }

  /**
   * Per split, its row groups as splits of their own with the checked statistics of the requested
   * column at `column` ([[SplitSlices.of]]; None when they cannot be had). Built on the driver with
   * the settings [[buildSplitReader]] uses for the same inputs; the function runs in tasks.
   */
  def buildSplitSlicer(
      sparkSession: SparkSession,
      partitionSchema: StructType,
      requiredSchema: StructType,
      options: Map[String, String],
      hadoopConf: Configuration,
      column: Int): PartitionedFile => Option[SplitSlices] = {
    val settings = ScanSettings.of(sparkSession.sessionState.conf, options, requiredSchema, partitionSchema, predicate,
      unreadFields).withTable(table)
    val confBroadcast = ReaderSetups.hadoopConf(sparkSession, hadoopConf, ReaderSetups.entriesOf(hadoopConf))
    (file: PartitionedFile) => SplitSlices.of(file, confBroadcast.value.value, settings, column)
  }
}

/** What reading one file split gives: its `ColumnarBatch`es (typed `AnyRef`: Spark's interface
  * types them `InternalRow`), and whether they hold every row of the split (else only the rows
  * asked for, in split order). `fetchAhead` starts fetching what its first row group will read
  * before the batches are asked for ([[FileBatchReader.fetchAhead]]; nothing for Spark's reader). */
final case class SplitRead(batches: Iterator[AnyRef], everyRow: Boolean, fetchAhead: () => Unit = () => ())

/**
 * With `ignoreCorruptFiles`, Spark's `FileScanRDD` itself skips the rest of a file whose reader
 * throws an error it deems corruption (rows the reader returned before the error are kept, and a
 * warning is logged); lmspark's reader only has to throw. This wrapper counts those files in the
 * `filesSkippedCorrupt` metric: it rethrows every error unchanged, after counting one that Spark
 * will skip the file for ([[SparkInternals.skippedAsCorrupt]]). A file's reader fails at most once.
 * Its elements are `ColumnarBatch`es (typed `InternalRow` by Spark's interface, as the readers'
 * iterators are), so it is typed `AnyRef`: no cast may touch them.
 */
private final class CorruptFileCounter(inner: Iterator[AnyRef], skipped: SQLMetric)
    extends Iterator[AnyRef] with Closeable {
  override def hasNext: Boolean = CorruptFileCounter.count(skipped)(inner.hasNext)
  override def next(): AnyRef = CorruptFileCounter.count(skipped)(inner.next())
  override def close(): Unit = inner match {
    case c: Closeable => c.close()
    case _ =>
  }
}

private object CorruptFileCounter {
  def count[T](skipped: SQLMetric)(body: => T): T =
    try body
    catch {
      case e: Throwable if SparkInternals.skippedAsCorrupt(e) =>
        skipped += 1
        throw e
    }
}
