package lmspark.testutil

import java.io.RandomAccessFile
import java.nio.ByteBuffer
import java.util.concurrent.{Executors, ExecutorService, ThreadFactory}
import java.util.function.IntFunction

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FileRange, VectoredReadUtils}

/** The simulated store's stream on Hadoop 3.4 and later: it declares vectored reads and serves a
  * vectored call as S3A does, merging ranges less than `MinSeek` apart up to `MaxMerged` bytes
  * (S3A's defaults, through Hadoop's own `VectoredReadUtils`) and fetching the merged ranges in
  * parallel, each one request. */
object SimulatedStreams {
  val MinSeek: Int = 128 << 10
  val MaxMerged: Int = 2 << 20

  private lazy val pool: ExecutorService = Executors.newCachedThreadPool(new ThreadFactory {
    override def newThread(r: Runnable): Thread = { val t = new Thread(r, "simstore-vectored"); t.setDaemon(true); t }
  })

  def open(file: RandomAccessFile, model: SimulatedStore.Model): SimulatedStoreStream = new Vectored(file, model)

  private final class Vectored(file: RandomAccessFile, model: SimulatedStore.Model) extends SimulatedStoreStream(file, model)
      with org.apache.hadoop.fs.StreamCapabilities {
    override def hasCapability(capability: String): Boolean =
      capability.equalsIgnoreCase("in:readvectored")

    override def readVectored(ranges: java.util.List[_ <: FileRange], allocate: IntFunction[ByteBuffer]): Unit = {
      SimulatedStore.vectoredCalls.incrementAndGet()
      ranges.asScala.foreach(r => SimulatedStore.asked.add((r.getOffset, r.getLength)))
      ranges.asScala.foreach(_.setData(new java.util.concurrent.CompletableFuture[ByteBuffer]))
      val sorted = ranges.asScala.toSeq.sortBy(_.getOffset).asJava
      val merged = VectoredReadUtils.mergeSortedRanges(sorted, 1, MinSeek, MaxMerged).asScala.toIndexedSeq
      // At most `parallelRequests` merged ranges in flight: one task per slot takes them in turn.
      val next = new java.util.concurrent.atomic.AtomicInteger(0)
      val slots = math.max(1, math.min(model.parallelRequests, merged.size))
      (0 until slots).foreach { _ =>
        pool.submit(new Runnable {
          override def run(): Unit = {
            var i = next.getAndIncrement()
            while (i < merged.size) {
              val m = merged(i)
              try {
                if (m.getOffset + m.getLength > length) throw new java.io.EOFException(s"range past the end at ${m.getOffset}")
                SimulatedStore.charge(model, m.getLength, newRequest = true)
                val all = new Array[Byte](m.getLength)
                readAt(m.getOffset, all, 0, m.getLength)
                m.getUnderlying.asScala.foreach { r =>
                  val b = allocate(r.getLength)
                  b.put(all, (r.getOffset - m.getOffset).toInt, r.getLength)
                  b.flip()
                  r.getData.complete(b)
                }
              } catch {
                case e: Throwable => m.getUnderlying.asScala.foreach(_.getData.completeExceptionally(e))
              }
              i = next.getAndIncrement()
            }
          }
        })
      }
    }
  }
}
