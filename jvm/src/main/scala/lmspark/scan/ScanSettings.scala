package lmspark.scan

import org.apache.spark.sql.execution.datasources.parquet.ParquetOptions
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

import lmspark.LmConf

import lmspark.predicate.Predicate

/**
 * Everything a task needs to read files for one scan, fixed on the driver at planning time.
 * Serializable; holds no Spark session.
 *
 * The datetime fields are Spark's read-side rules: rebase modes (the read options' or the
 * session's), `spark.sql.parquet.int96TimestampConversion` with the session time zone; the field-id
 * fields are `spark.sql.parquet.fieldId.read.enabled` / `.ignoreMissing`; `nullStructIfFieldsMissing` is
 * Spark 4.1+'s `spark.sql.legacy.parquet.returnNullStructIfAllFieldsMissing` (always true before). `predicate` is the scan's
 * translated `dataFilters` (over `requiredSchema`), used only to skip what cannot pass; the
 * pruning flags are lmspark's `spark.lmspark.pruning.*` / `pageIndex` switches; the pipeline fields are
 * the `spark.lmspark.lateMaterialization.*`, `dictionaryPredicates`, `predicateCache` and `selection.*`
 * flags; the
 * I/O fields are the `spark.lmspark.io.*` flags (`open`: how files are opened and fetched ahead).
 * `unreadFields` are the struct fields of nested columns the plan never reads (read as nulls).
 * `markColumn` is the required column a table format flags the rows it drops in
 * (`flagAllMarked`: every dropped row stays in the selection, flagged, as a top-k's reads need to
 * count rows by their split ordinal; otherwise most are left out), and `physicalSchema` the names and field ids its files use for the required columns
 * ([[lmspark.shim.TableFiles]]); names in messages and metrics stay `requiredSchema`'s.
 * `wholeChunks`: each row group's first stage fetches every column's whole chunk in one call (one
 * request per row group, as Spark's reader sends), whatever its selection leaves unread, so no later
 * stage sends another ([[RowGroupStages]]; a top-k's one pass on an object store).
 */
final case class ScanSettings(
    requiredSchema: StructType,
    partitionSchema: StructType,
    batchSize: Int,
    offHeapVectors: Boolean,
    caseSensitive: Boolean,
    datetimeRebaseModeInRead: String,
    int96RebaseModeInRead: String = "EXCEPTION",
    int96TimestampConversion: Boolean = false,
    sessionTimeZone: String = "UTC",
    useFieldId: Boolean = false,
    ignoreMissingFieldId: Boolean = false,
    nullStructIfFieldsMissing: Boolean = true,
    verifyChecksums: Boolean = false,
    preserveDictionary: Boolean = true,
    predicate: Predicate = Predicate.True,
    pruneStatistics: Boolean = true,
    pruneDictionary: Boolean = true,
    pruneBloomFilter: Boolean = true,
    pruneGuarantees: Boolean = true,
    usePageIndex: Boolean = true,
    maxCoalesceGap: Long = 1L << 20,
    open: lmspark.meta.OpenOptions = lmspark.meta.OpenOptions(),
    prefetchMaxRequests: Int = 64,
    singleStageMaxBytes: Long = 8L << 20,
    lateMaterialization: Boolean = true,
    dictionaryPredicates: Boolean = true,
    predicateCacheMaxBytes: Long = 64L << 20,
    denseFraction: Double = 0.5,
    scatteredFraction: Double = 0.25,
    narrowColumns: Int = 1,
    exploreEvery: Int = 8,
    selectionThreshold: Int = 11,
    selectionPolicy: String = "auto",
    unreadFields: Set[Seq[String]] = Set.empty,
    markColumn: Option[String] = None,
    flagAllMarked: Boolean = false,
    physicalSchema: Option[StructType] = None,
    wholeChunks: Boolean = false) {

  /** The schema a file's columns are found by ([[FileReadPlan.build]]): `requiredSchema`'s columns
    * under the names and field ids the table format's files use. */
  def fileSchema: StructType = physicalSchema.getOrElse(requiredSchema)

  /** These settings for a table format's files: its mark column, and its files' names and ids. */
  def withTable(table: lmspark.shim.TableFiles): ScanSettings = {
    val physical = table.fileSchema(requiredSchema)
    require(physical.length == requiredSchema.length, "a table format's file schema has the required columns")
    copy(markColumn = table.markColumn, physicalSchema = if (physical == requiredSchema) None else Some(physical))
  }

  /** How row selections are walked (`spark.lmspark.selection.policy` and `.threshold`), resolved per
    * row group by the output read loops and the filter-first pass. */
  @transient lazy val policy: lmspark.selection.SelectionPolicy =
    lmspark.selection.SelectionPolicy(selectionPolicy, selectionThreshold)

  /** The scan's column ids (requested columns, then struct fields), as predicates name them. */
  @transient lazy val columns: lmspark.predicate.ScanColumns = new lmspark.predicate.ScanColumns(requiredSchema)
}

object ScanSettings {
  /** A scan's settings from the session's SQL conf and the relation's read `options` (rebase modes). */
  def of(sqlConf: SQLConf, options: Map[String, String], requiredSchema: StructType, partitionSchema: StructType,
      predicate: Predicate, unreadFields: Set[Seq[String]]): ScanSettings = {
    val parquetOptions = new ParquetOptions(options, sqlConf)
    ScanSettings(
      requiredSchema = requiredSchema,
      partitionSchema = partitionSchema,
      batchSize = LmConf.BATCH_SIZE.get(sqlConf),
      offHeapVectors = sqlConf.offHeapColumnVectorEnabled,
      caseSensitive = sqlConf.caseSensitiveAnalysis,
      datetimeRebaseModeInRead = parquetOptions.datetimeRebaseModeInRead,
      int96RebaseModeInRead = parquetOptions.int96RebaseModeInRead,
      int96TimestampConversion = sqlConf.isParquetINT96TimestampConversion,
      sessionTimeZone = sqlConf.sessionLocalTimeZone,
      useFieldId = sqlConf.parquetFieldIdReadEnabled,
      ignoreMissingFieldId = sqlConf.ignoreMissingParquetFieldId,
      nullStructIfFieldsMissing = lmspark.shim.ParquetClip.nullStructIfFieldsMissing(sqlConf),
      verifyChecksums = LmConf.VERIFY_CHECKSUMS.get(sqlConf),
      preserveDictionary = LmConf.DICTIONARY_PRESERVE.get(sqlConf),
      predicate = predicate,
      pruneStatistics = LmConf.PRUNING_STATISTICS.get(sqlConf),
      pruneDictionary = LmConf.PRUNING_DICTIONARY.get(sqlConf),
      pruneBloomFilter = LmConf.PRUNING_BLOOM_FILTER.get(sqlConf),
      pruneGuarantees = LmConf.PRUNING_GUARANTEES.get(sqlConf),
      usePageIndex = LmConf.PAGE_INDEX.get(sqlConf),
      maxCoalesceGap = LmConf.IO_MAX_COALESCE_GAP.get(sqlConf).toLong,
      open = lmspark.meta.OpenOptions(LmConf.IO_VECTORED.get(sqlConf), LmConf.IO_PREFETCH_MAX_BYTES.get(sqlConf),
        LmConf.IO_FOOTER_TAIL_BYTES.get(sqlConf), LmConf.METADATA_CACHE_MAX_BYTES.get(sqlConf),
        LmConf.IO_MAX_REQUEST_BYTES.get(sqlConf), LmConf.METADATA_CACHE_DICTIONARY_MAX_BYTES.get(sqlConf)),
      prefetchMaxRequests = LmConf.IO_PREFETCH_MAX_REQUESTS.get(sqlConf),
      singleStageMaxBytes = LmConf.IO_SINGLE_STAGE_MAX_BYTES.get(sqlConf),
      lateMaterialization = LmConf.LATE_MATERIALIZATION.get(sqlConf),
      dictionaryPredicates = LmConf.DICTIONARY_PREDICATES.get(sqlConf),
      predicateCacheMaxBytes = LmConf.PREDICATE_CACHE_MAX_BYTES.get(sqlConf),
      denseFraction = LmConf.LM_DENSE_FRACTION.get(sqlConf),
      scatteredFraction = LmConf.LM_SCATTERED_FRACTION.get(sqlConf),
      narrowColumns = LmConf.LM_NARROW_COLUMNS.get(sqlConf),
      exploreEvery = LmConf.LM_EXPLORE_EVERY.get(sqlConf),
      selectionThreshold = LmConf.SELECTION_THRESHOLD.get(sqlConf),
      selectionPolicy = LmConf.SELECTION_POLICY.get(sqlConf),
      unreadFields = unreadFields)
  }
}
