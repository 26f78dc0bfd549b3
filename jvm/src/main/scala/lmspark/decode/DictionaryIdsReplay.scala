package lmspark.decode

/** Dictionary ids already read (e.g. copied back from a Spark dictionary ids vector) replayed as
  * values: `set` loads ids, then `read*` looks the next ones up in the [[Dictionary]] in order,
  * exactly as [[DictionaryIdsDecoder]] would have from the page. Used to decode a batch's ids into
  * values after the fact, and to run a writer over every dictionary entry.
  *
  * Invariant: `0 <= pos <= count <= ids.length`; reading past `count` is a [[DecodeException]]. */
final class DictionaryIdsReplay(dictionary: Dictionary) extends DictionaryLookupDecoder(dictionary) {
  private[this] var ids: Array[Int] = new Array[Int](0)
  private[this] var count: Int = 0
  private[this] var pos: Int = 0
  private[this] var scratch: Array[Int] = new Array[Int](0)

  /** Replays `ids[0, count)` (the array is used in place, not copied). */
  def set(ids: Array[Int], count: Int): Unit = {
    require(count >= 0 && count <= ids.length, s"count $count outside [0, ${ids.length}]")
    this.ids = ids
    this.count = count
    this.pos = 0
  }

  /** Ids only come from `set`; a page is never decoded here. */
  override def init(bytes: Array[Byte], offset: Int, length: Int, numValues: Int): Unit =
    throw new UnsupportedOperationException("DictionaryIdsReplay replays ids given to set(), not pages")

  override def skip(n: Int): Unit = { advance(n); () }

  override protected def nextIds(n: Int): Array[Int] = {
    val from = advance(n)
    if (from == 0) ids
    else {
      if (scratch.length < n) scratch = new Array[Int](math.max(n, scratch.length * 2))
      System.arraycopy(ids, from, scratch, 0, n)
      scratch
    }
  }

  private def advance(n: Int): Int = {
    if (n < 0 || n > count - pos)
      throw new DecodeException(s"cannot replay $n dictionary ids: ${count - pos} of $count left")
    val from = pos
    pos += n
    from
  }
}
