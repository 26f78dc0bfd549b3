package lmspark.column

import org.apache.spark.sql.execution.vectorized.WritableColumnVector

/** Reads one nested requested column (struct, list or map at any depth) of one row group: one
  * [[NestedLeafReader]] per leaf the file has (`leaves`, in the order of
  * [[NestedShape.leaves]]), and a [[NestedAssembler]] that builds the column's vectors from their
  * levels. Rows are records: `read(n)` and `skip(n)` take whole records from every leaf, so a row
  * selection walks a nested column as it walks a flat one, and skipped records are never decoded
  * (pages the selection leaves out are skipped whole, never read).
  *
  * Values are always decoded (a nested leaf's vector never stays dictionary-encoded).
  * Invariants: every leaf has consumed the same number of records; `running` is the leaf being
  * read, -1 between reads. */
final class NestedColumnReader(shape: NestedShape, leaves: Array[NestedLeafReader], capacity: Int)
    extends ColumnReader {

  private[this] val assembler = new NestedAssembler(shape, capacity)
  require(assembler.leaves == leaves.length && leaves.nonEmpty,
    s"a nested column needs one reader per leaf (${assembler.leaves}), got ${leaves.length}")

  private[this] val levels = Array.fill(leaves.length)(new NestedLevels(capacity))
  private[this] val from = new Array[Int](leaves.length)
  private[this] var running = -1

  /** The leaf (index into `leaves`) being read, or -1. */
  def runningLeaf: Int = running

  private[this] val fail: (Int, String) => Exception = (k, msg) => leaves(k).malformed(msg)

  override def read(n: Int, vector: WritableColumnVector): Unit = read(n, vector, 0)

  override def read(n: Int, vector: WritableColumnVector, rowId: Int): Unit = {
    if (n < 0) throw new IllegalArgumentException(s"negative row count $n")
    assembler.start(rowId)
    assembler.resolve(vector)
    var k = 0
    while (k < leaves.length) {
      if (rowId == 0) levels(k).clear()
      from(k) = levels(k).size
      running = k
      leaves(k).readRecords(n, levels(k), assembler.leafVectors(k))
      k += 1
    }
    running = -1
    assembler.assemble(vector, levels, from, fail)
  }

  override def skip(n: Long): Unit = {
    var k = 0
    while (k < leaves.length) { running = k; leaves(k).skipRecords(n); k += 1 }
    running = -1
  }

  override def pagesRead: Int = leaves.iterator.map(_.pagesRead).sum

  override def bytesRead: Long = leaves.iterator.map(_.bytesRead).sum

  override def close(): Unit = leaves.foreach(_.close())
}
