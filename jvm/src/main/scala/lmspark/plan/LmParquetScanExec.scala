package lmspark.plan

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, AttributeSet, Descending, EqualTo, Expression, GenericInternalRow, Literal, NullsFirst, SortOrder}
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering
import org.apache.spark.sql.catalyst.plans.QueryPlan
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.catalyst.util.truncatedString
import org.apache.commons.lang3.StringUtils
import org.apache.spark.sql.execution.{ExecSubqueryExpression, ExplainUtils, FileSourceScanExec, LeafExecNode, SQLExecution}
import org.apache.spark.sql.execution.datasources.{FilePartition, HadoopFsRelation, PartitionedFile}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.types.{LongType, StructField, StructType}
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.util.collection.BitSet

import lmspark.LmConf
import lmspark.predicate.{CatalystTranslator, ColumnRef, Guarantees, Predicate, Translation, Values}
import lmspark.scan.{BatchRowWriter, LmParquetFileFormat, ScanSettings, SplitPacker, SplitPruner, WantedRows}
import lmspark.shim.{ConstantMetadata, DeltaTables, ScanExtras, ScanFields, SparkScanShim, TableFiles}

/**
 * lmspark's Parquet scan: a leaf node that produces `ColumnarBatch`es with lmspark's reader, or
 * `UnsafeRow`s written straight from those batches' vectors ([[BatchRowWriter]]), as
 * `spark.lmspark.output` says ([[columnarOutput]], fixed when the node is planned).
 *
 * It carries the same fields as the `FileSourceScanExec` it replaced, so that Spark's subquery,
 * dynamic-pruning and canonicalisation rules see its expressions. To execute, it rebuilds that
 * scan with [[LmParquetFileFormat]] in place of `ParquetFileFormat` ([[wrapped]]) and uses the
 * wrapped scan's input RDD: Spark's own partition pruning, file listing, splits, bucketing and
 * partition values stay exactly as Spark computed them; only the per-file reader is ours.
 *
 * Under `TakeOrderedAndProject` ([[TopKRule]]) it may yield, per task, only the task's top
 * `topKLimit` rows by `topKOrder` ([[TopKRead]]): rows, never batches. `topKNote` says why a
 * top-k above it is not read that way.
 *
 * Invariant: `relation.fileFormat` is Spark's plain `ParquetFileFormat`, or Delta's format of a scan
 * lmspark serves (`lmspark.shim.DeltaTables`; what Delta adds to reading its files, `tableFiles`,
 * goes to the reader); the lmspark format only ever lives inside [[wrapped]].
 */
case class LmParquetScanExec(
    @transient relation: HadoopFsRelation,
    output: Seq[Attribute],
    requiredSchema: StructType,
    partitionFilters: Seq[Expression],
    optionalBucketSet: Option[BitSet],
    optionalNumCoalescedBuckets: Option[Int],
    dataFilters: Seq[Expression],
    tableIdentifier: Option[TableIdentifier],
    disableBucketedScan: Boolean,
    extras: ScanExtras,
    unreadFields: Set[Seq[String]] = Set.empty,
    topKLimit: Int = 0,
    topKOrder: Seq[SortOrder] = Nil,
    topKNote: Option[String] = None)
  extends LeafExecNode {

  def fields: ScanFields = ScanFields(relation, output, requiredSchema, partitionFilters,
    optionalBucketSet, optionalNumCoalescedBuckets, dataFilters, tableIdentifier,
    disableBucketedScan, extras)

  /** The scan as Spark planned it (Spark's format); used for explain and canonicalisation. */
  @transient private lazy val original: FileSourceScanExec = SparkScanShim.scanOf(fields)

  @transient private lazy val lmMetrics: Map[String, SQLMetric] =
    LmMetrics.create(sparkContext, {
      val ids = new lmspark.predicate.ScanColumns(requiredSchema)
      Guarantees.columns(translation.predicate).toSeq.sorted.map(ids.name)
    })

  /** What the table format adds to reading its files (Delta's deletion vectors; nothing for plain Parquet). */
  @transient private lazy val tableFiles: TableFiles =
    if (DeltaTables.isDelta(relation.fileFormat)) DeltaTables.files(relation.fileFormat) else TableFiles.PlainParquet

  /** The data filters lmspark can evaluate against metadata; the others stay in Spark's Filter only. */
  @transient lazy val translation: Translation =
    CatalystTranslator.translate(dataFilters, requiredSchema, conf.caseSensitiveAnalysis,
      tableFiles.markColumn.toSet + ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME)

  /** Why this scan's tasks handed files to Spark's reader, gathered on the driver ([[LmReport]]). */
  @transient lazy val fileFallbackReasons: FileFallbackReasons = {
    val acc = new FileFallbackReasons
    sparkContext.register(acc, "lmspark file fallback reasons")
    acc
  }

  /**
   * The scan that executes: Spark's file listing and splits, lmspark's per-file reader. It lists
   * files with [[listingFilters]]; lmspark's reader takes its predicate from [[translation]], and
   * Spark's `Filter` above still applies every data filter.
   */
  @transient private lazy val wrapped: FileSourceScanExec = {
    val format = new LmParquetFileFormat(LmMetrics.scanMetrics(lmMetrics), translation.predicate, fileFallbackReasons,
      unreadFields, tableFiles)
    val lmRelation = relation.copy(fileFormat = format)(relation.sparkSession)
    SparkScanShim.scanOf(fields.copy(relation = lmRelation, dataFilters = listingFilters))
  }

  /**
   * The data filters the wrapped scan lists files with: all but the table format's filter on its
   * mark column ([[isMarkFilter]]: Delta's `is_row_deleted = 0`). That column is not in the table,
   * so no file's statistics can rule a file out by it, and the files listed are the same. Delta's
   * prepared file index lists again, in a Spark job over the table's log state, for filters other
   * than those its scan was prepared with, which never hold the mark filter (added after, at
   * physical planning); without it, the listing is the prepared one.
   */
  private[plan] def listingFilters: Seq[Expression] = dataFilters.filterNot(isMarkFilter)

  /** Whether [[splitPruning]] has been decided (EXPLAIN shows it then). */
  @transient @volatile private var splitPruningDecided = false

  /**
   * The splits dropped and packed at planning, decided once, when the scan first executes or
   * EXPLAIN first shows it. None: not tried (`spark.lmspark.pruning.splits.enabled` and
   * `spark.lmspark.splits.packing.enabled` both off, a bucketed scan, or splits that are not file
   * partitions).
   */
  @transient private lazy val splitPruning: Option[LmParquetScanExec.SplitPlan] = {
    val prune = LmConf.PRUNING_SPLITS.get(conf)
    val pack = LmConf.SPLITS_PACKING.get(conf)
    val outcome =
      if ((!prune && !pack) || wrapped.bucketedScan) None
      else {
        val partitions = wrapped.inputRDD.partitions.toSeq
        if (!partitions.forall(_.isInstanceOf[FilePartition])) None
        else {
          val settings = ScanSettings.of(conf, relation.options, requiredSchema, relation.partitionSchema,
            translation.predicate, unreadFields).withTable(tableFiles)
          val o = SplitPruner.prune(partitions.map(_.asInstanceOf[FilePartition]), settings,
            relation.sparkSession.sessionState.newHadoopConfWithOptions(relation.options), conf,
            LmConf.PRUNING_SPLITS_MAX_FOOTER_READS.get(conf), dropSplits = prune, weigh = pack)
          val packing = if (!pack) None else Some(SplitPacker.pack(o.kept, o.parents, o.weights.get, packingLimits))
          Some(LmParquetScanExec.SplitPlan(o, packing, wrapped.driverMetrics.map { case (k, m) => k -> m.value }.toMap))
        }
      }
    splitPruningDecided = true
    outcome
  }

  /** Spark's own sizing of file scan partitions ([[SplitPacker.Limits]]), as this session sets it. */
  private def packingLimits: SplitPacker.Limits = {
    val slots = Option(conf.getConfString("spark.sql.files.minPartitionNum", null))
      .orElse(Option(conf.getConfString("spark.sql.leafNodeDefaultParallelism", null)))
      .map(_.trim.toInt).getOrElse(sparkContext.defaultParallelism)
    SplitPacker.Limits(conf.filesMaxPartitionBytes, conf.filesOpenCostInBytes, math.max(1, slots))
  }

  /**
   * The batches this scan reads: the wrapped scan's, less the splits dropped at planning. Built
   * when the query runs, after Spark reset the plan's metrics; so it sets split pruning's driver
   * metrics here, and the wrapped scan's listing metrics again when EXPLAIN (which Spark renders as
   * a query starts) made its splits before that reset. The row groups of dropped splits count as
   * pruned by statistics (or guarantee), as a task would have counted them, and the footers it
   * found in the metadata cache or read into it as cache hits and misses.
   */
  @transient private lazy val scanRDD: RDD[ColumnarBatch] = {
    val files = wrapped.inputRDD.asInstanceOf[RDD[ColumnarBatch]]
    splitPruning match {
      case None => files
      case Some(LmParquetScanExec.SplitPlan(o, packing, listing)) =>
        listing.foreach { case (k, v) => if (wrapped.driverMetrics(k).value == 0L) wrapped.driverMetrics(k).set(v) }
        val pruned = if (LmConf.PRUNING_STATISTICS.get(conf)) LmMetrics.PrunedByStatistics else LmMetrics.PrunedByGuarantee
        val split = Seq(LmMetrics.SplitsPlanned -> o.splits.toLong, LmMetrics.SplitsPruned -> o.dropped.toLong,
          LmMetrics.FootersReadAtPlanning -> o.footersRead.toLong, LmMetrics.SplitPruningTime -> o.timeNs,
          LmMetrics.RowGroupsTotal -> o.rowGroupsDropped, pruned -> o.rowGroupsDropped,
          LmMetrics.MetadataCacheHits -> o.footersCached.toLong, LmMetrics.MetadataCacheMisses -> o.footersRead.toLong)
        split.foreach { case (k, v) => lmMetrics(k).add(v) }
        SQLMetrics.postDriverMetricUpdates(sparkContext, sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY),
          split.map(kv => lmMetrics(kv._1)) ++ wrapped.driverMetrics.values)
        packing match {
          case Some(Right(p)) => new KeptSplitsRDD(files, p.partitions, p.parents)
          case _ => if (o.dropped > 0) new KeptSplitsRDD(files, o.kept, o.parents.map(Seq(_))) else files
        }
    }
  }

  /** What split pruning decided for this scan, once it has run (for tests); None with split
    * pruning off. */
  private[lmspark] def splitPruningOutcome: Option[SplitPruner.Outcome] =
    if (!LmConf.PRUNING_SPLITS.get(conf)) None else splitPruning.map(_.pruned)

  /** What packing decided for this scan, once it has run (for tests): None with packing off. */
  private[lmspark] def splitPackingOutcome: Option[Either[String, SplitPacker.Packed]] = splitPruning.flatMap(_.packing)

  /** EXPLAIN's `LmSplitPruning`: the decision once made. A scan whose filters wait for a subquery
    * (dynamic partition pruning, a scalar subquery) cannot make its splits before the query runs,
    * so it decides at execution. */
  private def splitPruningNote: Option[String] =
    if (!LmConf.PRUNING_SPLITS.get(conf)) None else splitPlanNote(_.pruned.decision)

  /** EXPLAIN's `LmSplitPacking`, decided with [[splitPruningNote]]. */
  private def splitPackingNote: Option[String] =
    if (!LmConf.SPLITS_PACKING.get(conf)) None
    else splitPlanNote(_.packing.fold("off")(_.fold(identity, _.decision)))

  private def splitPlanNote(say: LmParquetScanExec.SplitPlan => String): Option[String] =
    if (splitPruningDecided || !(partitionFilters ++ dataFilters).exists(ExecSubqueryExpression.hasSubquery))
      Some(try splitPruning.fold("not tried (bucketed scan)")(say)
        catch { case scala.util.control.NonFatal(e) => s"decided at execution (making the splits failed: $e)" })
    else Some("decided at execution (the filters wait for a subquery)")

  override def nodeName: String = "LmParquetScan"

  override lazy val metrics: Map[String, SQLMetric] = lmMetrics ++ wrapped.driverMetrics

  /**
   * Whether this node produces batches (else rows), decided at planning from
   * `spark.lmspark.output`: `columnar`, `row`, or for `auto` what Spark's own scan would do
   * (batches only with whole-stage codegen on and at most `spark.sql.codegen.maxFields` fields).
   * Rows need every column type to be writable by [[BatchRowWriter]]; otherwise batches.
   */
  @transient private lazy val columnarOutput: Boolean = LmConf.OUTPUT.get(conf) match {
    case "columnar" => true
    case "row" => !BatchRowWriter.supports(schema)
    case _ => original.supportsColumnar || !BatchRowWriter.supports(schema)
  }

  /** Whether this scan yields each task's top-k only ([[TopKRead]]). */
  def topK: Boolean = topKOrder.nonEmpty

  override def supportsColumnar: Boolean = columnarOutput && !topK

  override def vectorTypes: Option[Seq[String]] = if (supportsColumnar) wrapped.vectorTypes else None

  override def outputPartitioning: Partitioning = original.outputPartitioning

  override def outputOrdering: Seq[SortOrder] = original.outputOrdering

  /** Spark's scan metadata for EXPLAIN (`Batched` as this node's output mode), plus what it
    * produces (`LmOutput`), what lmspark prunes with (`LmPruningPredicate`) and the data filters
    * it cannot use (`LmFiltersNotPruned`). */
  private def explainMetadata: Seq[(String, String)] = {
    val lm = Seq("LmOutput" -> (if (supportsColumnar) "columnar" else "row"),
      "LmPruningPredicate" -> translation.predicate.toString) ++
      splitPruningNote.map("LmSplitPruning" -> _).toSeq ++ splitPackingNote.map("LmSplitPacking" -> _).toSeq ++
      (if (topK) Seq("LmTopK" -> (s"each task's top $topKLimit rows by ${topKOrder.map(_.sql).mkString(", ")}, " +
        (if (topKOnePass) "in one pass (object store: each row group's columns in one request, the other columns " +
          "decoded only for rows that may enter it)"
         else "the other columns read for those rows only")))
       else topKNote.map(why => "LmTopK" -> s"not used: $why").toSeq) ++
      (if (unreadFields.isEmpty) Nil
       else Seq("LmUnreadFields" -> unreadFields.toSeq.map(_.mkString(".")).sorted.mkString("[", ", ", "]"))) ++
      (if (translation.untranslated.isEmpty) Nil
       else Seq("LmFiltersNotPruned" -> translation.untranslated.map(_.sql).mkString("[", ", ", "]")))
    (original.metadata + ("Batched" -> supportsColumnar.toString) ++ lm).toSeq.sortBy(_._1)
  }

  override def simpleString(maxFields: Int): String = {
    val meta = explainMetadata.map { case (k, v) =>
      s"$k: ${StringUtils.abbreviate(redact(v), maxMetadataValueLength)}"
    }
    s"$nodeName ${truncatedString(output, "[", ",", "]", maxFields)} " +
      truncatedString(meta, ", ", maxFields)
  }

  override def verboseStringWithOperatorId(): String = {
    val meta = explainMetadata.filter(_._2 != "[]").map { case (k, v) =>
      s"$k: ${redact(v)}"
    }
    s"""|$formattedNodeName
        |${ExplainUtils.generateFieldString("Output", output)}
        |${meta.mkString("\n")}
        |""".stripMargin
  }

  /** Rows: every batch of the wrapped scan (lmspark's or, for a file it hands over, Spark's
    * reader) written row by row into one reused `UnsafeRow` per task. Spark calls it when the
    * node was planned for rows; it is valid in either mode. */
  protected override def doExecute(): RDD[InternalRow] = if (topK) topKRows() else {
    val numOutputRows = longMetric(LmMetrics.NumOutputRows)
    val types = schema.fields.map(_.dataType)
    scanRDD.mapPartitions({ batches =>
      val writer = new BatchRowWriter(types)
      batches.flatMap { batch =>
        numOutputRows += batch.numRows()
        writer.rows(batch)
      }
    }, preservesPartitioning = true)
  }

  protected override def doExecuteColumnar(): RDD[ColumnarBatch] = {
    val numOutputRows = longMetric(LmMetrics.NumOutputRows)
    scanRDD.mapPartitions({ batches =>
      batches.map { batch =>
        numOutputRows += batch.numRows()
        batch
      }
    }, preservesPartitioning = true)
  }

  /** The table format's mark column among the scan's output ([[TableFiles.markColumn]]: Delta's
    * is-deleted column), if the scan reads it. */
  def markAttribute: Option[Attribute] =
    tableFiles.markColumn.flatMap(name => output.take(requiredSchema.length).find(_.name == name))

  /** Whether `e` is the table format's filter that drops its flagged rows: `mark = 0` on
    * [[markAttribute]] ([[LmParquetScanExec.markFilterColumn]]). */
  def isMarkFilter(e: Expression): Boolean =
    markAttribute.exists(m => LmParquetScanExec.markFilterColumn(e).exists(_.exprId == m.exprId))

  /** The file-constant metadata columns of the output (`_metadata.file_path` and the like), which
    * Spark's file scan appends after the data and partition columns. */
  def constantMetadataColumns: Seq[Attribute] = output.drop(requiredSchema.length + relation.partitionSchema.length)

  /** The file-constant metadata columns Spark's own scan of these fields appends. */
  def sparkConstantMetadataColumns: Seq[Attribute] = original.fileConstantMetadataColumns

  private def TopKRowIndex: String = ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME

  /** The requested columns (indexes) the top-k's pass 1 reads, those the sort order uses and the
    * mark column, with their schema. */
  private def topKRanked: (IndexedSeq[Int], StructType) = {
    val used = AttributeSet(topKOrder.flatMap(_.references) ++ markAttribute)
    val ranked = requiredSchema.indices.filter(i => used.contains(output(i)))
    (ranked, StructType(ranked.map(requiredSchema(_))))
  }

  /** The first sort key's index among [[topKRanked]]'s columns, when it is a column lmspark has
    * statistics for. */
  private def topKFirstKey: Option[Int] = topKOrder.headOption.map(_.child) match {
    case Some(a: Attribute) =>
      val (ranked, rankedSchema) = topKRanked
      val k = ranked.indexWhere(i => output(i).exprId == a.exprId)
      if (k < 0 || !Values.supported(rankedSchema(k).dataType)) None else Some(k)
    case _ => None
  }

  /** Whether pass 1 may read a row group of `schema`'s columns with a bound on the first key
    * (spark.lmspark.topK.pagePruning.enabled; not when a sort column is the row index itself). */
  private def topKBounded(schema: StructType): Boolean =
    LmConf.TOP_K_PAGE_PRUNING.get(conf) && !schema.fieldNames.contains(TopKRowIndex)

  /** Whether the top-k reads in one pass ([[TopKRead.OnePass]]): on an object store, where row groups
    * read one by one for pass 1 alone would each wait a round trip (measured: topn_star at SF1
    * through the simulated store, 0.59 s split by split, 1.25 s row group by row group) and pass 2
    * would send more requests; with a first key with statistics, every output column readable with
    * a bound, and the metadata cache on (each row group read alone opens the file again: only with
    * the cache do they share its footer and page indexes instead of reading them again). */
  private[lmspark] def topKOnePass: Boolean = TopKRule.farScheme(this).isDefined && topKFirstKey.isDefined &&
    topKBounded(requiredSchema) && LmConf.METADATA_CACHE_MAX_BYTES.get(conf) > 0

  /** Each task's top-k rows ([[TopKRead]]), over the wrapped scan's splits (none pruned at
    * planning: the only filter a top-k scan has is the table format's on its mark column). Pass 1
    * reads the columns the sort order uses, the mark column, and the partition columns. */
  private def topKRows(): RDD[InternalRow] = {
    val numOutputRows = longMetric(LmMetrics.NumOutputRows)
    val rankedRows = longMetric(LmMetrics.TopKRowsRanked)
    val format = wrapped.relation.fileFormat.asInstanceOf[LmParquetFileFormat]
    val session = relation.sparkSession
    val hadoopConf = session.sessionState.newHadoopConfWithOptions(relation.options)
    def reader(schema: StructType, wholeChunks: Boolean = false) = format.buildSplitReader(session, relation.dataSchema,
      relation.partitionSchema, schema, relation.options, hadoopConf, flagAllMarked = true, wholeChunks)
    def unbounded(schema: StructType) = {
      val read = reader(schema)
      (file: PartitionedFile, wanted: WantedRows) => read(file, wanted, Predicate.True)
    }
    val (ranked, rankedSchema) = topKRanked
    val partitionAttrs = output.slice(requiredSchema.length, requiredSchema.length + relation.partitionSchema.length)
    val rankedAttrs = ranked.map(output(_)) ++ partitionAttrs
    val position = AttributeReference("lm_topk_position", LongType, nullable = false)()
    def markIn(attrs: Seq[Attribute]): Int = markAttribute.fold(-1)(m => attrs.indexWhere(_.exprId == m.exprId))
    val readAttrs = output.take(requiredSchema.length) ++ partitionAttrs
    val constants = constantMetadataColumns match {
      case Nil => TopKRead.Constants.None
      case columns =>
        val extractors = relation.fileFormat.fileConstantMetadataExtractors
        val fields = columns.map(a => a.name -> a.dataType)
        TopKRead.Constants(fields.map(_._2), (file: PartitionedFile) =>
          new GenericInternalRow(fields.map { case (n, t) => ConstantMetadata.value(n, file, extractors, t) }.toArray))
    }
    // The first sort key, when it is a column of the first pass lmspark has statistics for; on an
    // object store only for the one pass, whose reads (and so the key's bounds) are over every
    // requested column.
    val onePass = topKOnePass
    val key = topKFirstKey.filter(_ => TopKRule.farScheme(this).isEmpty || onePass).map { k =>
      val (schema, column) = if (onePass) (requiredSchema, ranked(k)) else (rankedSchema, k)
      val field = schema(column)
      RankedKey(format.buildSplitSlicer(session, relation.partitionSchema, schema, relation.options,
        hadoopConf, column), ColumnRef(column, field.name, field.dataType), k, topKOrder.head.direction == Descending,
        topKOrder.head.nullOrdering == NullsFirst)
    }
    // A read of a row group with a bound: `schema`'s columns and the row index (the positions of
    // rows read when rows are left out).
    def boundedOf(schema: StructType, wholeChunks: Boolean): TopKRead.Bounded = {
      val read = reader(schema.add(StructField(TopKRowIndex, LongType, nullable = false)), wholeChunks)
      TopKRead.Bounded((file: PartitionedFile, bound: Predicate) => read(file, null, bound), schema.length)
    }
    val byStats = key.map { k =>
      if (onePass) TopKRead.ByStatistics(k, None, Some(TopKRead.OnePass(boundedOf(requiredSchema, wholeChunks = true),
        (ranked ++ (requiredSchema.length until requiredSchema.length + relation.partitionSchema.length)).toIndexedSeq)))
      else TopKRead.ByStatistics(k, if (topKBounded(rankedSchema)) Some(boundedOf(rankedSchema, wholeChunks = false)) else None)
    }
    val read = new TopKRead(TopKRead.Pass(unbounded(rankedSchema), rankedAttrs.map(_.dataType), markIn(rankedAttrs)),
      TopKRead.Pass(unbounded(requiredSchema), readAttrs.map(_.dataType), markIn(readAttrs)), constants,
      new LazilyGeneratedOrdering(topKOrder, rankedAttrs :+ position), topKLimit, byStats)
    val unread = longMetric(LmMetrics.TopKRowGroupsUnread)
    val repeated = longMetric(LmMetrics.TopKPassesRepeated)
    val files = wrapped.inputRDD
    new TopKScanRDD(files, (p: FilePartition) => {
      val rows = read.rows(p.files.toSeq, rankedRows, unread, repeated)
      rows.map { r => numOutputRows += 1; r }
    })
  }

  /** Spark's canonical scan, with the fields left unread and the top-k: a scan that reads fewer
    * fields, or yields only a top-k, is not the same scan (an exchange over it must not be reused
    * for a consumer that reads more). */
  override protected def doCanonicalize(): LmParquetScanExec =
    LmParquetScanExec(SparkScanShim.fieldsOf(original.canonicalized.asInstanceOf[FileSourceScanExec]), unreadFields)
      .copy(topKLimit = topKLimit, topKOrder = topKOrder.map(QueryPlan.normalizeExpressions(_, output)))

  private def maxMetadataValueLength: Int = conf.maxMetadataStringLength

  private def redact(text: String): String =
    conf.stringRedactionPattern.fold(text)(_.replaceAllIn(text, "*********(redacted)"))
}

object LmParquetScanExec {
  /** What planning did to a scan's splits: the splits dropped ([[SplitPruner]]), the packing of
    * those left ([[SplitPacker]]: the partitions, or why Spark's stay; None with packing off), and
    * the values of the wrapped scan's listing metrics once its splits were made (the scan restores
    * them when it runs). */
  private final case class SplitPlan(pruned: SplitPruner.Outcome, packing: Option[Either[String, SplitPacker.Packed]],
      listing: Map[String, Long])

  def apply(f: ScanFields, unreadFields: Set[Seq[String]]): LmParquetScanExec = LmParquetScanExec(f.relation, f.output,
    f.requiredSchema, f.partitionFilters, f.optionalBucketSet, f.optionalNumCoalescedBuckets,
    f.dataFilters, f.tableIdentifier, f.disableBucketedScan, f.extras, unreadFields)

  def apply(f: ScanFields): LmParquetScanExec = apply(f, Set.empty[Seq[String]])

  /** The column `condition` keeps the rows of where it is 0 (`c = 0`, the shape of Delta's filter on
    * its mark column), if it has that shape. */
  def markFilterColumn(condition: Expression): Option[Attribute] = condition match {
    case EqualTo(a: Attribute, Literal(v, _)) if isZero(v) => Some(a)
    case EqualTo(Literal(v, _), a: Attribute) if isZero(v) => Some(a)
    case _ => None
  }

  private def isZero(v: Any): Boolean = v match {
    case b: java.lang.Byte => b.byteValue == 0
    case i: java.lang.Integer => i.intValue == 0
    case _ => false
  }
}
