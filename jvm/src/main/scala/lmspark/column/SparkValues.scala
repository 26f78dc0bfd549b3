package lmspark.column

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.column.statistics.Statistics
import org.apache.parquet.column.values.bloomfilter.BloomFilter
import org.apache.parquet.internal.column.columnindex.ColumnIndex
import org.apache.spark.sql.types.DataType

import lmspark.decode.Dictionary
import lmspark.predicate.{ColumnPages, ColumnStats}
import lmspark.selection.PageLocations

/** One column's metadata values as Catalyst values of the Spark type it is read as, converted by
  * the same [[VectorWriter]] that converts its data (so metadata and rows agree), and checked for
  * consistency before anything is pruned on them. TODO(meta helper). */
final class SparkValues private (descriptor: ColumnDescriptor, sparkType: DataType, options: ColumnReadOptions) {

  /** Chunk statistics as [[ColumnStats]], or why they are not used (unreliable or inconsistent). */
  def statistics(stats: Statistics[_], rowCount: Long): Either[String, ColumnStats] = Left("not implemented")

  /** Page statistics from a column index over `pages`, or why the index is ignored (inconsistent in
    * itself, with the offset index, or with the chunk statistics `chunk`). */
  def pages(ci: ColumnIndex, pages: PageLocations, chunk: Option[ColumnStats]): Either[String, ColumnPages] =
    Left("not implemented")

  /** Every dictionary entry as a Spark value; None when some entry cannot be converted. */
  def dictionary(d: Dictionary): Option[IndexedSeq[Any]] = None

  /** Whether `value` (a Catalyst value of the Spark type) is certainly absent from the chunk per
    * its bloom filter; false when unsure (no exact physical counterpart, unsupported type). */
  def absentByBloom(bloom: BloomFilter, value: Any): Boolean = false
}

object SparkValues {
  def forColumn(descriptor: ColumnDescriptor, sparkType: DataType, options: ColumnReadOptions): Option[SparkValues] = None
}
