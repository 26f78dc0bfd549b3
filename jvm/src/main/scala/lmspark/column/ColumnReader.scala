package lmspark.column

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** Reads one flat leaf column of one row group into Spark vectors, batch by batch. A batch may be
  * assembled from several reads (appends) with skips between them, as a row selection walks the
  * row group. */
trait ColumnReader extends AutoCloseable {

  /** Decodes the next `n` rows into rows [0, n) of `vector` (which the caller has reset and sized
    * to at least n): a batch of one read, as `read(n, vector, 0)`. */
  def read(n: Int, vector: WritableColumnVector): Unit

  /** Decodes the next `n` rows into rows `[rowId, rowId + n)` of `vector`, after rows
    * `[0, rowId)` that earlier calls of the same batch wrote (`rowId == 0` starts a batch on a
    * vector the caller has reset; it is sized to at least `rowId + n`). Nulls via putNull /
    * putNulls. The vector may come back dictionary-encoded (`hasDictionary`, ids in
    * `getDictionaryIds`, values decoded by its getters) when every row of the batch so far is
    * dictionary-encoded; otherwise any dictionary it had is cleared (rows already written as ids
    * are decoded into values first). Readers that cannot append support only `rowId == 0`. */
  def read(n: Int, vector: WritableColumnVector, rowId: Int): Unit =
    if (rowId == 0) read(n, vector)
    else throw new UnsupportedOperationException(s"${getClass.getSimpleName} cannot append rows")

  /** Skips the next `n` rows without decoding values where it can (e.g. skipping whole pages by
    * their header's num_values / num_rows, skipping dictionary ids without lookups). Pages that
    * page pruning removed (never read) can only be skipped whole. */
  def skip(n: Long): Unit

  /** The dictionary set on the vector of the last batch when it came back dictionary-encoded (the
    * current chunk's, as Spark values), or null. */
  def vectorDictionary: SparkDictionary = null

  /** Pages this reader has read / decompressed so far (dictionary page included). */
  def pagesRead: Int

  /** Bytes this reader has read from the file so far. */
  def bytesRead: Long
}

/** Options for one column reader.
  * @param rebaseCheck how DATE / TIMESTAMP (INT32 / INT64) values are rebased or checked
  * @param int96Rebase the same for INT96 timestamps (Spark's separate `int96RebaseModeInRead`)
  * @param int96ConvertTz the zone INT96 timestamps are shifted from, as Spark's
  *        `spark.sql.parquet.int96TimestampConversion` does for files not written by parquet-mr
  * @param preserveDictionary batches of dictionary-encoded rows may stay dictionary-encoded in the
  *        vector (see [[DictionaryPreservation]]) */
final case class ColumnReadOptions(
    rebaseCheck: RebaseCheck = RebaseCheck.None,
    int96Rebase: RebaseCheck = RebaseCheck.None,
    int96ConvertTz: Option[java.time.ZoneId] = scala.None,
    preserveDictionary: Boolean = true)

/** How dates and timestamps before the Julian/Gregorian switch are treated (Spark's
  * `LegacyBehaviorPolicy` resolved for one file). TIMESTAMP_NTZ values are never checked or rebased. */
sealed trait RebaseCheck

object RebaseCheck {

  /** Values are read as they are (Spark's CORRECTED mode, or files written by Spark 3+). */
  case object None extends RebaseCheck

  /** Spark's EXCEPTION mode: an ancient DATE or TIMESTAMP (LTZ) value fails the read with Spark's
    * own rebase exception. */
  case object FailOnAncient extends RebaseCheck

  /** Spark's LEGACY mode: values were written in the hybrid Julian calendar and are rebased to the
    * proleptic Gregorian calendar; timestamps in `timeZone` (the writer's zone from the footer, or
    * the session zone). */
  final case class Legacy(timeZone: String) extends RebaseCheck
}
