package lmspark.plan

import org.apache.spark.SparkContext
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * The SQL metrics that `LmParquetScanExec` shows in the Spark UI, created on the driver. The
 * executor-side ones travel to tasks inside [[ScanMetrics]]; the driver-side file listing metrics
 * (number of files, their size, partitions) are Spark's own, taken from the scan we wrap.
 */
object LmMetrics {
  val NumOutputRows = "numOutputRows"
  val FilesRead = "lmFilesRead"
  val FilesFallback = "filesFallback"
  val FilesSkippedCorrupt = "filesSkippedCorrupt"
  val RowGroupsRead = "rowGroupsRead"
  val BytesRead = "lmBytesRead"
  val BytesDecompressed = "lmBytesDecompressed"
  val ScanTime = "lmScanTime"
  val RowGroupsTotal = "rowGroupsTotal"
  val PrunedByStatistics = "rowGroupsPrunedByStatistics"
  val PrunedByDictionary = "rowGroupsPrunedByDictionary"
  val PrunedByBloomFilter = "rowGroupsPrunedByBloomFilter"
  val PrunedByGuarantee = "rowGroupsPrunedByGuarantee"
  val PrunedByPageIndex = "rowGroupsPrunedByPageIndex"
  val PrunedByPredicateColumns = "rowGroupsPrunedByPredicateColumns"
  val RowGroupsDeleted = "rowGroupsDeleted"
  val RowsDeleted = "lmRowsDeleted"
  val PredicatePagesDecoded = "predicatePagesDecoded"
  val ConjunctsRemoved = "conjunctsRemovedByGuarantees"
  val PagesTotal = "pagesTotal"
  val PagesPruned = "pagesPruned"
  val PagesRead = "pagesRead"
  val PageIndexesIgnored = "pageIndexesIgnored"
  val StatisticsIgnored = "statisticsIgnored"
  val BloomFiltersIgnored = "bloomFiltersIgnored"
  val RowsScanned = "lmRowsScanned"
  val RowsMaterialized = "lmRowsMaterialized"
  val ValuesDecoded = "lmValuesDecoded"
  val DecodeTime = "lmDecodeTime"
  val PredicateTime = "lmPredicateTime"
  val CacheHits = "predicateCacheHits"
  val CacheEvictions = "predicateCacheEvictions"
  val RowGroupsLate = "rowGroupsFilteredFirst"
  val RowGroupsWhole = "rowGroupsDecodedWhole"
  val IoRequests = "ioRequests"
  val IoRoundTrips = "ioRoundTrips"
  val IoBytesRequested = "ioBytesRequested"
  val IoBytesUsed = "ioBytesUsed"
  val IoWaitTime = "ioWaitTime"
  val MetadataCacheHits = "metadataCacheHits"
  val MetadataCacheMisses = "metadataCacheMisses"
  val MetadataCacheEvictions = "metadataCacheEvictions"
  val SplitsPlanned = "lmSplitsPlanned"
  val SplitsPruned = "lmSplitsPruned"
  val FootersReadAtPlanning = "lmFootersReadAtPlanning"
  val SplitPruningTime = "lmSplitPruningTime"
  val TopKRowsRanked = "lmTopKRowsRanked"
  val TopKRowGroupsUnread = "lmTopKRowGroupsUnread"
  val TopKPassesRepeated = "lmTopKPassesRepeated"
  /** Prefix of the per-column "rows passing the filter on <column>" metrics. */
  val RowsPassingPrefix = "lmRowsPassing:"

  /** The scan's metrics; `filteredColumns` are the names of the columns lmspark filters on (one
    * "rows passing" metric each). */
  def create(sc: SparkContext, filteredColumns: Seq[String] = Nil): Map[String, SQLMetric] = Map(
    NumOutputRows -> SQLMetrics.createMetric(sc, "number of output rows"),
    TopKRowsRanked -> SQLMetrics.createMetric(sc, "rows ranked by their sort columns (top-k)"),
    TopKRowGroupsUnread -> SQLMetrics.createMetric(sc, "row groups the top-k left unread by statistics"),
    TopKPassesRepeated -> SQLMetrics.createMetric(sc, "top-k first passes read again in Spark's order (ties at the cut)"),
    FilesRead -> SQLMetrics.createMetric(sc, "files read by lmspark"),
    FilesFallback -> SQLMetrics.createMetric(sc, "files handed to Spark's reader"),
    FilesSkippedCorrupt -> SQLMetrics.createMetric(sc, "files skipped as corrupt (ignoreCorruptFiles)"),
    RowGroupsRead -> SQLMetrics.createMetric(sc, "row groups read"),
    BytesRead -> SQLMetrics.createSizeMetric(sc, "bytes read"),
    BytesDecompressed -> SQLMetrics.createSizeMetric(sc, "page bytes out of the codec (decompressed)"),
    ScanTime -> SQLMetrics.createNanoTimingMetric(sc, "lmspark scan time"),
    RowGroupsTotal -> SQLMetrics.createMetric(sc, "row groups in lmspark's splits"),
    PrunedByStatistics -> SQLMetrics.createMetric(sc, "row groups pruned by statistics"),
    PrunedByDictionary -> SQLMetrics.createMetric(sc, "row groups pruned by dictionary"),
    PrunedByBloomFilter -> SQLMetrics.createMetric(sc, "row groups pruned by bloom filter"),
    PrunedByGuarantee -> SQLMetrics.createMetric(sc, "row groups pruned by guarantee"),
    PrunedByPageIndex -> SQLMetrics.createMetric(sc, "row groups pruned by page index"),
    PrunedByPredicateColumns -> SQLMetrics.createMetric(sc, "row groups where no selected row passed the predicate columns"),
    RowGroupsDeleted -> SQLMetrics.createMetric(sc, "row groups whose rows are all deleted (deletion vectors)"),
    RowsDeleted -> SQLMetrics.createMetric(sc, "deleted rows (deletion vectors), left out or flagged"),
    PredicatePagesDecoded -> SQLMetrics.createMetric(sc, "data pages decoded to narrow page selections"),
    ConjunctsRemoved -> SQLMetrics.createMetric(sc, "conjuncts removed by guarantees"),
    PagesTotal -> SQLMetrics.createMetric(sc, "data pages in read row groups"),
    PagesPruned -> SQLMetrics.createMetric(sc, "data pages pruned by page index"),
    PagesRead -> SQLMetrics.createMetric(sc, "data pages read for the output"),
    PageIndexesIgnored -> SQLMetrics.createMetric(sc, "page indexes ignored as inconsistent"),
    StatisticsIgnored -> SQLMetrics.createMetric(sc, "chunk statistics ignored as unreliable"),
    BloomFiltersIgnored -> SQLMetrics.createMetric(sc, "bloom filters ignored as unusable"),
    RowsScanned -> SQLMetrics.createMetric(sc, "rows entering the filter-first pass"),
    RowsMaterialized -> SQLMetrics.createMetric(sc, "rows decoded for output-only columns"),
    ValuesDecoded -> SQLMetrics.createMetric(sc, "column values decoded (all columns)"),
    DecodeTime -> SQLMetrics.createNanoTimingMetric(sc, "lmspark decode time"),
    PredicateTime -> SQLMetrics.createNanoTimingMetric(sc, "lmspark predicate time"),
    CacheHits -> SQLMetrics.createMetric(sc, "predicate cache hits (rows reused)"),
    CacheEvictions -> SQLMetrics.createMetric(sc, "predicate cache evictions (columns)"),
    RowGroupsLate -> SQLMetrics.createMetric(sc, "row groups read filter-first"),
    RowGroupsWhole -> SQLMetrics.createMetric(sc, "row groups decoded whole"),
    IoRequests -> SQLMetrics.createMetric(sc, "read requests (ranges sent to the file system)"),
    IoRoundTrips -> SQLMetrics.createMetric(sc, "read round trips (calls waited on in turn)"),
    IoBytesRequested -> SQLMetrics.createSizeMetric(sc, "bytes requested"),
    IoBytesUsed -> SQLMetrics.createSizeMetric(sc, "bytes used of those requested"),
    IoWaitTime -> SQLMetrics.createNanoTimingMetric(sc, "time waiting for reads"),
    MetadataCacheHits -> SQLMetrics.createMetric(sc, "metadata cache hits (footers, indexes, filters, dictionaries)"),
    MetadataCacheMisses -> SQLMetrics.createMetric(sc, "metadata cache misses"),
    MetadataCacheEvictions -> SQLMetrics.createMetric(sc, "metadata cache evictions"),
    SplitsPlanned -> SQLMetrics.createMetric(sc, "file splits at planning"),
    SplitsPruned -> SQLMetrics.createMetric(sc, "file splits dropped at planning"),
    FootersReadAtPlanning -> SQLMetrics.createMetric(sc, "footers read at planning"),
    SplitPruningTime -> SQLMetrics.createNanoTimingMetric(sc, "split pruning time at planning")) ++
    filteredColumns.distinct.map(c => (RowsPassingPrefix + c) -> SQLMetrics.createMetric(sc, s"rows passing the filter on $c"))

  def scanMetrics(m: Map[String, SQLMetric]): ScanMetrics =
    scanMetricsBase(m).copy(
      bytesDecompressed = m(BytesDecompressed), rowsScanned = m(RowsScanned), rowsMaterialized = m(RowsMaterialized), valuesDecoded = m(ValuesDecoded),
      decodeTimeNs = m(DecodeTime), predicateTimeNs = m(PredicateTime), cacheHits = m(CacheHits),
      cacheEvictions = m(CacheEvictions), rowGroupsLate = m(RowGroupsLate), rowGroupsWhole = m(RowGroupsWhole),
      filesSkippedCorrupt = m(FilesSkippedCorrupt), rowGroupsDeleted = m(RowGroupsDeleted), rowsDeleted = m(RowsDeleted),
      ioRequests = m(IoRequests), ioRoundTrips = m(IoRoundTrips), ioBytesRequested = m(IoBytesRequested),
      ioBytesUsed = m(IoBytesUsed), ioWaitNs = m(IoWaitTime), metadataCacheHits = m(MetadataCacheHits),
      metadataCacheMisses = m(MetadataCacheMisses), metadataCacheEvictions = m(MetadataCacheEvictions),
      rowsPassing = m.collect { case (k, v) if k.startsWith(RowsPassingPrefix) => k.stripPrefix(RowsPassingPrefix) -> v })

  private def scanMetricsBase(m: Map[String, SQLMetric]): ScanMetrics =
    ScanMetrics(m(FilesRead), m(FilesFallback), m(RowGroupsRead), m(BytesRead), m(ScanTime),
      m(RowGroupsTotal), m(PrunedByStatistics), m(PrunedByDictionary), m(PrunedByBloomFilter),
      m(PrunedByGuarantee), m(PrunedByPageIndex), m(PrunedByPredicateColumns), m(PredicatePagesDecoded),
      m(ConjunctsRemoved), m(PagesTotal), m(PagesPruned),
      m(PagesRead), m(PageIndexesIgnored), m(StatisticsIgnored), m(BloomFiltersIgnored))
}

/** The executor-side metrics one scan's readers update. Serializable: SQLMetrics are accumulators. */
final case class ScanMetrics(
    filesRead: SQLMetric,
    filesFallback: SQLMetric,
    rowGroupsRead: SQLMetric,
    bytesRead: SQLMetric,
    scanTimeNs: SQLMetric,
    rowGroupsTotal: SQLMetric,
    prunedByStatistics: SQLMetric,
    prunedByDictionary: SQLMetric,
    prunedByBloomFilter: SQLMetric,
    prunedByGuarantee: SQLMetric,
    prunedByPageIndex: SQLMetric,
    prunedByPredicateColumns: SQLMetric,
    predicatePagesDecoded: SQLMetric,
    conjunctsRemoved: SQLMetric,
    pagesTotal: SQLMetric,
    pagesPruned: SQLMetric,
    pagesRead: SQLMetric,
    pageIndexesIgnored: SQLMetric,
    statisticsIgnored: SQLMetric,
    bloomFiltersIgnored: SQLMetric,
    /** Page bytes that came out of the codec (the data of pages read, dictionary pages included). */
    bytesDecompressed: SQLMetric = new SQLMetric("size"),
    rowsScanned: SQLMetric = new SQLMetric("sum"),
    rowsMaterialized: SQLMetric = new SQLMetric("sum"),
    valuesDecoded: SQLMetric = new SQLMetric("sum"),
    decodeTimeNs: SQLMetric = new SQLMetric("nsTiming"),
    predicateTimeNs: SQLMetric = new SQLMetric("nsTiming"),
    cacheHits: SQLMetric = new SQLMetric("sum"),
    cacheEvictions: SQLMetric = new SQLMetric("sum"),
    rowGroupsLate: SQLMetric = new SQLMetric("sum"),
    rowGroupsWhole: SQLMetric = new SQLMetric("sum"),
    /** Files whose read failed with an error Spark's `ignoreCorruptFiles` skips (the rest of the file
      * was skipped; rows it gave before the error were kept, as in Spark). */
    filesSkippedCorrupt: SQLMetric = new SQLMetric("sum"),
    /** Row groups skipped because the table format drops every row in them ([[lmspark.scan.RowMarks]]). */
    rowGroupsDeleted: SQLMetric = new SQLMetric("sum"),
    /** Rows of the row groups decided that the table format drops: left out of the selection, or
      * yielded flagged in its mark column for its own filter ([[lmspark.scan.RowGroupPruner]]). */
    rowsDeleted: SQLMetric = new SQLMetric("sum"),
    /** What the files' reads cost ([[lmspark.io.IoStats]]). */
    ioRequests: SQLMetric = new SQLMetric("sum"),
    ioRoundTrips: SQLMetric = new SQLMetric("sum"),
    ioBytesRequested: SQLMetric = new SQLMetric("size"),
    ioBytesUsed: SQLMetric = new SQLMetric("size"),
    ioWaitNs: SQLMetric = new SQLMetric("nsTiming"),
    /** The executor's [[lmspark.meta.MetadataCache]] as the scan's reads found it. */
    metadataCacheHits: SQLMetric = new SQLMetric("sum"),
    metadataCacheMisses: SQLMetric = new SQLMetric("sum"),
    metadataCacheEvictions: SQLMetric = new SQLMetric("sum"),
    /** By column name: rows passing the filter on that column in the filter-first pass. */
    rowsPassing: Map[String, SQLMetric] = Map.empty)
