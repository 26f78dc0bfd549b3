package lmspark.io

/** Decompressed pages of one column chunk, by the file offset of each page's stored data, kept
  * so that a chunk read twice (a source and the sources it reopens) is decompressed once. Holds at
  * most `maxBytes` of page data: a page that would pass the bound is not kept (and is decompressed
  * again when read again).
  *
  * Invariants: every array kept is a page's whole decompressed data, never written to after it was
  * kept; `bytes <= maxBytes`. Not thread-safe: the sources sharing it read one after the other, on
  * one task's thread. */
private[io] final class PageMemo(maxBytes: Long) {
  private[this] val pages = new java.util.HashMap[java.lang.Long, Array[Byte]]()
  private[this] var bytes = 0L

  /** The data kept for the page whose stored data starts at `dataStart`, or null. */
  def get(dataStart: Long): Array[Byte] = pages.get(dataStart)

  /** Keeps `data` for the page whose stored data starts at `dataStart`, when the bound allows. */
  def put(dataStart: Long, data: Array[Byte]): Unit =
    if (bytes + data.length <= maxBytes && !pages.containsKey(dataStart)) {
      pages.put(dataStart, data)
      bytes += data.length
    }
}
