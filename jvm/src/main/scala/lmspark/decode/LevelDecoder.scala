package lmspark.decode

/** Decodes a stream of small non-negative integers (definition levels, dictionary ids). */
abstract class LevelDecoder {

  /** The next `n` values into `dst[dstOff, dstOff + n)`. */
  def readInts(n: Int, dst: Array[Int], dstOff: Int): Unit

  /** Skips `n` values and returns how many of them equal `value` (e.g. non-null levels). */
  def skipCounting(n: Int, value: Int): Int

  /** Skips `n` values. */
  def skip(n: Int): Unit

  /** How many of the next values (at most `max`) are known to equal `value` without decoding
    * them one by one (the rest of an RLE run); 0 when that is not known. Consumes nothing. */
  def runOf(value: Int, max: Int): Int = 0
}
