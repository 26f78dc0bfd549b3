package lmspark.scan

import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedDeque}
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.types.{BinaryType, DataType, StringType}

/** On-heap column vectors kept between the tasks of one JVM, so that the filter-first pass and the
  * [[PredicateCache]] do not build new ones for every row group: building a vector allocates and
  * zeroes its arrays and reads the SQL conf, and a row group of a million rows takes hundreds.
  *
  * Keyed by (type, capacity). Bounded: at most `MaxFixed` idle vectors per key for fixed-width types
  * and `MaxVariable` for strings and binaries (whose byte storage grows with their values); a vector
  * given back beyond the bound is closed. A vector taken is reset and has no dictionary; a vector
  * given back must no longer be referenced by its giver. Thread-safe. */
object VectorPool {
  private val MaxFixed = 256
  private val MaxVariable = 32

  private final class Idle {
    val vectors = new ConcurrentLinkedDeque[WritableColumnVector]()
    val count = new AtomicInteger()
  }

  private[this] val idle = new ConcurrentHashMap[(DataType, Int), Idle]()

  private def of(dt: DataType, capacity: Int): Idle = idle.computeIfAbsent((dt, capacity), _ => new Idle)

  /** A reset vector of `capacity` rows of `dt`, without a dictionary. */
  def take(dt: DataType, capacity: Int): WritableColumnVector = {
    val pool = of(dt, capacity)
    val v = pool.vectors.pollFirst()
    if (v == null) new OnHeapColumnVector(capacity, dt)
    else {
      pool.count.decrementAndGet()
      v.reset()
      v
    }
  }

  /** Gives back a vector taken with `take(dt, capacity)`. */
  def give(dt: DataType, capacity: Int, v: WritableColumnVector): Unit = {
    if (v.hasDictionary) v.setDictionary(null)
    val pool = of(dt, capacity)
    val max = dt match {
      case _: StringType | BinaryType => MaxVariable
      case _ => MaxFixed
    }
    if (pool.count.incrementAndGet() <= max) pool.vectors.addFirst(v)
    else { pool.count.decrementAndGet(); v.close() }
  }
}
