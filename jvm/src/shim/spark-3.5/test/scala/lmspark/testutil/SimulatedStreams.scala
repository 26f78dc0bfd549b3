package lmspark.testutil

import java.io.RandomAccessFile

/** Hadoop 3.3.4 (Spark 3.5) has no vectored reads: the simulated store's stream has none either. */
object SimulatedStreams {
  def open(file: RandomAccessFile, model: SimulatedStore.Model): SimulatedStoreStream = new SimulatedStoreStream(file, model)
}
