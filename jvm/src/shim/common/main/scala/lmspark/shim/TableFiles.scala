package lmspark.shim

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.execution.datasources.{FileFormat, PartitionedFile}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType

/**
 * The rows of one data file a table format marks, by their index in the file (as `_metadata.row_index`
 * counts them): `rows` sorted ascending, distinct and non-negative, loaded by `load` when first
 * asked for (a file whose row groups are all pruned by metadata never loads them). `keepMarked`: the
 * marked rows are the only ones the scan yields; otherwise they are the ones it drops (a deletion vector).
 */
final class MarkedRows(load: () => Array[Long], val keepMarked: Boolean) {
  lazy val rows: Array[Long] = load()
}

object MarkedRows {
  /** Marked rows known already. */
  def apply(rows: Array[Long], keepMarked: Boolean): MarkedRows = new MarkedRows(() => rows, keepMarked)
}

/**
 * What a table format adds to reading its data files as Parquet, beyond Spark's Parquet reader:
 * per file, the rows it marks ([[markedRows]], e.g. Delta's deletion vectors), the names and field
 * ids its files use for the scan's columns ([[fileSchema]], Delta's column mapping), the column of
 * the scan's required schema that flags each row the marks drop ([[markColumn]]), and the format
 * that reads a file lmspark hands over, which applies all of them itself. Built on the driver per
 * scan; `markedRows` runs in tasks.
 *
 * Invariant: a file read with `markedRows` applied (each dropped row left out, or yielded with its
 * `markColumn` value 1) yields, after the format's own filter on `markColumn`, exactly the rows and
 * values `fallbackFormat`'s reader yields for it.
 */
trait TableFiles extends Serializable {
  /** The rows `file` marks (None: it marks none), loaded with the task's `conf`. */
  def markedRows(file: PartitionedFile, conf: Configuration): Option[MarkedRows]

  /** The schema to find `requiredSchema`'s columns by in a data file (driver side only): the same
    * columns in the same order, under the names and field ids the files use (Delta's column
    * mapping), or `requiredSchema` itself. */
  def fileSchema(requiredSchema: StructType): StructType

  /** The byte column of the required schema (by exact name) that the format fills with 1 on a row
    * its marks drop and 0 on a row it keeps, and whose rows other than 0 its own plan filters out
    * above the scan (Delta's is-deleted column and `Filter`): a reader may yield a dropped row
    * flagged rather than leave it out. None: the scan has no such column, and drops rows itself. */
  def markColumn: Option[String]

  /** The format whose reader reads a file lmspark hands over (driver side only). */
  def fallbackFormat: FileFormat
}

object TableFiles {
  /** Plain Parquet: no marked rows, no mark column, Spark's reader. */
  object PlainParquet extends TableFiles {
    def markedRows(file: PartitionedFile, conf: Configuration): Option[MarkedRows] = None
    def fileSchema(requiredSchema: StructType): StructType = requiredSchema
    def markColumn: Option[String] = None
    @transient lazy val fallbackFormat: FileFormat = new ParquetFileFormat()
  }
}
