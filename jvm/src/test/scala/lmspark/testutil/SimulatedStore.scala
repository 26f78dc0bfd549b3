package lmspark.testutil

import java.io.{EOFException, RandomAccessFile}
import java.net.URI
import java.util.concurrent.atomic.AtomicLong

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FSInputStream, Path, RawLocalFileSystem}

/** The local file system under the scheme `simstore:`, priced like an object store: every request
  * costs a latency and its bytes a bandwidth, and both are slept. A read that starts where the
  * stream's previous read ended continues that request (as an open GET would); any other read is a
  * new request. On Hadoop 3.4 and later the stream declares vectored reads and runs a vectored
  * call's merged ranges in parallel, as S3A does ([[SimulatedStreams]]). Requests and bytes are
  * counted for the whole JVM (tests and the benchmark run Spark in local mode).
  *
  * Register it with [[SimulatedStore.conf]] and read `simstore://<absolute path>`. */
final class SimulatedStoreFileSystem extends RawLocalFileSystem {
  private var model: SimulatedStore.Model = _

  override def initialize(uri: URI, conf: Configuration): Unit = {
    super.initialize(uri, conf)
    model = SimulatedStore.Model(
      latencyNanos = (conf.getDouble("lmspark.sim.latencyMs", 20.0) * 1e6).toLong,
      nanosPerByte = 1e9 / (conf.getDouble("lmspark.sim.mbPerSec", 100.0) * 1e6),
      parallelRequests = conf.getInt("lmspark.sim.parallelRequests", 4))
  }

  override def getUri: URI = URI.create("simstore:///")
  override def getScheme: String = "simstore"

  override def open(f: Path, bufferSize: Int): FSDataInputStream =
    new FSDataInputStream(SimulatedStreams.open(new RandomAccessFile(pathToFile(f), "r"), model))
}

object SimulatedStore {
  /** Per request `latencyNanos`; per byte `nanosPerByte`; a vectored call runs at most
    * `parallelRequests` requests at once. */
  final case class Model(latencyNanos: Long, nanosPerByte: Double, parallelRequests: Int)

  val requests = new AtomicLong
  val bytes = new AtomicLong
  val vectoredCalls = new AtomicLong
  /** Every range asked for (offset, length), in the order asked: a vectored call's ranges when the
    * call is made, a positioned read's when it starts a new request. */
  val asked = new java.util.concurrent.ConcurrentLinkedQueue[(Long, Int)]

  def reset(): Unit = { requests.set(0); bytes.set(0); vectoredCalls.set(0); asked.clear() }

  def conf(latencyMs: Double = 20.0, mbPerSec: Double = 100.0): Map[String, String] = Map(
    "spark.hadoop.fs.simstore.impl" -> classOf[SimulatedStoreFileSystem].getName,
    "spark.hadoop.fs.simstore.impl.disable.cache" -> "true",
    "spark.hadoop.lmspark.sim.latencyMs" -> latencyMs.toString,
    "spark.hadoop.lmspark.sim.mbPerSec" -> mbPerSec.toString)

  /** What sleeping is owed per thread, in nanoseconds: small costs are summed and slept in whole
    * milliseconds (`Thread.sleep(0, n)` sleeps a whole millisecond on Java 17). */
  private val owed = ThreadLocal.withInitial[Array[Long]](() => Array(0L))

  /** Charges one request of `n` bytes (`newRequest`) or `n` more bytes of the current one. */
  def charge(model: Model, n: Long, newRequest: Boolean): Unit = {
    if (newRequest) requests.incrementAndGet()
    bytes.addAndGet(n)
    val o = owed.get()
    o(0) += (if (newRequest) model.latencyNanos else 0L) + (n * model.nanosPerByte).toLong
    if (o(0) >= 1000000L) {
      val ms = o(0) / 1000000L
      o(0) -= ms * 1000000L
      Thread.sleep(ms)
    }
  }
}

/** A simulated store's stream over one local file: sequential and positioned reads, each new
  * request charged. Not thread-safe for sequential reads (as Hadoop streams); vectored reads may
  * run on other threads and use positioned reads of the file's channel. */
class SimulatedStoreStream(file: RandomAccessFile, val model: SimulatedStore.Model) extends FSInputStream {
  private var pos = 0L
  private var lastEnd = -1L
  protected val channel: java.nio.channels.FileChannel = file.getChannel
  def length: Long = channel.size()

  override def seek(p: Long): Unit = { if (p < 0) throw new EOFException(s"seek to $p"); pos = p }
  override def getPos: Long = pos
  override def seekToNewSource(targetPos: Long): Boolean = false

  override def read(): Int = {
    val b = new Array[Byte](1)
    if (read(b, 0, 1) <= 0) -1 else b(0) & 0xff
  }

  override def read(b: Array[Byte], off: Int, len: Int): Int = {
    val n = read(pos, b, off, len)
    if (n > 0) pos += n
    n
  }

  override def read(position: Long, b: Array[Byte], off: Int, len: Int): Int = synchronized {
    if (len == 0) return 0
    if (position >= length) return -1
    val n = math.min(len.toLong, length - position).toInt
    if (position != lastEnd) SimulatedStore.asked.add((position, n))
    SimulatedStore.charge(model, n, newRequest = position != lastEnd)
    readAt(position, b, off, n)
    lastEnd = position + n
    n
  }

  /** Reads exactly `n` bytes at `position` from the file (no charge). */
  protected def readAt(position: Long, b: Array[Byte], off: Int, n: Int): Unit = {
    val buf = java.nio.ByteBuffer.wrap(b, off, n)
    var at = position
    while (buf.hasRemaining) {
      val r = channel.read(buf, at)
      if (r < 0) throw new EOFException(s"end of file at $at")
      at += r
    }
  }

  override def available(): Int = math.max(0L, math.min(Int.MaxValue.toLong, length - pos)).toInt
  override def close(): Unit = file.close()
}
