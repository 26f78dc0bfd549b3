package lmspark.column

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/**
 * The row-index column of one row group (`_metadata.row_index`, which Spark's readers fill in the
 * temporary column `_tmp_metadata_row_index`): each row's index in the file, counted from
 * `firstRow`, the file index of the row group's first row. It reads no page: `read` writes the
 * indexes of the next rows, `skip` passes rows over.
 *
 * Invariant: `next` is the file index of the next row to read or skip.
 */
final class RowIndexReader(firstRow: Long) extends ColumnReader {
  private[this] var next = firstRow

  override def read(n: Int, vector: WritableColumnVector): Unit = read(n, vector, 0)

  override def read(n: Int, vector: WritableColumnVector, rowId: Int): Unit = {
    var i = 0
    while (i < n) { vector.putLong(rowId + i, next + i); i += 1 }
    next += n
  }

  override def skip(n: Long): Unit = next += n

  override def pagesRead: Int = 0

  override def bytesRead: Long = 0L

  override def close(): Unit = ()
}
