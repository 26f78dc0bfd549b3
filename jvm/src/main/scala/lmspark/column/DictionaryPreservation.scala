package lmspark.column

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

import lmspark.decode.{Dictionary, DictionaryIdsReplay}

/** Decides, batch by batch, whether a [[FlatColumnReader]] batch stays dictionary-encoded in the
  * output vector (Spark's lazy decoding: `setDictionary` + ids in `reserveDictionaryIds`, values
  * decoded by `getInt` / `getUTF8String` / ...), and undoes it when a batch cannot stay so.
  *
  * A batch keeps the dictionary only if every one of its rows comes from a dictionary-encoded
  * page of the chunk (a chunk has one dictionary, and a batch never spans chunks), whether it is
  * written by one read or by several appends (the ids vector grows with `reserve`, which keeps
  * the ids already written; `reserveDictionaryIds` is called once per batch). The dictionary
  * is not kept, and the batch is decoded eagerly into values, when:
  *  - preservation is off (`spark.lmspark.dictionary.preserve.enabled` = false);
  *  - the chunk has no dictionary page, or the batch starts on a non-dictionary (PLAIN, ...) page:
  *    a batch starting plain stays eager even if dictionary pages follow;
  *  - the batch reaches a non-dictionary page after dictionary-encoded rows (a chunk falling back
  *    mid-chunk): the ids written so far are decoded into values through the writer, the
  *    dictionary is dropped, and the rest of the batch is eager;
  *  - the column's [[VectorWriter]] cannot express the dictionary as Spark values
  *    (`sparkDictionary` is None): BOOLEAN columns (lmspark reads no BOOLEAN dictionary), a
  *    fail-on-ancient date / timestamp writer whose dictionary has an ancient entry
  *    (it must fail only if a row reads it), millisecond timestamps with an entry whose micros
  *    overflow, and any writer that does not override `sparkDictionary`.
  * Whatever the outcome, a vector reused from an earlier batch never keeps that batch's
  * dictionary: `startBatch` clears it.
  *
  * Invariants: `ids` is non-null exactly while the current batch is dictionary-encoded so far, and
  * then the vector's dictionary is `sparkDict`; otherwise the vector has no dictionary, so eager
  * writers that read back what they wrote (`getInt` in the rebase checks) see values, not ids. The
  * Spark dictionary is built at most once per chunk, the first time a batch could use it. */
final class DictionaryPreservation(enabled: Boolean, writer: VectorWriter) {
  private[this] var dictionary: Dictionary = _
  private[this] var resolved: Boolean = false
  private[this] var sparkDict: SparkDictionary = _
  private[this] var replay: DictionaryIdsReplay = _
  private[this] var ids: WritableColumnVector = _
  private[this] var scratch: Array[Int] = new Array[Int](0)

  /** The chunk's dictionary, read from its dictionary page. */
  def setChunkDictionary(d: Dictionary): Unit = {
    dictionary = d
    resolved = false
    sparkDict = null
    replay = null
  }

  /** The Spark dictionary batches of the current chunk are given, once built (null before). */
  def current: SparkDictionary = sparkDict

  /** Starts a batch on `v`: no dictionary from an earlier batch survives. */
  def startBatch(v: WritableColumnVector): Unit = {
    ids = null
    if (v.hasDictionary) v.setDictionary(null)
  }

  /** Where the next rows of the batch go: the ids vector when they stay dictionary-encoded, or
    * null when they are to be decoded eagerly by the writer. `onDictionaryPage`: the rows come
    * from a dictionary-encoded page; `rowsSoFar`: rows of this batch already written to `v` (by
    * this call or earlier appends); `rowsNeeded`: rows of the batch once these are written (the
    * ids vector grows to hold them, keeping earlier ids). Leaving the dictionary decodes rows
    * `[0, rowsSoFar)`. */
  def idsFor(v: WritableColumnVector, onDictionaryPage: Boolean, rowsSoFar: Int, rowsNeeded: Int): WritableColumnVector =
    if (ids != null) {
      if (onDictionaryPage) { ids.reserve(rowsNeeded); ids }
      else { decodeWritten(v, rowsSoFar); null }
    } else if (onDictionaryPage && rowsSoFar == 0 && enabled && resolve() != null) {
      ids = v.reserveDictionaryIds(rowsNeeded)
      v.setDictionary(sparkDict)
      ids
    } else null

  private def resolve(): SparkDictionary = {
    if (!resolved) {
      resolved = true
      sparkDict = if (dictionary == null) null else writer.sparkDictionary(dictionary).orNull
    }
    sparkDict
  }

  /** Rewrites the non-null rows of `v` in `[0, rows)` as values from their ids, and drops the
    * dictionary. Ids were checked when read, so only the writer's own conversions apply. */
  private def decodeWritten(v: WritableColumnVector, rows: Int): Unit = {
    if (replay == null) replay = new DictionaryIdsReplay(dictionary)
    if (scratch.length < rows) scratch = new Array[Int](math.max(rows, scratch.length * 2))
    val idVector = ids
    ids = null
    v.setDictionary(null)
    var i = 0
    while (i < rows) {
      if (v.isNullAt(i)) i += 1
      else {
        var j = i
        while (j < rows && !v.isNullAt(j)) { scratch(j - i) = idVector.getDictId(j); j += 1 }
        replay.set(scratch, j - i)
        writer.write(replay, j - i, v, i)
        i = j
      }
    }
  }
}
