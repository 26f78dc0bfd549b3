package lmspark.scan

import java.io.{Closeable, IOException}

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.vectorized.{ConstantColumnVector, OffHeapColumnVector, OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import lmspark.column.{ColumnReader, ColumnReaderFactory}
import lmspark.io.PageSource
import lmspark.meta.OpenFile
import lmspark.plan.ScanMetrics
import lmspark.shim.SparkInternals

/**
 * Reads one file split with lmspark's column readers, row group by row group, as a stream of
 * `ColumnarBatch`es of at most `batchSize` rows: the requested columns, then the partition
 * columns.
 *
 * Invariants: one batch and its vectors are reused for the whole file, so a batch is valid only
 * until the next call to `next()`; constant vectors (missing columns, partition values) are filled
 * once. The reader closes itself after the last batch; Spark's `FileScanRDD` closes it on early
 * termination (it is `Closeable`).
 */
final class FileBatchReader(
    file: OpenFile,
    plan: FileReadPlan,
    partitionValues: InternalRow,
    settings: ScanSettings,
    hadoopConf: Configuration,
    metrics: ScanMetrics) extends Iterator[ColumnarBatch] with Closeable {

  private val capacity = settings.batchSize
  private val blocks = file.footer.getBlocks

  private val dataVectors: Array[WritableColumnVector] =
    if (settings.offHeapVectors) OffHeapColumnVector.allocateColumns(capacity, settings.requiredSchema).toArray
    else OnHeapColumnVector.allocateColumns(capacity, settings.requiredSchema).toArray

  /** Indexes (into the requested schema) of the columns this file has. */
  private val presentColumns: Array[Int] = plan.columns.indices.filter { i =>
    plan.columns(i) match {
      case ColumnPlan.Missing =>
        dataVectors(i).putNulls(0, capacity)
        dataVectors(i).setIsConstant()
        false
      case _ => true
    }
  }.toArray

  private val partitionVectors: Array[ConstantColumnVector] =
    settings.partitionSchema.fields.indices.map { i =>
      val v = new ConstantColumnVector(capacity, settings.partitionSchema.fields(i).dataType)
      SparkInternals.populateConstant(v, partitionValues, i)
      v
    }.toArray

  private val batch = new ColumnarBatch((dataVectors ++ partitionVectors).map(v => v: ColumnVector))

  private var nextBlock = 0
  private var rowsLeftInGroup = 0L
  private var readers: Array[ColumnReader] = Array.empty
  private var closed = false

  override def hasNext: Boolean = {
    if (closed) return false
    while (rowsLeftInGroup == 0 && nextBlock < blocks.size()) openNextRowGroup()
    if (rowsLeftInGroup == 0) { close(); false } else true
  }

  override def next(): ColumnarBatch = {
    if (!hasNext) throw new NoSuchElementException(s"no more batches in ${file.path}")
    val start = System.nanoTime()
    val n = math.min(capacity.toLong, rowsLeftInGroup).toInt
    var k = 0
    guarded {
      while (k < presentColumns.length) {
        val v = dataVectors(presentColumns(k))
        v.reset()
        readers(k).read(n, v)
        k += 1
      }
    }
    batch.setNumRows(n)
    rowsLeftInGroup -= n
    metrics.scanTimeNs += System.nanoTime() - start
    batch
  }

  private def openNextRowGroup(): Unit = {
    closeReaders()
    val blockIndex = nextBlock
    val block = blocks.get(blockIndex)
    nextBlock += 1
    if (block.getRowCount == 0) return
    guarded {
      readers = presentColumns.map { i =>
        val ColumnPlan.Present(descriptor, sparkType, options) = plan.columns(i): @unchecked
        val chunk = FileReadPlan.chunkOf(block, descriptor)
        val pages = PageSource.forChunk(file.stream, chunk, descriptor, file.path.toString, settings.verifyChecksums)
        metrics.bytesRead += chunk.getTotalSize
        ColumnReaderFactory.create(descriptor, sparkType, pages, block.getRowCount,
          options.copy(preserveDictionary = settings.preserveDictionary))
      }
    }
    rowsLeftInGroup = block.getRowCount
    metrics.rowGroupsRead += 1
  }

  /** Runs `body`, giving unexpected failures a message that names the file. */
  private def guarded[T](body: => T): T = {
    try body
    catch {
      case e: IOException => throw e
      case e: SparkThrowable => throw e
      case NonFatal(e) =>
        throw new IOException(s"lmspark could not read ${file.path} (row group ${nextBlock - 1}): $e", e)
    }
  }

  private def closeReaders(): Unit = {
    readers.foreach(_.close())
    readers = Array.empty
  }

  override def close(): Unit = {
    if (!closed) {
      closed = true
      try closeReaders()
      finally {
        try file.close()
        finally batch.close()
      }
    }
  }
}
