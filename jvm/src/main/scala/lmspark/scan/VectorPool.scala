package lmspark.scan

import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedDeque}
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.types.{BinaryType, DataType, StringType}

/** On-heap column vectors kept between the tasks of one JVM, so that the filter-first pass and the
  * [[PredicateCache]] do not build new ones for every row group: building a vector allocates and
  * zeroes its arrays and reads the SQL conf, and a row group of a million rows takes hundreds.
  *
  * One [[VectorPool.Pool]] per (type, capacity). Bounded: at most `MaxFixed` idle vectors per key for fixed-width types
  * and `MaxVariable` for strings and binaries (whose byte storage grows with their values); a vector
  * given back beyond the bound is closed. A vector taken is reset and has no dictionary; a vector
  * given back must no longer be referenced by its giver. Thread-safe. */
object VectorPool {
  private val MaxFixed = 256
  private val MaxVariable = 32

  /** The idle vectors of one (type, capacity). Callers look a pool up once (`of`) and take from and
    * give to it per batch, so that the per-batch path builds no key and boxes nothing. */
  final class Pool private[VectorPool] (dt: DataType, capacity: Int) {
    private[this] val vectors = new ConcurrentLinkedDeque[WritableColumnVector]()
    private[this] val count = new AtomicInteger()
    private[this] val max = dt match {
      case _: StringType | BinaryType => MaxVariable
      case _ => MaxFixed
    }

    /** A reset vector of `capacity` rows of `dt`, without a dictionary. */
    def take(): WritableColumnVector = {
      val v = vectors.pollFirst()
      if (v == null) new OnHeapColumnVector(capacity, dt)
      else {
        count.decrementAndGet()
        v.reset()
        v
      }
    }

    /** Gives back a vector taken from this pool. */
    def give(v: WritableColumnVector): Unit = {
      if (v.hasDictionary) v.setDictionary(null)
      if (count.incrementAndGet() <= max) vectors.addFirst(v)
      else { count.decrementAndGet(); v.close() }
    }
  }

  private[this] val pools = new ConcurrentHashMap[(DataType, Int), Pool]()

  /** The pool of vectors of `capacity` rows of `dt`. */
  def of(dt: DataType, capacity: Int): Pool = pools.computeIfAbsent((dt, capacity), _ => new Pool(dt, capacity))
}
