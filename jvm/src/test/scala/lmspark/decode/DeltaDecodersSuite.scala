package lmspark.decode

import java.io.ByteArrayOutputStream

import lmspark.testutil.ScalaCompat.ArraySeq
import scala.util.Random

import org.apache.parquet.column.values.ValuesWriter
import org.apache.parquet.column.values.delta.{DeltaBinaryPackingValuesWriterForInteger, DeltaBinaryPackingValuesWriterForLong}
import org.apache.parquet.column.values.deltalengthbytearray.DeltaLengthByteArrayValuesWriter
import org.apache.parquet.column.values.deltastrings.DeltaByteArrayWriter
import org.apache.parquet.io.api.Binary
import org.scalatest.funsuite.AnyFunSuite

import lmspark.decode.DecoderHarness._

/** DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY: values encoded by
  * parquet-java's writers, decoded by ours under read / skip patterns and batch sizes; and
  * malformed input (truncation, bad bit widths and headers, negative or overlong lengths, bad
  * prefixes, random corruption) ending in [[DecodeException]]. */
class DeltaDecodersSuite extends AnyFunSuite {

  /** (block size, miniblocks per block): parquet-java's default, one miniblock, many small ones, large blocks. */
  private val blockConfigs = Seq((128, 4), (128, 1), (256, 8), (1024, 4))

  private def intWriter(cfg: (Int, Int)) = new DeltaBinaryPackingValuesWriterForInteger(cfg._1, cfg._2, 64, 1 << 20, alloc)
  private def longWriter(cfg: (Int, Int)) = new DeltaBinaryPackingValuesWriterForLong(cfg._1, cfg._2, 64, 1 << 20, alloc)

  private def encodeInts(cfg: (Int, Int), values: Seq[Int]): Array[Byte] =
    encode(intWriter(cfg), values)(_.writeInteger(_))
  private def encodeLongs(cfg: (Int, Int), values: Seq[Long]): Array[Byte] =
    encode(longWriter(cfg), values)(_.writeLong(_))
  private def encodeBinaries(w: ValuesWriter, values: Seq[ArraySeq[Byte]]): Array[Byte] =
    encode(w, values)((w, b) => w.writeBytes(Binary.fromConstantByteArray(b.toArray)))

  private def dlbaWriter = new DeltaLengthByteArrayValuesWriter(64, 1 << 20, alloc)
  private def dbaWriter = new DeltaByteArrayWriter(64, 1 << 20, alloc)

  /** Named seeded INT32 value sets: extremes, overflowing deltas, runs, sorted, tiny and block-sized. */
  private def intSets(r: Random): Seq[(String, IndexedSeq[Int])] = Seq(
    "empty" -> IndexedSeq.empty,
    "single" -> IndexedSeq(r.nextInt()),
    "single min" -> IndexedSeq(Int.MinValue),
    "two" -> IndexedSeq(Int.MaxValue, Int.MinValue),
    "127" -> IndexedSeq.fill(127)(r.nextInt()),
    "128" -> IndexedSeq.fill(128)(r.nextInt()),
    "129" -> IndexedSeq.fill(129)(r.nextInt()),
    "min/max alternating (deltas overflow)" -> IndexedSeq.tabulate(300)(i => if (i % 2 == 0) Int.MinValue else Int.MaxValue),
    "extremes mixed" -> IndexedSeq.fill(1000)(Seq(Int.MinValue, Int.MaxValue, 0, -1, 1)(r.nextInt(5))),
    "random" -> IndexedSeq.fill(5000)(r.nextInt()),
    "constant (bit width 0)" -> IndexedSeq.fill(700)(42),
    "sorted small deltas" -> IndexedSeq.iterate(-1000, 3000)(_ + r.nextInt(10)),
    "decreasing" -> IndexedSeq.iterate(Int.MaxValue, 900)(_ - r.nextInt(1000)),
    "runs with spikes" -> IndexedSeq.tabulate(2000)(i => if (i % 97 == 0) r.nextInt() else i / 50),
    "small random" -> IndexedSeq.fill(2048)(r.nextInt(16) - 8))

  private def longSets(r: Random): Seq[(String, IndexedSeq[Long])] = Seq(
    "empty" -> IndexedSeq.empty,
    "single" -> IndexedSeq(r.nextLong()),
    "single max" -> IndexedSeq(Long.MaxValue),
    "two" -> IndexedSeq(Long.MinValue, Long.MaxValue),
    "128" -> IndexedSeq.fill(128)(r.nextLong()),
    "129" -> IndexedSeq.fill(129)(r.nextLong()),
    "min/max alternating (deltas overflow)" ->
      IndexedSeq.tabulate(300)(i => if (i % 2 == 0) Long.MinValue else Long.MaxValue),
    "extremes mixed" -> IndexedSeq.fill(1000)(Seq(Long.MinValue, Long.MaxValue, 0L, -1L, 1L)(r.nextInt(5))),
    "random" -> IndexedSeq.fill(5000)(r.nextLong()),
    "ints as longs" -> IndexedSeq.fill(1000)(r.nextInt().toLong),
    "constant (bit width 0)" -> IndexedSeq.fill(700)(-7L),
    "timestamps" -> IndexedSeq.iterate(1700000000000000L, 3000)(_ + r.nextInt(1000000)),
    "runs with spikes" -> IndexedSeq.tabulate(2000)(i => if (i % 97 == 0) r.nextLong() else i / 50L))

  private def str(s: String): ArraySeq[Byte] = ArraySeq.unsafeWrapArray(s.getBytes("UTF-8"))
  private def randomBytes(r: Random, n: Int): ArraySeq[Byte] = { val a = new Array[Byte](n); r.nextBytes(a); ArraySeq.unsafeWrapArray(a) }

  private def binarySets(r: Random): Seq[(String, IndexedSeq[ArraySeq[Byte]])] = {
    val longPrefix = "p" * 300
    Seq(
      "empty" -> IndexedSeq.empty,
      "single" -> IndexedSeq(str("hello")),
      "single empty string" -> IndexedSeq(str("")),
      "all empty strings" -> IndexedSeq.fill(300)(str("")),
      "128" -> IndexedSeq.fill(128)(randomBytes(r, r.nextInt(20))),
      "129" -> IndexedSeq.fill(129)(randomBytes(r, r.nextInt(20))),
      "random lengths with empties" -> IndexedSeq.fill(3000)(randomBytes(r, if (r.nextInt(5) == 0) 0 else r.nextInt(40))),
      "long shared prefixes" -> IndexedSeq.fill(1500)(str(longPrefix + r.nextInt(1000))),
      "sorted words" -> IndexedSeq.fill(2000)(str(r.alphanumeric.take(1 + r.nextInt(12)).mkString)).sortBy(a =>
        new String(a.toArray, "UTF-8")),
      "equal values" -> IndexedSeq.fill(500)(str("same value")),
      "prefix then shorter" -> IndexedSeq.tabulate(600)(i => str(longPrefix.take(i % 301))),
      "one long value" -> IndexedSeq(randomBytes(r, 100000)),
      "long values" -> IndexedSeq.fill(50)(randomBytes(r, 5000 + r.nextInt(5000))))
  }

  test("DELTA_BINARY_PACKED INT32: parquet-java's writer, every block shape, every pattern and batch size") {
    val r = new Random(1)
    for (cfg <- blockConfigs; (name, values) <- intSets(r)) {
      val enc = encodeInts(cfg, values)
      val (bytes, off) = embed(enc, r)
      val extraNulls = r.nextInt(3) // v1 pages count nulls in num_values
      check(s"INT32 $name $cfg", Kind.Ints, new DeltaBinaryPackedDecoder(32), bytes, off, enc.length,
        values.size + extraNulls, values, r.nextLong())
    }
  }

  test("DELTA_BINARY_PACKED INT64: parquet-java's writer, every block shape, every pattern and batch size") {
    val r = new Random(2)
    for (cfg <- blockConfigs; (name, values) <- longSets(r)) {
      val enc = encodeLongs(cfg, values)
      val (bytes, off) = embed(enc, r)
      check(s"INT64 $name $cfg", Kind.Longs, new DeltaBinaryPackedDecoder(64), bytes, off, enc.length, values.size,
        values, r.nextLong())
    }
  }

  test("DELTA_BINARY_PACKED endOffset is the end of the writer's bytes") {
    val r = new Random(3)
    for (cfg <- blockConfigs; (name, values) <- intSets(r)) {
      val enc = encodeInts(cfg, values)
      val (bytes, off) = embed(enc, r)
      val d = new DeltaBinaryPackedDecoder(32)
      d.init(bytes, off, enc.length + 16, values.size)
      assert(d.endOffset() == off + enc.length, s"$name $cfg")
      assert(d.totalCount == values.size)
    }
  }

  test("DELTA_LENGTH_BYTE_ARRAY: parquet-java's writer, every pattern and batch size") {
    val r = new Random(4)
    for ((name, values) <- binarySets(r)) {
      val enc = encodeBinaries(dlbaWriter, values)
      val (bytes, off) = embed(enc, r)
      check(s"DLBA $name", Kind.Binaries, new DeltaLengthByteArrayDecoder, bytes, off, enc.length, values.size + 1,
        values, r.nextLong())
    }
  }

  test("DELTA_BYTE_ARRAY BYTE_ARRAY: parquet-java's writer, every pattern and batch size") {
    val r = new Random(5)
    for ((name, values) <- binarySets(r)) {
      val enc = encodeBinaries(dbaWriter, values)
      val (bytes, off) = embed(enc, r)
      check(s"DBA $name", Kind.Binaries, new DeltaByteArrayDecoder(-1), bytes, off, enc.length, values.size,
        values, r.nextLong())
    }
  }

  test("DELTA_BYTE_ARRAY FIXED_LEN_BYTE_ARRAY: parquet-java's writer, every pattern and batch size") {
    val r = new Random(6)
    for (width <- Seq(1, 5, 16); count <- Seq(0, 1, 128, 129, 2000)) {
      // Few distinct leading bytes so that prefixes are shared.
      val values = IndexedSeq.fill(count) {
        val a = new Array[Byte](width); r.nextBytes(a); if (width > 1) a(0) = (r.nextInt(3)).toByte
        if (width > 2 && r.nextBoolean()) a(1) = 9
        ArraySeq.unsafeWrapArray(a)
      }
      val enc = encodeBinaries(dbaWriter, values)
      val (bytes, off) = embed(enc, r)
      check(s"DBA FLBA($width) x $count", Kind.Binaries, new DeltaByteArrayDecoder(width), bytes, off, enc.length,
        count, values, r.nextLong())
    }
  }

  test("a decoder is reusable across pages of different shapes") {
    val r = new Random(7)
    val d = new DeltaByteArrayDecoder(-1)
    for (i <- 0 until 20) {
      val values = IndexedSeq.fill(r.nextInt(300))(str("k" * r.nextInt(50) + r.nextInt(100)))
      val enc = encodeBinaries(dbaWriter, values)
      check(s"page $i", Kind.Binaries, d, enc, 0, enc.length, values.size, values, i)
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Malformed input
  // ---------------------------------------------------------------------------------------------

  private def varint(v: Long, out: ByteArrayOutputStream): Unit = {
    var x = v
    while ((x & ~0x7fL) != 0) { out.write(((x & 0x7f) | 0x80).toInt); x >>>= 7 }
    out.write(x.toInt)
  }
  private def zz(v: Long): Long = (v << 1) ^ (v >> 63)

  /** A hand-made DELTA_BINARY_PACKED header. */
  private def header(blockSize: Long, miniblocks: Long, total: Long, first: Long): ByteArrayOutputStream = {
    val out = new ByteArrayOutputStream()
    varint(blockSize, out); varint(miniblocks, out); varint(total, out); varint(zz(first), out)
    out
  }

  /** Offset of the first block's bit widths in a parquet-java encoding (header + min delta). */
  private def firstBitWidths(enc: Array[Byte]): Int = {
    var p = 0
    for (_ <- 0 until 5) { while ((enc(p) & 0x80) != 0) p += 1; p += 1 } // 4 header varints + min delta
    p
  }

  private def assertDecodeError(kind: Kind, d: => ValuesDecoder, bytes: Array[Byte], len: Int, numValues: Int,
      count: Int, what: String, mention: String = ""): Unit = {
    readAll(kind, d, bytes, 0, len, numValues, count) match {
      case Some(e: DecodeException) =>
        assert(e.getMessage.contains(mention), s"$what: ${e.getMessage}")
      case Some(e) => fail(s"$what: expected DecodeException, got $e", e)
      case None => fail(s"$what: decoded without error")
    }
  }

  test("DELTA_BINARY_PACKED: every truncation is a DecodeException") {
    val r = new Random(8)
    for (cfg <- blockConfigs; values <- Seq(IndexedSeq(5), IndexedSeq.fill(129)(r.nextInt()),
        IndexedSeq.fill(700)(r.nextInt(100)), IndexedSeq.fill(300)(3))) {
      val enc = encodeInts(cfg, values)
      for (cut <- 0 until enc.length)
        assertDecodeError(Kind.Ints, new DeltaBinaryPackedDecoder(32), enc, cut, values.size, values.size,
          s"$cfg ${values.size} values cut at $cut of ${enc.length}")
    }
  }

  test("DELTA_BINARY_PACKED: bit widths over 64 in needed miniblocks are rejected, for INT32 and INT64") {
    val r = new Random(9)
    val ints = encodeInts((128, 4), IndexedSeq.fill(200)(r.nextInt()))
    val bw = firstBitWidths(ints)
    for (bad <- Seq(65, 100, 255)) {
      val b = ints.clone(); b(bw + 1) = bad.toByte
      assertDecodeError(Kind.Ints, new DeltaBinaryPackedDecoder(32), b, b.length, 200, 200, s"bit width $bad",
        s"bit width $bad")
      val d = new DeltaBinaryPackedDecoder(32)
      d.init(b, 0, b.length, 200)
      assert(intercept[DecodeException](d.endOffset()).getMessage.contains("bit width"))
    }
    val longs = encodeLongs((128, 4), IndexedSeq.fill(200)(r.nextLong()))
    val lb = longs.clone(); lb(firstBitWidths(longs)) = 65.toByte
    assertDecodeError(Kind.Longs, new DeltaBinaryPackedDecoder(64), lb, lb.length, 200, 200, "bit width 65", "bit width 65")
  }

  test("DELTA_BINARY_PACKED INT32 with deltas computed in 64 bits (33-bit miniblocks, as DuckDB writes) wraps") {
    // parquet-java's long writer over int values makes the deltas DuckDB writes for INT32 columns;
    // parquet-java's int reader (vanilla Spark) wraps them to 32 bits, and so must we.
    val r = new Random(10)
    for (cfg <- blockConfigs) {
      val values = IndexedSeq.fill(700)(r.nextInt(4) match {
        case 0 => Int.MinValue; case 1 => Int.MaxValue; case _ => r.nextInt()
      })
      val enc = encodeLongs(cfg, values.map(_.toLong))
      assert((firstBitWidths(enc) until firstBitWidths(enc) + cfg._2).exists(i => (enc(i) & 0xff) > 32),
        s"$cfg: expected a miniblock wider than 32 bits")
      val oracle = new org.apache.parquet.column.values.delta.DeltaBinaryPackingValuesReader()
      oracle.initFromPage(values.size, org.apache.parquet.bytes.ByteBufferInputStream.wrap(java.nio.ByteBuffer.wrap(enc)))
      val expected = IndexedSeq.fill(values.size)(oracle.readInteger())
      assert(expected == values)
      val d = new DeltaBinaryPackedDecoder(32)
      d.init(enc, 0, enc.length, values.size)
      val out = new Array[Int](values.size)
      d.readIntArray(values.size, out, 0)
      assert(out.toIndexedSeq == expected, s"$cfg")
    }
  }

  test("DELTA_BINARY_PACKED: bit widths of miniblocks the last block does not need are ignored") {
    val r = new Random(10)
    val values = IndexedSeq.fill(40)(r.nextInt()) // 39 deltas: 2 of 4 miniblocks needed
    val enc = encodeInts((128, 4), values)
    val bw = firstBitWidths(enc)
    enc(bw + 2) = 0xff.toByte
    enc(bw + 3) = 77
    check("garbage unused widths", Kind.Ints, new DeltaBinaryPackedDecoder(32), enc, 0, enc.length, 40, values, 1)
  }

  test("DELTA_BINARY_PACKED: bad headers are rejected") {
    def bytesOf(h: ByteArrayOutputStream, tail: Int*): Array[Byte] = { tail.foreach(h.write); h.toByteArray }
    val cases = Seq(
      ("block size 0", bytesOf(header(0, 1, 2, 0), 0, 0), 2, "block size"),
      ("block size 100", bytesOf(header(100, 1, 2, 0), 0, 0), 2, "block size"),
      ("block size 2^40", bytesOf(header(1L << 40, 1, 2, 0), 0, 0), 2, "block size"),
      ("no miniblocks", bytesOf(header(128, 0, 2, 0), 0, 0), 2, "miniblocks"),
      ("miniblocks of 16 values", bytesOf(header(128, 8, 2, 0), 0, 0, 0, 0, 0, 0, 0, 0, 0), 2, "miniblocks"),
      ("more values than the page", bytesOf(header(128, 4, 10, 0), 0, 0, 0, 0, 0), 5, "at most 5"),
      ("varint too long", Array.fill[Byte](12)(0xff.toByte), 2, "varint"),
      ("min delta truncated", bytesOf(header(128, 4, 3, 0), 0x80), 3, "truncated"))
    for ((what, b, numValues, mention) <- cases)
      assertDecodeError(Kind.Ints, new DeltaBinaryPackedDecoder(32), b, b.length, numValues, 2, what, mention)
  }

  test("DELTA_BINARY_PACKED: a huge declared block neither allocates nor loops") {
    // Block of 2^30 values in one miniblock of bit width 8: its data cannot fit the page.
    val h = header(1L << 30, 1, 1000, 0)
    varint(zz(1), h); h.write(8); h.write(Array.fill[Byte](100)(1))
    val b = h.toByteArray
    assertDecodeError(Kind.Ints, new DeltaBinaryPackedDecoder(32), b, b.length, 1000, 1000, "huge block", "needs")
    // The same with bit width 0 needs no data: 1000 values of first + i * min delta.
    val z = header(1L << 30, 1, 1000, 5)
    varint(zz(3), z); z.write(0)
    val zb = z.toByteArray
    check("huge block, width 0", Kind.Ints, new DeltaBinaryPackedDecoder(32), zb, 0, zb.length, 1000,
      IndexedSeq.tabulate(1000)(i => 5 + 3 * i), 2)
  }

  test("DELTA_BINARY_PACKED: INT32 sums wrap, first value and min delta may be any 64-bit zigzag") {
    // A writer that encodes INT32 deltas as 64-bit numbers: min delta 2^32 + 1 must act as 1.
    val h = header(128, 4, 3, (1L << 32) + 7)
    varint(zz((1L << 32) + 1), h); h.write(Array[Byte](0, 0, 0, 0))
    val b = h.toByteArray
    check("64-bit min delta", Kind.Ints, new DeltaBinaryPackedDecoder(32), b, 0, b.length, 3, IndexedSeq(7, 8, 9), 3)
  }

  test("DELTA_LENGTH_BYTE_ARRAY: every truncation, negative and overlong lengths are DecodeExceptions") {
    val r = new Random(11)
    val values = IndexedSeq.fill(150)(randomBytes(r, r.nextInt(6)))
    val enc = encodeBinaries(dlbaWriter, values)
    for (cut <- 0 until enc.length)
      assertDecodeError(Kind.Binaries, new DeltaLengthByteArrayDecoder, enc, cut, values.size, values.size,
        s"cut at $cut of ${enc.length}")
    val neg = encodeInts((128, 4), Seq(3, -5, 2)) ++ Array[Byte](1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    assertDecodeError(Kind.Binaries, new DeltaLengthByteArrayDecoder, neg, neg.length, 3, 3, "negative",
      "negative length -5")
    val over = encodeInts((128, 4), Seq(3, Int.MaxValue)) ++ Array[Byte](1, 2, 3, 4)
    assertDecodeError(Kind.Binaries, new DeltaLengthByteArrayDecoder, over, over.length, 2, 2, "overlong", "runs past")
    // Skipping walks the lengths too.
    val d = new DeltaLengthByteArrayDecoder
    d.init(neg, 0, neg.length, 3)
    assert(intercept[DecodeException](d.skip(2)).getMessage.contains("negative length"))
  }

  test("DELTA_BYTE_ARRAY: truncation, bad prefixes, count mismatch and FLBA length are DecodeExceptions") {
    val r = new Random(12)
    val values = IndexedSeq.fill(150)(str("shared/" + r.nextInt(30)))
    val enc = encodeBinaries(dbaWriter, values)
    for (cut <- 0 until enc.length)
      assertDecodeError(Kind.Binaries, new DeltaByteArrayDecoder(-1), enc, cut, values.size, values.size,
        s"cut at $cut of ${enc.length}")
    def dba(prefixes: Seq[Int], suffixes: Seq[String]): Array[Byte] =
      encodeInts((128, 4), prefixes) ++ encodeBinaries(dlbaWriter, suffixes.map(str))
    val tooLong = dba(Seq(0, 4, 0), Seq("abc", "d", "e"))
    assertDecodeError(Kind.Binaries, new DeltaByteArrayDecoder(-1), tooLong, tooLong.length, 3, 3, "prefix > previous",
      "prefix length 4 outside [0, 3]")
    val negative = dba(Seq(0, -1), Seq("abc", "d"))
    assertDecodeError(Kind.Binaries, new DeltaByteArrayDecoder(-1), negative, negative.length, 2, 2, "negative prefix",
      "prefix length -1")
    val first = dba(Seq(1), Seq("abc"))
    assertDecodeError(Kind.Binaries, new DeltaByteArrayDecoder(-1), first, first.length, 1, 1, "prefix on first value",
      "prefix length 1 outside [0, 0]")
    val mismatch = dba(Seq(0, 1, 1), Seq("abc", "d"))
    assertDecodeError(Kind.Binaries, new DeltaByteArrayDecoder(-1), mismatch, mismatch.length, 3, 2, "counts",
      "3 prefix lengths but 2 suffixes")
    val fixed = dba(Seq(0, 2), Seq("abcd", "xyz"))
    check("FLBA(4) ok", Kind.Binaries, new DeltaByteArrayDecoder(4), dba(Seq(0, 1), Seq("abcd", "xyz")), 0,
      dba(Seq(0, 1), Seq("abcd", "xyz")).length, 2, IndexedSeq(str("abcd"), str("axyz")), 4)
    assertDecodeError(Kind.Binaries, new DeltaByteArrayDecoder(4), fixed, fixed.length, 2, 2, "FLBA length",
      "value of 5 bytes in a FIXED_LEN_BYTE_ARRAY(4)")
    // Skips rebuild values and so check prefixes too.
    val d = new DeltaByteArrayDecoder(-1)
    d.init(tooLong, 0, tooLong.length, 3)
    assert(intercept[DecodeException](d.skip(2)).getMessage.contains("prefix length 4"))
  }

  test("random corruption of delta pages ends in values or a DecodeException, never another error") {
    val r = new Random(13)
    val ints = IndexedSeq.fill(400)(r.nextInt(1000))
    val strings = IndexedSeq.fill(300)(str("k" * r.nextInt(30) + r.nextInt(50)))
    val sources: Seq[(Kind, () => ValuesDecoder, Array[Byte], Int)] = Seq(
      (Kind.Ints, () => new DeltaBinaryPackedDecoder(32), encodeInts((128, 4), ints), ints.size),
      (Kind.Longs, () => new DeltaBinaryPackedDecoder(64), encodeLongs((256, 8), ints.map(_.toLong * 1000003L)), ints.size),
      (Kind.Binaries, () => new DeltaLengthByteArrayDecoder, encodeBinaries(dlbaWriter, strings), strings.size),
      (Kind.Binaries, () => new DeltaByteArrayDecoder(-1), encodeBinaries(dbaWriter, strings), strings.size))
    for (trial <- 0 until 2000) {
      val (kind, make, clean, count) = sources(trial % sources.size)
      val b = clean.clone()
      val len = if (r.nextInt(4) == 0) r.nextInt(b.length + 1) else b.length
      for (_ <- 0 until 1 + r.nextInt(3)) {
        val at = if (r.nextBoolean()) r.nextInt(math.min(24, b.length)) else r.nextInt(b.length)
        b(at) = r.nextInt(256).toByte
      }
      val d = make()
      val v = new org.apache.spark.sql.execution.vectorized.OnHeapColumnVector(count, kind.sparkType)
      try {
        d.init(b, 0, len, count)
        var left = count
        while (left > 0) {
          val n = math.min(left, 1 + r.nextInt(100))
          if (r.nextBoolean()) { v.reset(); kind.readVector(d, n, v, 0) } else d.skip(n)
          left -= n
        }
      } catch {
        case _: DecodeException =>
        case e: Throwable => fail(s"trial $trial: unexpected $e", e)
      } finally v.close()
    }
  }
}
