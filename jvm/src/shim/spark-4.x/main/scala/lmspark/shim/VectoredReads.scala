package lmspark.shim

import java.nio.ByteBuffer
import java.util.concurrent.CompletableFuture

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.{FSDataInputStream, FileRange}

/** Hadoop's vectored reads (`PositionedReadable.readVectored`, Hadoop 3.3.5 on): the connector
  * merges and fetches the ranges in its own way (S3A and ABFS in parallel ranged GETs). */
object VectoredReads {

  /** Whether `in` implements vectored reads itself (`in:readvectored`), rather than Hadoop's
    * default of one positioned read after another. */
  def available(in: FSDataInputStream): Boolean = in.hasCapability("in:readvectored")

  /** Starts one vectored read of the ranges (`offsets(i)`, `lengths(i)`); each future completes
    * with a heap buffer holding its range. */
  def read(in: FSDataInputStream, offsets: Array[Long], lengths: Array[Int]): Array[CompletableFuture[ByteBuffer]] = {
    val ranges = offsets.indices.map(i => FileRange.createFileRange(offsets(i), lengths(i)))
    in.readVectored(ranges.asJava, (n: Int) => ByteBuffer.allocate(n))
    ranges.map(_.getData).toArray
  }
}
