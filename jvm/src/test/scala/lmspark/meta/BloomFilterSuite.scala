package lmspark.meta

import java.io.ByteArrayOutputStream
import java.math.BigInteger

import scala.util.Random

import org.apache.parquet.bytes.BytesUtils
import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.column.statistics.Statistics
import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter
import org.apache.parquet.format.{BloomFilterAlgorithm, BloomFilterCompression, BloomFilterHash, BloomFilterHeader, SplitBlockAlgorithm, Uncompressed, Util, XxHash}
import org.apache.parquet.hadoop.metadata.{ColumnChunkMetaData, ColumnPath, CompressionCodecName}
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.LogicalTypeAnnotation._
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.{ChunkDictionary, ColumnReadOptions, ColumnReaderFactory, RebaseCheck, SparkValues}
import lmspark.io.ChunkContext
import lmspark.testutil._

/** Bloom filters: parquet-java's, read by [[BloomFilters.read]] and probed through
  * [[SparkValues.absentByBloom]] for every Spark pairing of every logical type: no value a chunk
  * holds is ever denied; values it does not hold are denied (almost always) where the pairing has
  * an exact physical inverse, never where it has none (LEGACY rebasing, INT96, BINARY decimals,
  * NaN); each physical literal converts back, through the column's writer, to the value probed.
  * Headers that are wrong in size, place or content are rejected with a reason. */
class BloomFilterSuite extends AnyFunSuite {

  /** Pairs with no exact inverse: probes must never deny. */
  private def unsure(p: ReadPair, d: ColumnDescriptor): Boolean =
    p.options != ColumnReadOptions() || p.column == "i96" || p.column == "bool" ||
      (d.getPrimitiveType.getPrimitiveTypeName == PrimitiveTypeName.BINARY &&
        d.getPrimitiveType.getLogicalTypeAnnotation.isInstanceOf[DecimalLogicalTypeAnnotation])

  /** `literal`'s bytes as parquet-java's statistics hold them. */
  private def statsBytes(literal: Any): Array[Byte] = literal match {
    case i: java.lang.Integer => BytesUtils.intToBytes(i)
    case l: java.lang.Long => BytesUtils.longToBytes(l)
    case f: java.lang.Float => BytesUtils.intToBytes(java.lang.Float.floatToRawIntBits(f))
    case d: java.lang.Double => BytesUtils.longToBytes(java.lang.Double.doubleToRawLongBits(d))
    case b: Binary => b.getBytes
    case other => fail(s"no bytes for $other")
  }

  /** A physical value converted through the column's writer (via one-value statistics). */
  private def forward(sv: SparkValues, d: ColumnDescriptor, literal: Any): Option[Any] = {
    val b = statsBytes(literal)
    val st: Statistics[_] = Statistics.getBuilderForReading(d.getPrimitiveType).withMin(b).withMax(b).withNumNulls(0).build()
    sv.statistics(st, 1).toOption.flatMap(_.min)
  }

  /** A random physical value of column `d` (in its annotation's range). */
  private def randomLiteral(d: ColumnDescriptor, r: Random): Any = {
    val t = d.getPrimitiveType
    def digits(p: Int): BigInteger = {
      val b = new BigInteger(64, r.self).mod(BigInteger.TEN.pow(math.min(p, 18)))
      if (r.nextBoolean()) b.negate() else b
    }
    (t.getPrimitiveTypeName, t.getLogicalTypeAnnotation) match {
      case (PrimitiveTypeName.INT32, i: IntLogicalTypeAnnotation) if i.getBitWidth < 32 =>
        Int.box(if (i.isSigned) r.nextInt(1 << i.getBitWidth) - (1 << (i.getBitWidth - 1)) else r.nextInt(1 << i.getBitWidth))
      case (PrimitiveTypeName.INT32, _: DateLogicalTypeAnnotation) => Int.box(r.nextInt(40000) - 10000)
      case (PrimitiveTypeName.INT32, dec: DecimalLogicalTypeAnnotation) => Int.box(digits(dec.getPrecision).intValue)
      case (PrimitiveTypeName.INT32, _) => Int.box(r.nextInt())
      case (PrimitiveTypeName.INT64, ts: TimestampLogicalTypeAnnotation) =>
        Long.box(r.nextLong() % (if (ts.getUnit == TimeUnit.MILLIS) 4000000000000L else 4000000000000000L))
      case (PrimitiveTypeName.INT64, dec: DecimalLogicalTypeAnnotation) => Long.box(digits(dec.getPrecision).longValue)
      case (PrimitiveTypeName.INT64, _) => Long.box(r.nextLong())
      case (PrimitiveTypeName.FLOAT, _) => Float.box(r.nextFloat() * 2e6f - 1e6f)
      case (PrimitiveTypeName.DOUBLE, _) => Double.box(r.nextGaussian() * 1e9)
      case (PrimitiveTypeName.BINARY, _: StringLogicalTypeAnnotation | _: EnumLogicalTypeAnnotation | _: JsonLogicalTypeAnnotation) =>
        Binary.fromString(r.alphanumeric.take(r.nextInt(9)).mkString)
      case (PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, dec: DecimalLogicalTypeAnnotation) =>
        Binary.fromConstantByteArray(TestTypes.padded(digits(dec.getPrecision), t.getTypeLength))
      case (PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, _) =>
        Binary.fromConstantByteArray(Array.fill(t.getTypeLength)(r.nextInt(256).toByte))
      case (_, _) => Binary.fromConstantByteArray(Array.fill(r.nextInt(9))(r.nextInt(256).toByte))
    }
  }

  for (dictionary <- Seq(false, true)) {
    test(s"parquet-java bloom filters (dictionary $dictionary): never deny a present value, deny absent ones " +
      "where the inverse is exact") {
      val path = TestFiles.dir.resolve(s"logical-bloom-$dictionary.parquet")
      LogicalFiles.write(path, seed = 41, dictionary = dictionary, v2 = dictionary, bloom = true, rows = 3000)
      val lm = new LmFile(path)
      val r = new Random(43)
      try {
        for (pair <- LogicalFiles.pairs) {
          val col = lm.columnIndex(pair.column)
          val d = lm.descriptor(col)
          val sv = SparkValues.forColumn(d, pair.sparkType, pair.options).get
          val ord = TypeUtils.getInterpretedOrdering(pair.sparkType)
          var denied = 0
          var probed = 0
          for (rg <- 0 until lm.rowGroups) {
            val what = s"$pair rg $rg"
            val chunk = lm.chunk(rg, col)
            val bloom = BloomFilters.read(lm.in, chunk, new ChunkContext(path.toString, pair.column, rg))
            // parquet-java writes none for BOOLEAN, INT96, nor for chunks whose data pages are all
            // dictionary-encoded.
            if (pair.column == "bool" || pair.column == "i96" || bloom.isEmpty)
              assert(bloom.isEmpty && (pair.column == "bool" || pair.column == "i96" ||
                ChunkDictionary.allPagesDictionaryEncoded(chunk)), s"$what: bloom filter $bloom")
            else {
              val b = bloom.get.fold(w => fail(s"$what: $w"), identity)
              val values = LmReading.readAll(lm.reader(rg, col, pair.sparkType, pair.options), pair.sparkType,
                lm.rowCount(rg).toInt, 4096).filter(_ != null).map(LogicalFiles.toCatalyst(pair.sparkType, _))
              val present = values.map(LogicalFiles.comparable).toSet
              for (v <- values) {
                assert(!sv.absentByBloom(b, v), s"$what: present value ${SparkValuesShow(v)} denied")
                val literals = ColumnReaderFactory.physicalLiterals(d, pair.sparkType, pair.options, v)
                if (unsure(pair, d) || LogicalFiles.isNaN(v)) assert(literals.isEmpty, s"$what: literals of ${SparkValuesShow(v)}")
                else {
                  assert(literals.exists(_.nonEmpty), s"$what: no literal for present ${SparkValuesShow(v)}")
                  for (l <- literals.get) {
                    val back = forward(sv, d, l).getOrElse(fail(s"$what: literal $l does not convert"))
                    assert(ord.equiv(back, v), s"$what: literal $l converts to ${SparkValuesShow(back)}, not ${SparkValuesShow(v)}")
                  }
                }
              }
              val stats = sv.statistics(chunk.getStatistics, lm.rowCount(rg)).toOption.get
              assert(!sv.bloomDeniesBounds(b, stats), s"$what: the bloom filter denies the chunk's own bounds")
              // Values the chunk does not hold.
              for (_ <- 0 until 100) {
                forward(sv, d, randomLiteral(d, r)).filterNot(v => present(LogicalFiles.comparable(v))).foreach { v =>
                  val absent = sv.absentByBloom(b, v)
                  if (unsure(pair, d)) assert(!absent, s"$what: ${SparkValuesShow(v)} denied without an exact inverse")
                  probed += 1
                  if (absent) denied += 1
                }
              }
            }
          }
          if (!unsure(pair, d) && probed > 0)
            assert(denied >= probed * 9 / 10, s"$pair: only $denied of $probed absent values denied")
        }
      } finally lm.close()
    }
  }

  test("values no physical value can equal are absent; NaN and zeros are probed exactly") {
    val path = TestFiles.dir.resolve("logical-bloom-special.parquet")
    LogicalFiles.write(path, seed = 47, dictionary = false, v2 = false, bloom = true, rows = 2000)
    val lm = new LmFile(path)
    try {
      def sv(c: String, t: DataType, o: ColumnReadOptions = ColumnReadOptions()) =
        SparkValues.forColumn(lm.descriptor(lm.columnIndex(c)), t, o).get
      def bloom(c: String) = BloomFilters.read(lm.in, lm.chunk(0, lm.columnIndex(c)), new ChunkContext("f", c, 0)).get.toOption.get
      val i32 = bloom("i32")
      assert(sv("i32", LongType).absentByBloom(i32, 1L << 40))
      assert(sv("i32", DoubleType).absentByBloom(i32, 0.5))
      assert(sv("i32", DoubleType).absentByBloom(i32, Double.NaN))
      assert(sv("dec_i32", DecimalType(12, 5)).absentByBloom(bloom("dec_i32"), Decimal(BigDecimal("1.00001"), 12, 5)))
      assert(sv("fixed", BinaryType).absentByBloom(bloom("fixed"), Array[Byte](1, 2, 3)))
      assert(sv("ts_ms", TimestampType).absentByBloom(bloom("ts_ms"), 1001L))
      assert(sv("u32", LongType).absentByBloom(bloom("u32"), -1L))
      // Unsure: NaN bit patterns, LEGACY rebasing, collations.
      assert(!sv("f64", DoubleType).absentByBloom(bloom("f64"), Double.NaN))
      assert(!sv("d", DateType, ColumnReadOptions(RebaseCheck.Legacy("UTC"))).absentByBloom(bloom("d"), 12345))
      for (collated <- TestLineApis.collatedString)
        assert(!sv("s", collated).absentByBloom(bloom("s"), UTF8String.fromString("definitely-absent")))
      // Both zeros are probed: a chunk holding either one has neither denied.
      for (c <- Seq("f32", "f64"); rg <- 0 until lm.rowGroups) {
        val t = if (c == "f32") FloatType else DoubleType
        val values = LmReading.readAll(lm.reader(rg, lm.columnIndex(c), t), t, lm.rowCount(rg).toInt, 4096)
        if (values.exists(v => v == 0.0f || v == 0.0)) {
          val b = BloomFilters.read(lm.in, lm.chunk(rg, lm.columnIndex(c)), new ChunkContext("f", c, rg)).get.toOption.get
          val (zero, negZero) = if (c == "f32") (0.0f, -0.0f) else (0.0, -0.0)
          assert(!sv(c, t).absentByBloom(b, zero) && !sv(c, t).absentByBloom(b, negZero), s"$c rg $rg")
        }
      }
    } finally lm.close()
  }

  // ---- headers ----

  private def header(numBytes: Int): BloomFilterHeader =
    new BloomFilterHeader(numBytes, BloomFilterAlgorithm.BLOCK(new SplitBlockAlgorithm),
      BloomFilterHash.XXHASH(new XxHash), BloomFilterCompression.UNCOMPRESSED(new Uncompressed))

  /** A "file" with a chunk at [4, 54) and `headerBytes` ++ `bitset` at offset 100. */
  private def fileWith(headerBytes: Array[Byte], bitset: Array[Byte], tail: Int = 16): Array[Byte] = {
    val out = new Array[Byte](100 + headerBytes.length + bitset.length + tail)
    System.arraycopy(headerBytes, 0, out, 100, headerBytes.length)
    System.arraycopy(bitset, 0, out, 100 + headerBytes.length, bitset.length)
    out
  }

  private def serialized(h: BloomFilterHeader): Array[Byte] = {
    val o = new ByteArrayOutputStream()
    Util.writeBloomFilterHeader(h, o)
    o.toByteArray
  }

  private def chunk(offset: Long, length: Int): ColumnChunkMetaData = {
    val c = ColumnChunkMetaData.get(ColumnPath.get("x"), PrimitiveTypeName.INT32, CompressionCodecName.UNCOMPRESSED,
      java.util.Collections.emptySet[org.apache.parquet.column.Encoding](), 4L, 0L, 10L, 50L, 50L)
    c.setBloomFilterOffset(offset)
    if (length >= 0) assume(TestLineApis.setBloomFilterLength(c, length), "this line's parquet-java has no bloom_filter_length")
    c
  }

  private val ctx = new ChunkContext("synthetic", "x", 0)

  test("a well-formed bloom filter is read with or without its length, and finds what was inserted") {
    val filter = new BlockSplitBloomFilter(1024)
    Seq(1, 7, 42).foreach(i => filter.insertHash(filter.hash(i)))
    val bits = new ByteArrayOutputStream()
    filter.writeTo(bits)
    val h = serialized(header(1024))
    val file = fileWith(h, bits.toByteArray)
    for (length <- Seq(-1, h.length + 1024, h.length + 1024 + 8)) {
      val b = BloomFilters.read(new ByteArraySeekableInputStream(file), chunk(100, length), ctx)
        .get.fold(w => fail(s"length $length: $w"), identity)
      assert(Seq(1, 7, 42).forall(i => b.findHash(b.hash(i))), s"length $length")
      assert(b.getBitsetSize == 1024)
    }
    assert(BloomFilters.read(new ByteArraySeekableInputStream(file), chunk(-1, -1), ctx).isEmpty)
  }

  test("bloom filter headers of a wrong size, place or content are rejected, never thrown") {
    def rejected(file: Array[Byte], c: ColumnChunkMetaData, why: String): Unit =
      BloomFilters.read(new ByteArraySeekableInputStream(file), c, ctx) match {
        case Some(Left(reason)) => assert(reason.contains(why), reason)
        case other => fail(s"$other, expected a rejection for '$why'")
      }
    val bits = new Array[Byte](1024)
    for (n <- Seq(33, 16, 0, -32, 1000, 1 << 28))
      rejected(fileWith(serialized(header(n)), bits), chunk(100, -1), "is not a power of two")
    // The bitset runs past the end of the file.
    rejected(fileWith(serialized(header(2048)), bits, tail = 0), chunk(100, -1), "past the end of the file")
    val h = serialized(header(1024))
    rejected(fileWith(h, bits), chunk(100, h.length + 100), "does not fit its length")
    rejected(fileWith(h, bits), chunk(100, 0), "length 0 is invalid")
    rejected(fileWith(h, bits, tail = 0), chunk(100, h.length + 1024 + 40), "past the end of the file")
    rejected(fileWith(h, bits), chunk(20, -1), "inside the column chunk")
    rejected(fileWith(h, bits), chunk(0, 200), "overlaps the column chunk")
    // Not a header at all.
    rejected(fileWith(Array.tabulate[Byte](64)(i => (i * 37 + 11).toByte), bits), chunk(100, -1), "bloom filter")
    rejected(fileWith(Array.fill[Byte](64)(-1), bits), chunk(100, -1), "bloom filter")
  }
}

/** Short forms of Catalyst values for messages. */
private object SparkValuesShow {
  def apply(v: Any): String = v match {
    case b: Array[Byte] => TestTypes.show(TestTypes.bytes(b))
    case other => String.valueOf(other)
  }
}
