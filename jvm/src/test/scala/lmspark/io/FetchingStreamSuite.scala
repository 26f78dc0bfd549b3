package lmspark.io

import java.io.{EOFException, File}
import java.nio.file.Files

import scala.util.Random

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil.{SimulatedStore, SimulatedStoreFileSystem}

/** [[FetchingStream]] against an oracle (the file's bytes): whatever was fetched, released or left
  * out, every read returns the file's bytes; reads a fetched range holds cost no request; reads
  * outside go to the stream, a read continuing the previous one in the same request. Seeded. */
class FetchingStreamSuite extends AnyFunSuite {

  private val seed = sys.env.get("LMSPARK_TEST_SEED").map(_.trim.toLong).getOrElse(20261125L)

  private lazy val (file, bytes) = {
    val f = File.createTempFile("fetching", ".bin")
    f.deleteOnExit()
    val b = new Array[Byte](1 << 20)
    new Random(seed).nextBytes(b)
    Files.write(f.toPath, b)
    (f, b)
  }

  private def open(vectored: Boolean = true, maxBytes: Long = 64L << 20,
      maxRequestBytes: Long = FetchingStream.MaxRequestBytes): FetchingStream = {
    val conf = new Configuration()
    SimulatedStore.conf(latencyMs = 0.0, mbPerSec = 1e6).foreach { case (k, v) => conf.set(k.stripPrefix("spark.hadoop."), v) }
    val fs = new SimulatedStoreFileSystem
    fs.initialize(java.net.URI.create("simstore:///"), conf)
    new FetchingStream(fs.open(new Path("simstore://" + file.getAbsolutePath)), bytes.length, new IoStats, vectored, maxBytes,
      maxRequestBytes)
  }

  private def readAt(s: FetchingStream, at: Long, n: Int): Array[Byte] = {
    val b = new Array[Byte](n)
    s.seek(at)
    s.readFully(b)
    b
  }

  private def expected(at: Long, n: Int): Seq[Byte] = bytes.slice(at.toInt, at.toInt + n).toSeq

  test("reads inside fetched ranges are served without a request; others go to the stream") {
    val s = open()
    try {
      s.fetch(Seq(ByteRange(1000, 5000), ByteRange(6000, 1000), ByteRange(500000, 20000)), maxGap = 0)
      assert(s.stats.roundTrips == 1 && s.stats.requests == 2, "touching ranges merge: two requests in one call")
      assert(readAt(s, 1200, 5500).toSeq == expected(1200, 5500))
      assert(readAt(s, 510000, 100).toSeq == expected(510000, 100))
      assert(s.stats.requests == 2 && s.stats.bytesUsed == 5600, "served from memory")
      val before = s.stats.requests
      assert(readAt(s, 800000, 100).toSeq == expected(800000, 100))
      assert(readAt(s, 800100, 100).toSeq == expected(800100, 100))
      assert(s.stats.requests == before + 1, "a read continuing the previous one is the same request")
      assert(readAt(s, 900, 200).toSeq == expected(900, 200), "a read straddling a fetched range goes to the stream")
    } finally s.close()
  }

  test("a range longer than the request bound goes out as several requests; reads span them from memory") {
    for (vectored <- Seq(true, false)) {
      val s = open(vectored, maxRequestBytes = 64L << 10)
      try {
        s.fetch(Seq(ByteRange(100000, 300000)), maxGap = 0)
        assert(s.stats.roundTrips == 1 && s.stats.requests == 5, s"300 KB in requests of 64 KiB (vectored $vectored)")
        assert(readAt(s, 120000, 200000).toSeq == expected(120000, 200000))
        assert(s.stats.requests == 5, "a read across the pieces is served from memory")
        s.fetch(Seq(ByteRange(150000, 100000)), maxGap = 0)
        assert(s.stats.requests == 5, "a range the pieces hold together is not fetched again")
        assert(readAt(s, 390000, 20000).toSeq == expected(390000, 20000), "held, then from the stream")
        assert(s.stats.requests == 6 && s.stats.bytesUsed == 220000)
      } finally s.close()
    }
  }

  test("a spread fetch goes out as parallel pieces of at least the minimum size, only with vectored reads") {
    for (vectored <- Seq(true, false)) {
      // Pieces apart: one vectored call each, so the store serves each as its own request.
      val s = open(vectored)
      try {
        val storeBefore = SimulatedStore.requests.get()
        s.fetch(Seq(ByteRange(0, 600000), ByteRange(700000, 100000)), maxGap = 1L << 20, spread = FetchingStream.Spread.Apart)
        // Vectored: merged across at most 128 KiB (two ranges), then cut into pieces of 256 KiB.
        val expectedRequests = if (s.vectoredReads) 4 else 1
        assert(s.stats.roundTrips == 1 && s.stats.requests == expectedRequests, s"vectored ${s.vectoredReads}: ${s.stats.requests}")
        assert(readAt(s, 100, 790000).toSeq == expected(100, 790000)) // waits for every piece
        assert(SimulatedStore.requests.get() - storeBefore == expectedRequests,
          "the store serves each piece as its own request: the connector does not merge the pieces back")
        assert(s.stats.requests == expectedRequests, "served from memory, across the pieces and the gap read through")
        val t = open(vectored)
        try {
          t.fetch(Seq(ByteRange(0, 300000)), maxGap = 0, spread = FetchingStream.Spread.Apart)
          assert(t.stats.requests == (if (t.vectoredReads) 2 else 1), "no piece below the minimum")
        } finally t.close()
        // Pieces merged: one vectored call, where the store (as S3A) merges adjacent pieces back.
        val m = open(vectored)
        try {
          val before = SimulatedStore.requests.get()
          m.fetch(Seq(ByteRange(0, 600000), ByteRange(700000, 100000)), maxGap = 1L << 20, spread = FetchingStream.Spread.Merged)
          assert(m.stats.requests == expectedRequests && m.stats.roundTrips == 1)
          assert(readAt(m, 100, 790000).toSeq == expected(100, 790000))
          assert(SimulatedStore.requests.get() - before == 1, "the pieces, adjacent and under 2 MiB, merge into one request")
        } finally m.close()
      } finally s.close()
    }
  }

  test("a released fetch is read from the stream again; the byte budget leaves ranges out") {
    val s = open(maxBytes = 10000)
    try {
      val f = s.fetch(Seq(ByteRange(0, 8000), ByteRange(100000, 8000)), maxGap = 0)
      assert(f.bytes == 8000 && s.bytesHeld == 8000, "the second range does not fit the budget")
      f.release()
      assert(s.bytesHeld == 0)
      val before = s.stats.requests
      assert(readAt(s, 10, 10).toSeq == expected(10, 10))
      assert(s.stats.requests == before + 1)
    } finally s.close()
  }

  test("ranges past the end are not fetched; reading there fails as the stream does") {
    val s = open()
    try {
      s.fetch(Seq(ByteRange(bytes.length - 100, 200)), maxGap = 0)
      assert(s.bytesHeld == 0)
      intercept[EOFException](readAt(s, bytes.length - 100, 200))
    } finally s.close()
  }

  test("random fetches, releases and reads always give the file's bytes (vectored and positioned)") {
    for (vectored <- Seq(true, false); cut <- Seq(FetchingStream.MaxRequestBytes, 16L << 10)) {
      val r = new Random(seed ^ vectored.hashCode ^ cut)
      val s = open(vectored, maxBytes = 256 << 10, maxRequestBytes = cut)
      try {
        var fetches = List.empty[FetchingStream.Fetch]
        for (_ <- 0 until 400) r.nextInt(10) match {
          case 0 | 1 =>
            val ranges = Seq.fill(1 + r.nextInt(6))(ByteRange(r.nextInt(bytes.length - 1), 1 + r.nextInt(40000)))
            fetches ::= s.fetch(ranges, maxGap = r.nextInt(3) * 4096)
          case 2 if fetches.nonEmpty =>
            fetches.head.release(); fetches = fetches.tail
          case _ =>
            val at = r.nextInt(bytes.length - 1)
            val n = 1 + r.nextInt(math.min(50000, bytes.length - at))
            assert(readAt(s, at, n).toSeq == expected(at, n), s"read [$at, +$n) (vectored $vectored, seed $seed)")
        }
        assert(s.bytesHeld <= (256 << 10))
      } finally s.close()
    }
  }
}
