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
  val RowGroupsRead = "rowGroupsRead"
  val BytesRead = "lmBytesRead"
  val ScanTime = "lmScanTime"
  val RowGroupsTotal = "rowGroupsTotal"
  val PrunedByStatistics = "rowGroupsPrunedByStatistics"
  val PrunedByDictionary = "rowGroupsPrunedByDictionary"
  val PrunedByBloomFilter = "rowGroupsPrunedByBloomFilter"
  val PrunedByGuarantee = "rowGroupsPrunedByGuarantee"
  val PrunedByPageIndex = "rowGroupsPrunedByPageIndex"
  val PrunedByPredicateColumns = "rowGroupsPrunedByPredicateColumns"
  val PredicatePagesDecoded = "predicatePagesDecoded"
  val ConjunctsRemoved = "conjunctsRemovedByGuarantees"
  val PagesTotal = "pagesTotal"
  val PagesPruned = "pagesPruned"
  val PagesRead = "pagesRead"
  val PageIndexesIgnored = "pageIndexesIgnored"
  val StatisticsIgnored = "statisticsIgnored"
  val BloomFiltersIgnored = "bloomFiltersIgnored"

  def create(sc: SparkContext): Map[String, SQLMetric] = Map(
    NumOutputRows -> SQLMetrics.createMetric(sc, "number of output rows"),
    FilesRead -> SQLMetrics.createMetric(sc, "files read by lmspark"),
    FilesFallback -> SQLMetrics.createMetric(sc, "files handed to Spark's reader"),
    RowGroupsRead -> SQLMetrics.createMetric(sc, "row groups read"),
    BytesRead -> SQLMetrics.createSizeMetric(sc, "bytes read"),
    ScanTime -> SQLMetrics.createNanoTimingMetric(sc, "lmspark scan time"),
    RowGroupsTotal -> SQLMetrics.createMetric(sc, "row groups in lmspark's splits"),
    PrunedByStatistics -> SQLMetrics.createMetric(sc, "row groups pruned by statistics"),
    PrunedByDictionary -> SQLMetrics.createMetric(sc, "row groups pruned by dictionary"),
    PrunedByBloomFilter -> SQLMetrics.createMetric(sc, "row groups pruned by bloom filter"),
    PrunedByGuarantee -> SQLMetrics.createMetric(sc, "row groups pruned by guarantee"),
    PrunedByPageIndex -> SQLMetrics.createMetric(sc, "row groups pruned by page index"),
    PrunedByPredicateColumns -> SQLMetrics.createMetric(sc, "row groups where no selected row passed the predicate columns"),
    PredicatePagesDecoded -> SQLMetrics.createMetric(sc, "data pages decoded to narrow page selections"),
    ConjunctsRemoved -> SQLMetrics.createMetric(sc, "conjuncts removed by guarantees"),
    PagesTotal -> SQLMetrics.createMetric(sc, "data pages in read row groups"),
    PagesPruned -> SQLMetrics.createMetric(sc, "data pages pruned by page index"),
    PagesRead -> SQLMetrics.createMetric(sc, "data pages read for the output"),
    PageIndexesIgnored -> SQLMetrics.createMetric(sc, "page indexes ignored as inconsistent"),
    StatisticsIgnored -> SQLMetrics.createMetric(sc, "chunk statistics ignored as unreliable"),
    BloomFiltersIgnored -> SQLMetrics.createMetric(sc, "bloom filters ignored as unusable"))

  def scanMetrics(m: Map[String, SQLMetric]): ScanMetrics =
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
    bloomFiltersIgnored: SQLMetric)
