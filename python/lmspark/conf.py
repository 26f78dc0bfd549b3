"""The ``spark.lmspark.*`` config flags. Generated from LmConf.scala by ``make docs``; do not edit."""

#: Replace Spark's Parquet scan with lmspark's scan. Can be switched per session at run time; when false, queries are planned exactly as vanilla Spark plans them.
#: Default: true.
ENABLED = "spark.lmspark.enabled"

#: Rows per ColumnarBatch produced by lmspark's reader.
#: Default: 4096.
BATCH_SIZE = "spark.lmspark.batchSize"

#: How a row selection is walked by column readers: `selectors` (skip n / read n calls), `mask` (decode covered rows, keep the selected ones) or `auto` (a mask when the selection's mean run length is below spark.lmspark.selection.threshold). The output columns and the filter-first pass both follow it (a mask there decodes the row group's rows and drops those already out); nested columns read and skip a mask's runs. Pages removed by page pruning are always skipped.
#: Default: auto.
SELECTION_POLICY = "spark.lmspark.selection.policy"

#: Mean run length (rows per run of selected or skipped rows) below which the `auto` selection policy uses a mask; 0 never does. The default is where the two strategies' costs cross on our PLAIN and RLE_DICTIONARY decoders (`make bench-selection`, benchmarks/selection/).
#: Default: 11.
SELECTION_THRESHOLD = "spark.lmspark.selection.threshold"

#: Largest gap in bytes between two needed byte ranges (pages of a chunk, or the chunks, pages and metadata one read stage fetches) that is read through rather than split into two requests. A stage fetched in one vectored read, whose ranges go out in parallel, reads through at most 128 KiB. On an object store, a row group read filter-first whose other columns' candidate pages weigh at most this many bytes fetches them with its filtered columns (one round trip instead of two).
#: Default: 1048576.
IO_MAX_COALESCE_GAP = "spark.lmspark.io.maxCoalesceGap"

#: Fetch each read stage's byte ranges (the chunks or surviving pages of the columns a stage reads, the page indexes, the dictionary pages pruning reads) in one Hadoop vectored read, which the file system merges and runs in parallel (S3A, ABFS, GCS, local NIO). Off, or on a stream without vectored reads (Spark 3.5's Hadoop), each merged range is one positioned read.
#: Default: true.
IO_VECTORED_ENABLED = "spark.lmspark.io.vectored.enabled"

#: Most bytes a task holds fetched ahead of need (a stage's ranges, and the first stages of the next four row groups to read while the current one decodes). Ranges past it are read when needed; 0 fetches nothing ahead. Files on the local file system (file:) are never fetched ahead.
#: Default: 67108864.
IO_PREFETCH_MAX_BYTES = "spark.lmspark.io.prefetch.maxBytes"

#: Most requests (merged ranges) fetched for each of the next row groups while the current one decodes; a row group needing more is fetched when it is reached, and none after it ahead. 0 turns that prefetch off.
#: Default: 64.
IO_PREFETCH_MAX_REQUESTS = "spark.lmspark.io.prefetch.maxRequests"

#: Bytes read from a file's end in one request to get its footer; a longer footer takes one more.
#: Default: 262144.
IO_FOOTER_TAIL_BYTES = "spark.lmspark.io.footerTailBytes"

#: A row group read filter-first whose candidate pages (after page-index pruning) weigh at most this many bytes over all its columns is fetched in one round trip, not one for the filtered columns and one for the rest, when the page index left few candidate pages. A row group whose predecessor's passing rows needed every page of its other columns is fetched in one round trip too, when it fits a fifth of spark.lmspark.io.prefetch.maxBytes. 0 always fetches by stage.
#: Default: 8388608.
IO_SINGLE_STAGE_MAX_BYTES = "spark.lmspark.io.singleStageMaxBytes"

#: Largest single read request: a fetched range longer than this (whole row groups read ahead, large chunks) is cut into requests of at most this size, which the file system runs side by side (S3A runs up to fs.s3a.vectored.active.ranged.reads at once).
#: Default: 8388608.
IO_MAX_REQUEST_BYTES = "spark.lmspark.io.maxRequestBytes"

#: Bytes (estimated heap) of parsed metadata each executor keeps across tasks and queries: footers, page indexes (with their page statistics checked and converted) and bloom filters, keyed by file path, length and modification time (a rewritten file is read anew), least recently used dropped first. A repeated query reads none of it again. 0 turns the cache off, and with it the dictionaries' (spark.lmspark.metadataCache.dictionaryMaxBytes).
#: Default: 134217728.
METADATA_CACHE_MAX_BYTES = "spark.lmspark.metadataCache.maxBytes"

#: Bytes (estimated heap) of decoded dictionary pages each executor keeps across tasks and queries, beside the metadata cache and keyed as it is: those pruning decodes and those column readers decode. A repeated query then reads and decompresses no dictionary page again (a column of nearly distinct values, such as a price, has a dictionary as large as its values). -1, the default, is a tenth of the executor JVM's maximum heap (Runtime.maxMemory: about 600 MB with 6g). Least recently used dropped first, but only for a dictionary read again: when a scan's dictionaries outgrow the bound, a stable part of them stays. Never kept with spark.lmspark.verifyChecksums on. 0 keeps none.
#: Default: -1.
METADATA_CACHE_DICTIONARY_MAX_BYTES = "spark.lmspark.metadataCache.dictionaryMaxBytes"

#: Verify the CRC32 of every page lmspark reads whose header carries one (over the page bytes as stored, as parquet-java's parquet.page.verify-checksum.enabled does); a mismatch fails the query with an error naming the file, column, row group and page. Skipped pages are not checked.
#: Default: false.
VERIFY_CHECKSUMS = "spark.lmspark.verifyChecksums"

#: Return a batch of a column whose rows all come from dictionary-encoded pages as dictionary ids plus the chunk's dictionary, decoded lazily by Spark (as Spark's own Parquet reader does), instead of decoding every value. Batches that mix dictionary and plain pages, and types whose conversion cannot be applied to the dictionary, are always decoded.
#: Default: true.
DICTIONARY_PRESERVE_ENABLED = "spark.lmspark.dictionary.preserve.enabled"

#: Skip row groups whose checked min / max / null-count statistics prove that no row passes the scan's filters, or (spark.lmspark.topK.enabled) that every row sorts after a top-k's current k-th row. Statistics known to be unreliable (old writers' signed binary order, NaN bounds, inconsistent counts) are not used.
#: Default: true.
PRUNING_STATISTICS_ENABLED = "spark.lmspark.pruning.statistics.enabled"

#: Skip row groups where a filtered column is dictionary-encoded in every data page and no dictionary entry can pass the filters (reads only the dictionary page).
#: Default: true.
PRUNING_DICTIONARY_ENABLED = "spark.lmspark.pruning.dictionary.enabled"

#: Skip row groups where a column's bloom filter proves that none of the values of an `=` / `IN` filter on it is present. A bloom filter that denies the chunk's own exact min or max is ignored.
#: Default: true.
PRUNING_BLOOM_FILTER_ENABLED = "spark.lmspark.pruning.bloomFilter.enabled"

#: Simplify the filters per row group with what its statistics guarantee: conjuncts proven true are dropped for that row group, IN lists shrink to the values inside [min, max], and a row group whose simplified filter is false is skipped.
#: Default: true.
PRUNING_GUARANTEES_ENABLED = "spark.lmspark.pruning.guarantees.enabled"

#: Drop file splits at planning, before any task is scheduled, when the checked statistics of every row group in the split (or the guarantee they give) prove that no row passes the scan's filters, or the split holds no row group. The driver decides from footers it holds in its metadata cache, or reads into it when at most `spark.lmspark.pruning.splits.maxFooterReads` are missing (none with the cache off); a point lookup then runs one task. EXPLAIN shows the decision (`LmSplitPruning`). Bucketed scans keep every split.
#: Default: true.
PRUNING_SPLITS_ENABLED = "spark.lmspark.pruning.splits.enabled"

#: Size a scan's tasks by the bytes lmspark reads, not by file size: its file splits are packed into as many partitions as Spark's own rule (`spark.sql.files.maxPartitionBytes`, `openCostInBytes`, `minPartitionNum`) asks for the chunks of the columns read in the row groups not pruned, rounded up to a multiple of the task slots and balanced by those bytes. A scan that reads a few columns of a wide table, or rows of a few row groups, runs fewer tasks. Splits are never cut or merged, only grouped; the rows do not change. It needs every split's footer on the driver (those split pruning reads, or the metadata cache holds); otherwise Spark's partitions stay. EXPLAIN shows the decision (`LmSplitPacking`). Bucketed scans keep theirs.
#: Default: true.
SPLITS_PACKING_ENABLED = "spark.lmspark.splits.packing.enabled"

#: The most footers the driver reads (8 at a time) to prune one scan's splits at planning. When more of the scan's files have no footer in the driver's metadata cache, only the files whose footer it holds are pruned. 0: only cached footers are used.
#: Default: 64.
PRUNING_SPLITS_MAX_FOOTER_READS = "spark.lmspark.pruning.splits.maxFooterReads"

#: Leave unread the struct fields of nested columns that no operator above the scan reads, beyond Spark's own nested schema pruning (which keeps every field of an array that is exploded and also tested, as `explode` always is). They read as nulls in the unchanged output type; EXPLAIN lists them (`LmUnreadFields`). Fields inside maps are always read.
#: Default: true.
PRUNING_NESTED_FIELDS_ENABLED = "spark.lmspark.pruning.nestedFields.enabled"

#: Use checked column / offset indexes to select the rows of a row group that may pass the filters; pages holding no such row are neither read nor decompressed in any projected column. An index that is inconsistent is ignored for its chunk.
#: Default: true.
PAGE_INDEX_ENABLED = "spark.lmspark.pageIndex.enabled"

#: Late materialization: in each row group, decode the filtered columns first (cheap, selective ones first, the order learnt from earlier row groups), narrow the row selection after each one, then decode the other columns only for the rows that pass, fetching only the pages that hold one. When false, row groups are read whole (within the page-index selection) and Spark's Filter does the rest.
#: Default: true.
LATE_MATERIALIZATION_ENABLED = "spark.lmspark.lateMaterialization.enabled"

#: Late materialization for `ORDER BY ... LIMIT k` over a scan (Spark's `TakeOrderedAndProject`, with at most column projections, `_metadata` fields and a Delta table's deleted-row filter between): each task ranks its split's rows by the sort columns alone, with Spark's own top-k function in Spark's row order, then reads every other column only for the k rows it kept, fetching only the pages that hold one. The rows each task hands to `TakeOrderedAndProject` are exactly those Spark's scan would have left after its per-task top-k, ties included. When the first sort key is a column with statistics (spark.lmspark.pruning.statistics.enabled) and the table is on local disk or HDFS, the ranking leaves unread the row groups whose statistics prove that all their rows sort after the k-th row: where the statistics alone prove that reading the row groups promising the best rows first leaves some unread, it reads them in that order (and ranks again in Spark's order when ties would make the result depend on the order rows come in); otherwise it ranks in Spark's order, leaving those whose rows Spark's top-k would not keep when they come, and their pages that hold no such row (spark.lmspark.topK.pagePruning.enabled). On an object store, see spark.lmspark.topK.objectStoreMinBytes. EXPLAIN shows `LmTopK`.
#: Default: true.
TOP_K_ENABLED = "spark.lmspark.topK.enabled"

#: In the first pass of `spark.lmspark.topK.enabled` row group by row group (first sort key a column with statistics), each row group that comes once the top-k holds k rows is read with a bound on that key: the rows sorting at or before the top-k's threshold then. Its pages that the page index proves hold no such row are neither read nor decompressed (on an object store, where the row group's columns come in one request, not decompressed), and its rows failing the bound are not ranked. The top-k would not keep any of those rows, so its result is the same, ties included. On an object store, the one pass needs it (see spark.lmspark.topK.objectStoreMinBytes).
#: Default: true.
TOP_K_PAGE_PRUNING_ENABLED = "spark.lmspark.topK.pagePruning.enabled"

#: The largest `LIMIT` (with its `OFFSET`) read by `spark.lmspark.topK.enabled`; a larger one reads every column of every row, as without it.
#: Default: 10000.
TOP_K_MAX_ROWS = "spark.lmspark.topK.maxRows"

#: On an object store (any file system but local files, HDFS and viewfs), `spark.lmspark.topK.enabled` applies only to tables of at least this many bytes. There, with the metadata cache on, it reads in one pass, row group by row group in Spark's order, leaving those whose statistics put all their rows after the k-th row: each row group's columns in one request (as Spark's reader does), its rows decoded past the sort columns only where they may enter the top-k; without the cache, in two passes, the second fetching the kept rows' pages. On a small table either costs more round trips than reading it whole, several row groups a request. 0: every table.
#: Default: 67108864.
TOP_K_OBJECT_STORE_MIN_BYTES = "spark.lmspark.topK.objectStoreMinBytes"

#: Evaluate filters on dictionary-encoded batches once per dictionary entry, then test each row's id against the resulting bitmap, instead of comparing every row's value.
#: Default: true.
DICTIONARY_PREDICATES_ENABLED = "spark.lmspark.dictionaryPredicates.enabled"

#: Per task, the most bytes of filter-column values kept (those of the rows that passed the column's filters, or a whole decoded batch when at least half of it passed; dictionary ids where the pages were dictionary-encoded) so that the output reuses them instead of decoding those columns again. A column whose rows would pass it is evicted (decoded again for the output); 0 disables the cache.
#: Default: 67108864.
PREDICATE_CACHE_MAX_BYTES = "spark.lmspark.predicateCache.maxBytes"

#: Decode-whole rule, dense case: a row group is read whole (no filter-first pass; Spark's Filter filters) when the fraction of its rows expected to pass the filters, learnt from the earlier row groups of the same file split, is at least this. 1 never reads whole for density.
#: Default: 0.5.
LATE_MATERIALIZATION_DENSE_FRACTION = "spark.lmspark.lateMaterialization.denseFraction"

#: Decode-whole rule, scattered case: a row group is also read whole when at most spark.lmspark.lateMaterialization.narrowColumns columns are projected without being filtered, the expected fraction of passing rows is at least this, and passing rows were scattered (mean run shorter than spark.lmspark.selection.threshold rows) in the earlier row groups. 1 disables the case.
#: Default: 0.25.
LATE_MATERIALIZATION_SCATTERED_FRACTION = "spark.lmspark.lateMaterialization.scatteredFraction"

#: Decode-whole rule, scattered case: the most columns projected without being filtered for a projection to count as narrow.
#: Default: 1.
LATE_MATERIALIZATION_NARROW_COLUMNS = "spark.lmspark.lateMaterialization.narrowColumns"

#: Of the row groups the decode-whole rule reads whole, every n-th is still read filter-first, so that the expected selectivity keeps being measured; 0 never does.
#: Default: 8.
LATE_MATERIALIZATION_EXPLORE_EVERY = "spark.lmspark.lateMaterialization.exploreEvery"

#: What lmspark's scan produces: `columnar` (ColumnarBatches, dictionary-encoded vectors kept), `row` (UnsafeRows written straight from the decoded vectors) or `auto` (batches when the consuming operator takes columnar input, as Spark decides for its own scan, rows otherwise, e.g. for schemas wider than spark.sql.codegen.maxFields).
#: Default: auto.
OUTPUT = "spark.lmspark.output"

#: Every flag and its default, as strings.
DEFAULTS = {
    "spark.lmspark.enabled": "true",
    "spark.lmspark.batchSize": "4096",
    "spark.lmspark.selection.policy": "auto",
    "spark.lmspark.selection.threshold": "11",
    "spark.lmspark.io.maxCoalesceGap": "1048576",
    "spark.lmspark.io.vectored.enabled": "true",
    "spark.lmspark.io.prefetch.maxBytes": "67108864",
    "spark.lmspark.io.prefetch.maxRequests": "64",
    "spark.lmspark.io.footerTailBytes": "262144",
    "spark.lmspark.io.singleStageMaxBytes": "8388608",
    "spark.lmspark.io.maxRequestBytes": "8388608",
    "spark.lmspark.metadataCache.maxBytes": "134217728",
    "spark.lmspark.metadataCache.dictionaryMaxBytes": "-1",
    "spark.lmspark.verifyChecksums": "false",
    "spark.lmspark.dictionary.preserve.enabled": "true",
    "spark.lmspark.pruning.statistics.enabled": "true",
    "spark.lmspark.pruning.dictionary.enabled": "true",
    "spark.lmspark.pruning.bloomFilter.enabled": "true",
    "spark.lmspark.pruning.guarantees.enabled": "true",
    "spark.lmspark.pruning.splits.enabled": "true",
    "spark.lmspark.splits.packing.enabled": "true",
    "spark.lmspark.pruning.splits.maxFooterReads": "64",
    "spark.lmspark.pruning.nestedFields.enabled": "true",
    "spark.lmspark.pageIndex.enabled": "true",
    "spark.lmspark.lateMaterialization.enabled": "true",
    "spark.lmspark.topK.enabled": "true",
    "spark.lmspark.topK.pagePruning.enabled": "true",
    "spark.lmspark.topK.maxRows": "10000",
    "spark.lmspark.topK.objectStoreMinBytes": "67108864",
    "spark.lmspark.dictionaryPredicates.enabled": "true",
    "spark.lmspark.predicateCache.maxBytes": "67108864",
    "spark.lmspark.lateMaterialization.denseFraction": "0.5",
    "spark.lmspark.lateMaterialization.scatteredFraction": "0.25",
    "spark.lmspark.lateMaterialization.narrowColumns": "1",
    "spark.lmspark.lateMaterialization.exploreEvery": "8",
    "spark.lmspark.output": "auto",
}
