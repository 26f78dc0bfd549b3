package lmspark.shim

import java.nio.ByteBuffer
import java.util.concurrent.CompletableFuture

import org.apache.hadoop.fs.FSDataInputStream

/** Spark 3.5 runs on Hadoop 3.3.4, which has no vectored reads: ranges are read with positioned
  * reads, one after another. */
object VectoredReads {
  def available(in: FSDataInputStream): Boolean = false

  def read(in: FSDataInputStream, offsets: Array[Long], lengths: Array[Int]): Array[CompletableFuture[ByteBuffer]] =
    throw new UnsupportedOperationException("Hadoop 3.3.4 has no vectored reads")
}
