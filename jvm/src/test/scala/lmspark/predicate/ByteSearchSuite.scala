package lmspark.predicate

import scala.util.Random

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** [[ByteSearch]] against `UTF8String.contains` (the oracle) over seeded random strings and patterns
  * from small alphabets (so matches, near-matches and repeated bytes are common), with multi-byte
  * characters, empty strings and patterns, and strings at every offset of a shared byte array (as
  * an on-heap string vector holds them) and off-heap. */
class ByteSearchSuite extends AnyFunSuite {
  private val alphabets = Seq("ab", "abc ", "special requests", "aé€😀", "\u0000\u00ff")

  private def randomString(r: Random, alphabet: String, maxLen: Int): String = {
    val cps = alphabet.codePoints().toArray
    val n = r.nextInt(maxLen + 1)
    val sb = new java.lang.StringBuilder
    (0 until n).foreach(_ => sb.appendCodePoint(cps(r.nextInt(cps.length))))
    sb.toString
  }

  test("contains, on strings from an on-heap vector, equals UTF8String.contains") {
    val seed = sys.env.get("LMSPARK_TEST_SEED").map(_.toLong).getOrElse(20261122L)
    val r = new Random(seed)
    var checked = 0
    for (alphabet <- alphabets; trial <- 0 until 200) {
      val pattern = UTF8String.fromString(randomString(r, alphabet, 6))
      val search = new ByteSearch(pattern)
      val strings = Array.fill(50)(UTF8String.fromString(randomString(r, alphabet, 40)))
      val v = new OnHeapColumnVector(strings.length, StringType)
      try {
        strings.zipWithIndex.foreach { case (s, i) => v.putByteArray(i, s.getBytes) }
        strings.indices.foreach { i =>
          val s = v.getUTF8String(i)
          assert(search.in(s) == s.contains(pattern), s"seed $seed alphabet '$alphabet' trial $trial: '$pattern' in '$s'")
          checked += 1
        }
      } finally v.close()
    }
    assert(checked == alphabets.size * 200 * 50)
  }

  test("every occurrence position is found, including the first and last byte of the string") {
    val pattern = UTF8String.fromString("requests")
    val search = new ByteSearch(pattern)
    for (before <- 0 to 10; after <- 0 to 10) {
      val s = UTF8String.fromString("x" * before + "requests" + "y" * after)
      assert(search.in(s))
      assert(!search.in(UTF8String.fromString("x" * before + "requestz" + "y" * after)))
    }
  }

  test("off-heap strings go to UTF8String.contains") {
    val pattern = UTF8String.fromString("ab")
    val bytes = "xxaby".getBytes("UTF-8")
    val address = org.apache.spark.unsafe.Platform.allocateMemory(bytes.length)
    try {
      org.apache.spark.unsafe.Platform.copyMemory(bytes, org.apache.spark.unsafe.Platform.BYTE_ARRAY_OFFSET, null,
        address, bytes.length)
      val s = UTF8String.fromAddress(null, address, bytes.length)
      assert(new ByteSearch(pattern).in(s))
      assert(!new ByteSearch(UTF8String.fromString("ba")).in(s))
    } finally org.apache.spark.unsafe.Platform.freeMemory(address)
  }
}
