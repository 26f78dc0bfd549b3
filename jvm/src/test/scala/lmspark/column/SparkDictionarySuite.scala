package lmspark.column

import scala.util.Random

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import lmspark.decode._
import lmspark.testutil.{Dictionaries, TestTypes}

/** Property tests of `VectorWriter.sparkDictionary` against the writers' own eager output, over
  * seeded random dictionaries with edge entries (ints beyond byte/short range, millis that
  * overflow as micros, ancient dates and timestamps, decimal bytes of every length):
  *  - when a writer gives a Spark dictionary, a vector reading ids through it returns, for every
  *    id, exactly what the eager writer stores for that id;
  *  - when it gives none, some entry of the dictionary fails the eager writer (identity writers
  *    always give one). */
class SparkDictionarySuite extends AnyFunSuite {

  private def ints(r: Random, n: Int, special: Seq[Int]): Dictionary =
    Dictionaries.ints(Array.fill(n)(if (r.nextInt(4) == 0) special(r.nextInt(special.size)) else r.nextInt()))
  private def longs(r: Random, n: Int, special: Seq[Long], gen: => Long): Dictionary =
    Dictionaries.longs(Array.fill(n)(if (r.nextInt(4) == 0) special(r.nextInt(special.size)) else gen))
  /** Random big-endian byte strings; `signByte`: the first byte is always 0 or -1 (keeps 16-byte
    * values within DECIMAL(38)), otherwise only sometimes (redundant sign bytes). */
  private def binaries(r: Random, n: Int, maxLen: Int, fixed: Boolean, signByte: Boolean = false): Dictionary = {
    val values = Array.fill(n) {
      val a = new Array[Byte](if (fixed) maxLen else r.nextInt(maxLen + 1))
      r.nextBytes(a)
      if (a.nonEmpty && (signByte || r.nextInt(3) == 0)) a(0) = (if (r.nextBoolean()) 0 else -1).toByte
      a
    }
    val offsets = values.scanLeft(0)(_ + _.length)
    new BinaryDictionary(offsets, values.flatten)
  }

  private val day = SparkRebase.lastSwitchJulianDay
  private val ts = SparkRebase.lastSwitchJulianTs

  /** (name, writer, Spark type, dictionary generator). */
  private val cases: Seq[(String, () => VectorWriter, DataType, (Random, Int) => Dictionary)] = Seq(
    ("Ints", () => VectorWriter.Ints, IntegerType, (r, n) => ints(r, n, Seq(Int.MinValue, Int.MaxValue))),
    ("Longs", () => VectorWriter.Longs, LongType, (r, n) => longs(r, n, Seq(Long.MinValue, Long.MaxValue), r.nextLong())),
    ("Floats", () => VectorWriter.Floats, FloatType,
      (r, n) => Dictionaries.floats(Array.fill(n)(if (r.nextInt(5) == 0) Float.NaN else r.nextFloat() - 0.5f))),
    ("Doubles", () => VectorWriter.Doubles, DoubleType,
      (r, n) => Dictionaries.doubles(Array.fill(n)(if (r.nextInt(5) == 0) -0.0 else r.nextGaussian()))),
    ("Binaries", () => VectorWriter.Binaries, BinaryType, (r, n) => binaries(r, n, 12, fixed = false)),
    ("Binaries as strings", () => VectorWriter.Binaries, StringType, (r, n) => binaries(r, n, 12, fixed = false)),
    ("Bytes", () => new VectorWriter.Bytes, ByteType, (r, n) => ints(r, n, Seq(-129, 128, 300, -1000, 127, -128))),
    ("Shorts", () => new VectorWriter.Shorts, ShortType, (r, n) => ints(r, n, Seq(-32769, 32768, 100000, 32767))),
    ("DatesFailOnAncient", () => VectorWriter.DatesFailOnAncient, DateType,
      (r, n) => Dictionaries.ints(Array.fill(n)(day - 3 + r.nextInt(2000)))),
    ("MicrosFailOnAncient", () => VectorWriter.MicrosFailOnAncient, TimestampType,
      (r, n) => longs(r, n, Seq(ts - 1, ts, Long.MinValue), ts + (r.nextLong() % 100000000000000L).abs - 1000)),
    ("MillisAsMicros", () => new VectorWriter.MillisAsMicros(false), TimestampType,
      (r, n) => longs(r, n, Seq(Long.MaxValue / 1000, Long.MaxValue / 1000 + 1, Long.MinValue / 1000,
        Long.MinValue / 1000 - 1, Long.MinValue), r.nextLong() % 10000000000000L)),
    ("MillisAsMicros failing on ancient", () => new VectorWriter.MillisAsMicros(true), TimestampType,
      (r, n) => longs(r, n, Seq(Math.floorDiv(ts, 1000L) - 1, Long.MaxValue), Math.floorDiv(ts, 1000L) +
        (r.nextLong() % 10000000000000L).abs)),
    ("BinaryDecimals(6)", () => new VectorWriter.BinaryDecimals(6), DecimalType(6, 2),
      (r, n) => binaries(r, n, 3, fixed = true)),
    ("BinaryDecimals(14)", () => new VectorWriter.BinaryDecimals(14), DecimalType(14, 0),
      (r, n) => binaries(r, n, 6, fixed = true)),
    ("BinaryDecimals(30)", () => new VectorWriter.BinaryDecimals(30), DecimalType(30, 4),
      (r, n) => binaries(r, n, 12, fixed = false)),
    ("BinaryDecimals(38)", () => new VectorWriter.BinaryDecimals(38), DecimalType(38, 5),
      (r, n) => binaries(r, n, 16, fixed = true, signByte = true)),
    // Spark's read-side conversions (ConvertingWriters)
    ("IntsAsLongs", () => new ConvertingWriters.IntsAsLongs, LongType, (r, n) => ints(r, n, Seq(Int.MinValue, -1))),
    ("UnsignedIntsAsLongs", () => new ConvertingWriters.UnsignedIntsAsLongs, LongType,
      (r, n) => ints(r, n, Seq(Int.MinValue, -1, Int.MaxValue))),
    ("IntsAsDoubles", () => new ConvertingWriters.IntsAsDoubles, DoubleType, (r, n) => ints(r, n, Seq(Int.MinValue))),
    ("IntsAsBinaryDecimals", () => new ConvertingWriters.IntsAsBinaryDecimals, DecimalType(30, 0),
      (r, n) => ints(r, n, Seq(Int.MinValue, 0, -1))),
    ("LongsAsBinaryDecimals", () => new ConvertingWriters.LongsAsBinaryDecimals, DecimalType(25, 0),
      (r, n) => longs(r, n, Seq(Long.MinValue, Long.MaxValue, 0L), r.nextLong())),
    ("UnsignedLongsAsDecimals", () => new ConvertingWriters.UnsignedLongsAsDecimals, DecimalType(20, 0),
      (r, n) => longs(r, n, Seq(Long.MinValue, -1L, 0L, 255L, 128L), r.nextLong())),
    ("FloatsAsDoubles", () => new ConvertingWriters.FloatsAsDoubles, DoubleType,
      (r, n) => Dictionaries.floats(Array.fill(n)(if (r.nextInt(5) == 0) Float.NaN else r.nextFloat() - 0.5f))),
    ("DatesRebased", () => new ConvertingWriters.DatesRebased, DateType,
      (r, n) => Dictionaries.ints(Array.fill(n)(day - 200000 + r.nextInt(400000)))),
    ("DatesAsTimestampNtz failing on ancient", () => new ConvertingWriters.DatesAsTimestampNtz(RebaseCheck.FailOnAncient),
      TimestampNTZType, (r, n) => Dictionaries.ints(Array.fill(n)(day - 3 + r.nextInt(2000)))),
    ("DatesAsTimestampNtz legacy", () => new ConvertingWriters.DatesAsTimestampNtz(RebaseCheck.Legacy("UTC")),
      TimestampNTZType, (r, n) => Dictionaries.ints(Array.fill(n)(day - 20000 + r.nextInt(40000)))),
    ("TimestampsRebased millis", () => new ConvertingWriters.TimestampsRebased(true, "America/Los_Angeles"),
      TimestampType, (r, n) => longs(r, n, Seq(Long.MaxValue, Math.floorDiv(ts, 1000L) - 1),
        r.nextLong() % 100000000000000L)),
    ("Int96Timestamps failing on ancient", () => new ConvertingWriters.Int96Timestamps(RebaseCheck.FailOnAncient, None),
      TimestampType, (r, n) => int96s(r, n)),
    ("Int96Timestamps legacy, converted", () => new ConvertingWriters.Int96Timestamps(
      RebaseCheck.Legacy("Europe/Paris"), Some(java.time.ZoneId.of("Asia/Kolkata"))), TimestampType, (r, n) => int96s(r, n)),
    ("IntsAsDecimals", () => new ConvertingWriters.IntsAsDecimals(2, DecimalType(14, 5)), DecimalType(14, 5),
      (r, n) => ints(r, n, Seq(Int.MinValue, Int.MaxValue))),
    ("LongsAsDecimals", () => new ConvertingWriters.LongsAsDecimals(0, DecimalType(38, 10)), DecimalType(38, 10),
      (r, n) => longs(r, n, Seq(Long.MinValue), r.nextLong())),
    ("BinariesAsDecimals", () => new ConvertingWriters.BinariesAsDecimals(3, DecimalType(20, 6)), DecimalType(20, 6),
      (r, n) => binaries(r, n, 6, fixed = false)))

  /** INT96 values: nanos of day + Julian days around the calendar switch and after. */
  private def int96s(r: Random, n: Int): Dictionary = {
    val values = Array.fill(n) {
      val b = java.nio.ByteBuffer.allocate(12).order(java.nio.ByteOrder.LITTLE_ENDIAN)
      b.putLong((r.nextDouble() * 86400e9).toLong).putInt(2299160 - 3 + r.nextInt(300000)).array()
    }
    new BinaryDictionary(values.indices.map(_ * 12).toArray :+ n * 12, values.flatten)
  }

  /** Whether the eager writer fails on entry `id` of `d`. */
  private def failsEagerly(writer: VectorWriter, d: Dictionary, id: Int, t: DataType): Boolean = {
    val v = new OnHeapColumnVector(1, t)
    val replay = new DictionaryIdsReplay(d)
    replay.set(Array(id), 1)
    try { writer.write(replay, 1, v, 0); false }
    catch { case _: ArithmeticException | _: RuntimeException => true }
    finally v.close()
  }

  for ((name, newWriter, t, gen) <- cases) {
    test(s"$name: a Spark dictionary reads back the eager values, or some entry fails eagerly") {
      var kept = 0
      var refused = 0
      for (seed <- 0 until 60) {
        val r = new Random(seed * 31L + name.hashCode)
        val size = 1 + r.nextInt(if (seed % 3 == 0) 3 else 40)
        val d = gen(r, size)
        val writer = newWriter()
        writer.sparkDictionary(d) match {
          case Some(sd) =>
            kept += 1
            assert(sd.size == d.size)
            val n = 1 + r.nextInt(200)
            val ids = Array.fill(n)(r.nextInt(size))
            val eager = new OnHeapColumnVector(n, t)
            val lazily = new OnHeapColumnVector(n, t)
            try {
              val replay = new DictionaryIdsReplay(d)
              replay.set(ids, n)
              writer.write(replay, n, eager, 0)
              lazily.reserveDictionaryIds(n).putInts(0, n, ids, 0)
              lazily.setDictionary(sd)
              for (i <- 0 until n) {
                val want = TestTypes.fromVector(t, eager, i)
                val got = TestTypes.fromVector(t, lazily, i)
                assert(TestTypes.same(got, want), s"seed $seed row $i (id ${ids(i)}): ${TestTypes.show(got)} vs " +
                  s"${TestTypes.show(want)}")
              }
            } finally { eager.close(); lazily.close() }
          case None =>
            refused += 1
            assert((0 until size).exists(id => failsEagerly(writer, d, id, t)),
              s"seed $seed: no Spark dictionary although every entry reads eagerly")
        }
      }
      assert(kept > 0, s"$name: never kept")
      // Writers whose generators include entries that fail eagerly (ancient values under EXCEPTION,
      // millis overflowing as micros, empty decimal bytes) must refuse some dictionaries.
      val mayFail = name.contains("Ancient") || name.contains("ancient") || name.startsWith("MillisAsMicros") ||
        name == "TimestampsRebased millis" || name == "BinariesAsDecimals"
      if (mayFail) assert(refused > 0, s"$name: never refused")
      else assert(refused == 0, s"$name: refused $refused dictionaries")
    }
  }
}
