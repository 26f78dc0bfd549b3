package lmspark

import org.apache.spark.sql.internal.SQLConf

/**
 * Every `spark.lmspark.*` flag, with its default and documentation. This object is the single
 * source: the README table and `python/lmspark/conf.py` are generated from it (`LmConfDocs`), and
 * a test fails when they drift.
 *
 * Naming: `spark.lmspark.<area>.<camelCase>`; feature switches end in `.enabled` (verifyChecksums is a
 * check, not a feature, and keeps its documented name). Every entry is read from
 * the session's SQL conf at planning time, so it can be changed per session at run time with
 * `spark.conf.set`.
 */
object LmConf {

  /** One flag: its key, default, doc, how to parse it and what a valid value is (for the error). */
  final case class Entry[T](key: String, default: T, doc: String, category: String, expectation: String)(
      val parse: String => T) {
    def defaultString: String = default.toString

    /** The value in the given SQL conf, or the default. */
    def get(conf: SQLConf): T = {
      val raw = conf.getConfString(key, null)
      if (raw == null) default
      else {
        try parse(raw.trim)
        catch {
          case e: IllegalArgumentException =>
            throw new IllegalArgumentException(s"Invalid value '$raw' for $key: ${e.getMessage}", e)
        }
      }
    }
  }

  private val all = scala.collection.mutable.ArrayBuffer.empty[Entry[_]]

  /** Keeps the entry and registers it with Spark's SQL conf, which then checks values when they are
    * set and lists the flag in `SET -v`. */
  private def register[T](e: Entry[T]): Entry[T] = {
    all += e
    val valid = (v: String) => scala.util.Try(e.parse(v.trim)).isSuccess
    org.apache.spark.sql.lmspark.LmConfRegistry.register(e.key, e.doc, SparkLineGate.version(), e.defaultString, valid, e.expectation)
    e
  }

  /** Registers every flag (by initialising this object); called when the extension is injected. */
  def registerAll(): Unit = ()

  /** The `spark.lmspark.*` keys set in `conf` that are no flag, each with the closest flag's key. */
  def unknownKeys(conf: SQLConf): Seq[(String, String)] = {
    val known = all.map(_.key).toSet
    conf.getAllConfs.keys.toSeq.sorted
      .filter(k => k.startsWith("spark.lmspark.") && !known(k))
      .map(k => k -> all.map(_.key).minBy(c => editDistance(c.toLowerCase(java.util.Locale.ROOT), k.toLowerCase(java.util.Locale.ROOT))))
  }

  private def editDistance(a: String, b: String): Int = {
    val d = Array.tabulate(a.length + 1, b.length + 1)((i, j) => if (i == 0) j else if (j == 0) i else 0)
    for (i <- 1 to a.length; j <- 1 to b.length)
      d(i)(j) = math.min(math.min(d(i - 1)(j) + 1, d(i)(j - 1) + 1), d(i - 1)(j - 1) + (if (a(i - 1) == b(j - 1)) 0 else 1))
    d(a.length)(b.length)
  }

  private def bool(key: String, default: Boolean, category: String, doc: String): Entry[Boolean] =
    register(Entry(key, default, doc, category, "true or false")(s => s.toLowerCase match {
      case "true" => true
      case "false" => false
      case _ => throw new IllegalArgumentException("expected true or false")
    }))

  private def int(key: String, default: Int, category: String, doc: String, min: Int): Entry[Int] =
    register(Entry(key, default, doc, category, s"an integer of at least $min")(s => {
      val v = try s.toInt catch { case _: NumberFormatException => throw new IllegalArgumentException("expected an integer") }
      if (v < min) throw new IllegalArgumentException(s"must be at least $min")
      v
    }))

  /** A fraction in [0, 1]. */
  private def fraction(key: String, default: Double, category: String, doc: String): Entry[Double] =
    register(Entry(key, default, doc, category, "a number between 0 and 1")(s => {
      val v = try s.toDouble catch { case _: NumberFormatException => throw new IllegalArgumentException("expected a number") }
      if (!(v >= 0.0 && v <= 1.0)) throw new IllegalArgumentException("must be between 0 and 1")
      v
    }))

  /** A size in bytes, as Spark's own size flags take it: a plain number of bytes, or one with a unit
    * (`64k`, `8m`, `1g`; Spark's `JavaUtils.byteStringAsBytes`). */
  private def bytes(key: String, default: Long, category: String, doc: String, min: Long): Entry[Long] =
    register(Entry(key, default, doc, category, s"a size in bytes of at least $min (a number, or with a unit: 64k, 8m, 1g)")(
      parseBytes(_, min, Long.MaxValue)))

  /** As [[bytes]], for sizes an array index holds (at most 1 GiB). */
  private def intBytes(key: String, default: Int, category: String, doc: String, min: Int): Entry[Int] =
    register(Entry(key, default, doc, category, s"a size in bytes between $min and 1g (a number, or with a unit: 64k, 8m)")(
      parseBytes(_, min, 1L << 30).toInt))

  private def parseBytes(s: String, min: Long, max: Long): Long = {
    val v = try org.apache.spark.network.util.JavaUtils.byteStringAsBytes(s)
    catch { case e: NumberFormatException => throw new IllegalArgumentException(s"expected a size in bytes (${e.getMessage})") }
    if (v < min) throw new IllegalArgumentException(s"must be at least $min bytes")
    if (v > max) throw new IllegalArgumentException("must be at most 1g")
    v
  }

  /** A string that must be one of `choices` (case-insensitive); the value is kept in lower case. */
  private def choice(key: String, default: String, category: String, doc: String, choices: Seq[String]): Entry[String] =
    register(Entry(key, default, doc, category, s"one of ${choices.mkString(", ")}")(s => {
      val v = s.toLowerCase(java.util.Locale.ROOT)
      if (!choices.contains(v)) throw new IllegalArgumentException(s"expected one of ${choices.mkString(", ")}")
      v
    }))

  val ENABLED: Entry[Boolean] = bool("spark.lmspark.enabled", default = true, "scan",
    "Replace Spark's Parquet scan with lmspark's scan. Can be switched per session at run time; " +
      "when false, queries are planned exactly as vanilla Spark plans them.")

  val BATCH_SIZE: Entry[Int] = int("spark.lmspark.batchSize", default = 4096, "scan",
    "Rows per ColumnarBatch produced by lmspark's reader.", min = 1)

  val SELECTION_POLICY: Entry[String] = choice("spark.lmspark.selection.policy", default = "auto", "selection",
    "How a row selection is walked by column readers: `selectors` (skip n / read n calls), `mask` (decode " +
      "covered rows, keep the selected ones) or `auto` (a mask when the selection's mean run length is below " +
      "spark.lmspark.selection.threshold). The output columns and the filter-first pass both follow it (a mask " +
      "there decodes the row group's rows and drops those already out); nested columns read and skip a mask's " +
      "runs. Pages removed by page pruning are always skipped.",
    choices = Seq("auto", "selectors", "mask"))

  val SELECTION_THRESHOLD: Entry[Int] = int("spark.lmspark.selection.threshold", default = 11, "selection",
    "Mean run length (rows per run of selected or skipped rows) below which the `auto` selection policy " +
      "uses a mask; 0 never does. The default is where the two strategies' costs cross on our PLAIN and " +
      "RLE_DICTIONARY decoders (`make bench-selection`, benchmarks/selection/).", min = 0)

  val IO_MAX_COALESCE_GAP: Entry[Int] = intBytes("spark.lmspark.io.maxCoalesceGap", default = 1 << 20, "io",
    "Largest gap in bytes between two needed byte ranges (pages of a chunk, or the chunks, pages and " +
      "metadata one read stage fetches) that is read through rather than split into two requests. A stage " +
      "fetched in one vectored read, whose ranges go out in parallel, reads through at most 128 KiB. On an " +
      "object store, a row group read filter-first whose other columns' candidate pages weigh at most this " +
      "many bytes fetches them with its filtered columns (one round trip instead of two).", min = 0)

  val IO_VECTORED: Entry[Boolean] = bool("spark.lmspark.io.vectored.enabled", default = true, "io",
    "Fetch each read stage's byte ranges (the chunks or surviving pages of the columns a stage reads, the " +
      "page indexes, the dictionary pages pruning reads) in one Hadoop vectored read, which the file " +
      "system merges and runs in parallel (S3A, ABFS, GCS, local NIO). Off, or on a stream without vectored " +
      "reads (Spark 3.5's Hadoop), each merged range is one positioned read.")

  val IO_PREFETCH_MAX_BYTES: Entry[Long] = bytes("spark.lmspark.io.prefetch.maxBytes", default = 64L << 20, "io",
    "Most bytes a task holds fetched ahead of need (a stage's ranges, and the first stages of the next " +
      "four row groups to read while the current one decodes). Ranges past it are read when needed; 0 " +
      "fetches nothing ahead. " +
      "Files on the local file system (file:) are never fetched ahead.", min = 0L)

  val IO_PREFETCH_MAX_REQUESTS: Entry[Int] = int("spark.lmspark.io.prefetch.maxRequests", default = 64, "io",
    "Most requests (merged ranges) fetched for each of the next row groups while the current one " +
      "decodes; a row group needing more is fetched when it is reached, and none after it ahead. 0 turns " +
      "that prefetch off.", min = 0)

  val IO_FOOTER_TAIL_BYTES: Entry[Int] = intBytes("spark.lmspark.io.footerTailBytes", default = 256 << 10, "io",
    "Bytes read from a file's end in one request to get its footer; a longer footer takes one more.", min = 8)

  val IO_SINGLE_STAGE_MAX_BYTES: Entry[Long] = bytes("spark.lmspark.io.singleStageMaxBytes", default = 8L << 20, "io",
    "A row group read filter-first whose candidate pages (after page-index pruning) weigh at most this " +
      "many bytes over all its columns is fetched in one round trip, not one for the filtered columns and " +
      "one for the rest, when the page index left few candidate pages. A row group whose predecessor's " +
      "passing rows needed every page of its other columns is fetched in one round trip too, when it fits " +
      "a fifth of spark.lmspark.io.prefetch.maxBytes. 0 always fetches by stage.", min = 0L)

  val IO_MAX_REQUEST_BYTES: Entry[Long] = bytes("spark.lmspark.io.maxRequestBytes", default = 8L << 20, "io",
    "Largest single read request: a fetched range longer than this (whole row groups read ahead, large " +
      "chunks) is cut into requests of at most this size, which the file system runs side by side (S3A " +
      "runs up to fs.s3a.vectored.active.ranged.reads at once).", min = 1L << 16)

  val METADATA_CACHE_MAX_BYTES: Entry[Long] = bytes("spark.lmspark.metadataCache.maxBytes", default = 128L << 20, "io",
    "Bytes (estimated heap) of parsed metadata each executor keeps across tasks and queries: footers, page " +
      "indexes (with their page statistics checked and converted) and bloom filters, keyed by file path, " +
      "length and modification time (a rewritten file is read anew), least recently used dropped first. " +
      "A repeated query reads none of it again. 0 turns the cache off, and with it the dictionaries' " +
      "(spark.lmspark.metadataCache.dictionaryMaxBytes).", min = 0L)

  val METADATA_CACHE_DICTIONARY_MAX_BYTES: Entry[Long] = register(Entry("spark.lmspark.metadataCache.dictionaryMaxBytes",
    -1L, "Bytes (estimated heap) of decoded dictionary pages each executor keeps across tasks and queries, " +
      "beside the metadata cache and keyed as it is: those pruning decodes and those column readers decode. " +
      "A repeated query then reads and decompresses no dictionary page again (a column of nearly distinct " +
      "values, such as a price, has a dictionary as large as its values). -1, the default, is a tenth of " +
      "the executor JVM's maximum heap (Runtime.maxMemory: about 600 MB with 6g). Least recently used " +
      "dropped first, but only for a dictionary read again: when a scan's dictionaries outgrow the bound, " +
      "a stable part of them stays. Never kept with spark.lmspark.verifyChecksums on. 0 keeps none.", "io",
    "-1 (a tenth of the executor heap), or a size in bytes of at least 0 (a number, or with a unit: 64k, 8m, 1g)")(
    s => if (s == "-1") -1L else parseBytes(s, 0L, Long.MaxValue)))

  val VERIFY_CHECKSUMS: Entry[Boolean] = bool("spark.lmspark.verifyChecksums", default = false, "io",
    "Verify the CRC32 of every page lmspark reads whose header carries one (over the page bytes as " +
      "stored, as parquet-java's parquet.page.verify-checksum.enabled does); a mismatch fails the query " +
      "with an error naming the file, column, row group and page. Skipped pages are not checked.")

  val DICTIONARY_PRESERVE: Entry[Boolean] = bool("spark.lmspark.dictionary.preserve.enabled", default = true, "scan",
    "Return a batch of a column whose rows all come from dictionary-encoded pages as dictionary ids plus the " +
      "chunk's dictionary, decoded lazily by Spark (as Spark's own Parquet reader does), instead of decoding " +
      "every value. Batches that mix dictionary and plain pages, and types whose conversion cannot be applied " +
      "to the dictionary, are always decoded.")

  val PRUNING_STATISTICS: Entry[Boolean] = bool("spark.lmspark.pruning.statistics.enabled", default = true, "pruning",
    "Skip row groups whose checked min / max / null-count statistics prove that no row passes the scan's " +
      "filters, or (spark.lmspark.topK.enabled) that every row sorts after a top-k's current k-th row. " +
      "Statistics known to be unreliable (old writers' signed binary order, NaN bounds, inconsistent " +
      "counts) are not used.")

  val PRUNING_DICTIONARY: Entry[Boolean] = bool("spark.lmspark.pruning.dictionary.enabled", default = true, "pruning",
    "Skip row groups where a filtered column is dictionary-encoded in every data page and no dictionary " +
      "entry can pass the filters (reads only the dictionary page).")

  val PRUNING_BLOOM_FILTER: Entry[Boolean] = bool("spark.lmspark.pruning.bloomFilter.enabled", default = true, "pruning",
    "Skip row groups where a column's bloom filter proves that none of the values of an `=` / `IN` filter " +
      "on it is present. A bloom filter that denies the chunk's own exact min or max is ignored.")

  val PRUNING_GUARANTEES: Entry[Boolean] = bool("spark.lmspark.pruning.guarantees.enabled", default = true, "pruning",
    "Simplify the filters per row group with what its statistics guarantee: conjuncts proven true are " +
      "dropped for that row group, IN lists shrink to the values inside [min, max], and a row group whose " +
      "simplified filter is false is skipped.")

  val PRUNING_SPLITS: Entry[Boolean] = bool("spark.lmspark.pruning.splits.enabled", default = true, "pruning",
    "Drop file splits at planning, before any task is scheduled, when the checked statistics of every row group " +
      "in the split (or the guarantee they give) prove that no row passes the scan's filters, or the split holds " +
      "no row group. The driver decides from footers it holds in its metadata cache, or reads into it when at " +
      "most `spark.lmspark.pruning.splits.maxFooterReads` are missing (none with the cache off); a point " +
      "lookup then runs one task. EXPLAIN " +
      "shows the decision (`LmSplitPruning`). Bucketed scans keep every split.")

  val SPLITS_PACKING: Entry[Boolean] = bool("spark.lmspark.splits.packing.enabled", default = true, "scan",
    "Size a scan's tasks by the bytes lmspark reads, not by file size: its file splits are packed into as many " +
      "partitions as Spark's own rule (`spark.sql.files.maxPartitionBytes`, `openCostInBytes`, " +
      "`minPartitionNum`) asks for the chunks of the columns read in the row groups not pruned, rounded up to a " +
      "multiple of the task slots and balanced by those bytes. A scan that reads a few columns of a wide table, " +
      "or rows of a few row groups, runs fewer tasks. Splits are never cut or merged, only grouped; the rows do " +
      "not change. It needs every split's footer on the driver (those split pruning reads, or the metadata " +
      "cache holds); otherwise Spark's partitions stay. EXPLAIN shows the decision (`LmSplitPacking`). " +
      "Bucketed scans keep theirs.")

  val PRUNING_SPLITS_MAX_FOOTER_READS: Entry[Int] = int("spark.lmspark.pruning.splits.maxFooterReads", default = 64,
    "pruning", "The most footers the driver reads (8 at a time) to prune one scan's splits at planning. When more " +
      "of the scan's files have no footer in the driver's metadata cache, only the files whose footer it holds " +
      "are pruned. 0: only cached footers are used.", min = 0)

  val PRUNING_NESTED_FIELDS: Entry[Boolean] = bool("spark.lmspark.pruning.nestedFields.enabled", default = true, "pruning",
    "Leave unread the struct fields of nested columns that no operator above the scan reads, beyond Spark's " +
      "own nested schema pruning (which keeps every field of an array that is exploded and also tested, as " +
      "`explode` always is). They read as nulls in the unchanged output type; EXPLAIN lists them " +
      "(`LmUnreadFields`). Fields inside maps are always read.")

  val PAGE_INDEX: Entry[Boolean] = bool("spark.lmspark.pageIndex.enabled", default = true, "pruning",
    "Use checked column / offset indexes to select the rows of a row group that may pass the filters; " +
      "pages holding no such row are neither read nor decompressed in any projected column. An index that " +
      "is inconsistent is ignored for its chunk.")

  val LATE_MATERIALIZATION: Entry[Boolean] = bool("spark.lmspark.lateMaterialization.enabled", default = true, "pipeline",
    "Late materialization: in each row group, decode the filtered columns first (cheap, selective ones " +
      "first, the order learnt from earlier row groups), narrow the row selection after each one, then " +
      "decode the other columns only for the rows that pass, fetching only the pages that hold one. When " +
      "false, row groups are read whole (within the page-index selection) and Spark's Filter does the rest.")

  val TOP_K: Entry[Boolean] = bool("spark.lmspark.topK.enabled", default = true, "pipeline",
    "Late materialization for `ORDER BY ... LIMIT k` over a scan (Spark's " +
      "`TakeOrderedAndProject`, with at most column projections, `_metadata` fields and a Delta table's " +
      "deleted-row filter between): " +
      "each task ranks its split's rows by the sort columns alone, with Spark's own top-k function in Spark's " +
      "row order, then reads every other column only for the k rows it kept, fetching only the pages that hold " +
      "one. The rows each task hands to `TakeOrderedAndProject` are exactly those Spark's scan would have " +
      "left after its per-task top-k, ties included. When the first sort key is a column with statistics " +
      "(spark.lmspark.pruning.statistics.enabled) and the table is on local disk or HDFS, the ranking leaves " +
      "unread the row groups whose statistics prove that all their rows sort after the k-th row: where the " +
      "statistics alone prove that reading the row groups promising the best rows first leaves some unread, it " +
      "reads them in that order (and ranks again in Spark's order when ties would make the result depend on " +
      "the order rows come in); otherwise it ranks in Spark's order, leaving those whose rows Spark's top-k " +
      "would not keep when they come, and their pages that hold no such row (spark.lmspark.topK.pagePruning.enabled). " +
      "On an object store, see spark.lmspark.topK.objectStoreMinBytes. EXPLAIN shows `LmTopK`.")

  val TOP_K_PAGE_PRUNING: Entry[Boolean] = bool("spark.lmspark.topK.pagePruning.enabled", default = true, "pipeline",
    "In the first pass of `spark.lmspark.topK.enabled` row group by row group (first sort key a column with " +
      "statistics), each row group that comes once the top-k holds k rows is read with a " +
      "bound on that key: the rows sorting at or before the top-k's threshold then. Its pages that the " +
      "page index proves hold no such row are neither read nor decompressed (on an object store, where the " +
      "row group's columns come in one request, not decompressed), and its rows failing the bound " +
      "are not ranked. The top-k would not keep any of those rows, so its result is the same, ties included. " +
      "On an object store, the one pass needs it (see spark.lmspark.topK.objectStoreMinBytes).")

  val TOP_K_MAX_ROWS: Entry[Int] = int("spark.lmspark.topK.maxRows", default = 10000, "pipeline",
    "The largest `LIMIT` (with its `OFFSET`) read by `spark.lmspark.topK.enabled`; a larger one reads every " +
      "column of every row, as without it.", min = 1)

  val TOP_K_OBJECT_STORE_MIN_BYTES: Entry[Long] = bytes("spark.lmspark.topK.objectStoreMinBytes", default = 64L << 20,
    "pipeline",
    "On an object store (any file system but local files, HDFS and viewfs), `spark.lmspark.topK.enabled` " +
      "applies only to tables of at least this many bytes. There, with the metadata cache on, it reads in " +
      "one pass, row group by row group in Spark's order, leaving those whose statistics put all their rows " +
      "after the k-th row: each row group's columns in one request (as Spark's reader does), its rows decoded past " +
      "the sort columns only where they may enter the top-k; without the cache, in two passes, the second " +
      "fetching the kept rows' pages. On a small table either costs more round trips than reading it whole, " +
      "several row groups a request. 0: every table.", min = 0)

  val DICTIONARY_PREDICATES: Entry[Boolean] = bool("spark.lmspark.dictionaryPredicates.enabled", default = true, "pipeline",
    "Evaluate filters on dictionary-encoded batches once per dictionary entry, then test each row's id " +
      "against the resulting bitmap, instead of comparing every row's value.")

  val PREDICATE_CACHE_MAX_BYTES: Entry[Long] = bytes("spark.lmspark.predicateCache.maxBytes", default = 64L << 20, "pipeline",
    "Per task, the most bytes of filter-column values kept (those of the rows that passed the column's " +
      "filters, or a whole decoded batch when at least half of it passed; dictionary ids where the pages " +
      "were dictionary-encoded) so that the output reuses them " +
      "instead of decoding those columns again. A column whose rows would pass it is evicted (decoded again " +
      "for the output); 0 disables the cache.", min = 0L)

  val LM_DENSE_FRACTION: Entry[Double] = fraction("spark.lmspark.lateMaterialization.denseFraction", default = 0.5, "pipeline",
    "Decode-whole rule, dense case: a row group is read whole (no filter-first pass; Spark's Filter " +
      "filters) when the fraction of its rows expected to pass the filters, learnt from the earlier row " +
      "groups of the same file split, is at least this. 1 never reads whole for density.")

  val LM_SCATTERED_FRACTION: Entry[Double] = fraction("spark.lmspark.lateMaterialization.scatteredFraction", default = 0.25, "pipeline",
    "Decode-whole rule, scattered case: a row group is also read whole when at most " +
      "spark.lmspark.lateMaterialization.narrowColumns columns are projected without being filtered, the " +
      "expected fraction of passing rows is at least this, and passing rows were scattered (mean run " +
      "shorter than spark.lmspark.selection.threshold rows) in the earlier row groups. 1 disables the case.")

  val LM_NARROW_COLUMNS: Entry[Int] = int("spark.lmspark.lateMaterialization.narrowColumns", default = 1, "pipeline",
    "Decode-whole rule, scattered case: the most columns projected without being filtered for a " +
      "projection to count as narrow.", min = 0)

  val LM_EXPLORE_EVERY: Entry[Int] = int("spark.lmspark.lateMaterialization.exploreEvery", default = 8, "pipeline",
    "Of the row groups the decode-whole rule reads whole, every n-th is still read filter-first, so that the " +
      "expected selectivity keeps being measured; 0 never does.", min = 0)

  val OUTPUT: Entry[String] = choice("spark.lmspark.output", default = "auto", "scan",
    "What lmspark's scan produces: `columnar` (ColumnarBatches, dictionary-encoded vectors kept), `row` " +
      "(UnsafeRows written straight from the decoded vectors) or `auto` (batches when the consuming " +
      "operator takes columnar input, as Spark decides for its own scan, rows otherwise, e.g. for schemas " +
      "wider than spark.sql.codegen.maxFields).",
    choices = Seq("auto", "columnar", "row"))

  /** All entries, in declaration order. */
  def entries: Seq[Entry[_]] = all.toSeq
}
