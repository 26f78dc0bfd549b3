package lmspark.shim

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.delta.{DeltaParquetFileFormat, RowIndexFilterType}
import org.apache.spark.sql.delta.actions.DeletionVectorDescriptor
import org.apache.spark.sql.delta.deletionvectors.StoredBitmap
import org.apache.spark.sql.delta.storage.dv.HadoopFileSystemDVStore
import org.apache.spark.sql.execution.datasources.{FileFormat, PartitionedFile}
import org.apache.spark.sql.types.StructType

/**
 * A Delta scan's data files as lmspark reads them: columns found under Delta's physical names (and
 * field ids, in column mapping mode `id`) as Delta's reader finds them; each file's deletion vector, loaded with
 * Delta's own classes from the descriptor Delta's file index put on the file
 * (`otherConstantMetadataColumnValues`), becomes the file's marked rows; Delta's is-deleted column
 * is the mark column, 1 on a deleted row lmspark yields (Delta's `Filter` above the scan drops it)
 * and 0 on the others.
 * A file lmspark hands over goes to Delta's own reader (`format`), which marks deleted rows itself.
 *
 * `tablePath` is the table's data path, against which Delta resolves relative deletion-vector
 * paths; None when Delta did not rewrite the scan for deletion vectors: Delta's reader then yields
 * every row of a file, and so does lmspark.
 * Loads Delta's classes: made only for a format [[DeltaTables.isDelta]] accepted.
 */
private[shim] final case class DeltaFiles(tablePath: Option[String], @transient format: FileFormat) extends TableFiles {

  def markedRows(file: PartitionedFile, conf: Configuration): Option[MarkedRows] =
    tablePath.flatMap(marked(file, conf, _))

  /** The marked rows made last, by the descriptor and filter type they were made from: the reads of
    * one file in a task (a top-k's row groups one by one, then its wanted rows) load its deletion
    * vector once. Each task deserializes its own instance. */
  @transient private[this] var last: ((String, Boolean), MarkedRows) = _

  private def remembered(key: (String, Boolean))(make: => MarkedRows): MarkedRows = synchronized {
    if (last == null || last._1 != key) last = key -> make
    last._2
  }

  private def marked(file: PartitionedFile, conf: Configuration, path: String): Option[MarkedRows] = {
    val m = file.otherConstantMetadataColumnValues
    (m.get(DeltaParquetFileFormat.FILE_ROW_INDEX_FILTER_ID_ENCODED),
      m.get(DeltaParquetFileFormat.FILE_ROW_INDEX_FILTER_TYPE)) match {
      case (None, None) => None
      case (Some(encoded: String), Some(kind: RowIndexFilterType)) =>
        val keep = kind match {
          case RowIndexFilterType.IF_CONTAINED => false
          case RowIndexFilterType.IF_NOT_CONTAINED => true
          case other => throw new IllegalStateException(
            s"lmspark cannot read ${file.filePath}: unknown Delta row index filter type $other")
        }
        Some(remembered(encoded -> keep)(new MarkedRows(() => {
          val dv = DeletionVectorDescriptor.deserializeFromBase64(encoded)
          val rows =
            if (dv.cardinality == 0) Array.emptyLongArray
            else StoredBitmap.create(dv, new Path(path)).load(new HadoopFileSystemDVStore(conf)).toArray
          if (!isSortedDistinct(rows)) java.util.Arrays.sort(rows) // RoaringBitmapArray lists them in order already
          rows
        }, keep)))
      case (id, kind) => throw new IllegalStateException(
        s"lmspark cannot read ${file.filePath}: Delta's deletion vector descriptor ($id) and filter type ($kind) " +
          "must come together")
    }
  }

  /** Delta's own renaming (`prepareSchemaForRead`): physical names, and field ids in `id` mode. */
  def fileSchema(requiredSchema: StructType): StructType =
    format.asInstanceOf[DeltaParquetFileFormat].prepareSchemaForRead(requiredSchema)

  val markColumn: Option[String] =
    if (tablePath.isDefined) Some(DeltaParquetFileFormat.IS_ROW_DELETED_COLUMN_NAME) else None

  def fallbackFormat: FileFormat = format

  private def isSortedDistinct(rows: Array[Long]): Boolean = {
    var i = 1
    while (i < rows.length && rows(i - 1) < rows(i)) i += 1
    i >= rows.length
  }
}
