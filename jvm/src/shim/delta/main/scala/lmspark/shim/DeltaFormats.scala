package lmspark.shim

import org.apache.spark.sql.delta.{DeltaParquetFileFormat, IdMapping, NameMapping, NoMapping}
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

/**
 * What lmspark reads of a Delta scan, decided from Delta's format (the same API in every Delta
 * release lmspark builds against). lmspark reads a scan when Delta's reader would hand each file to
 * Spark's, but for the deleted rows of deletion vectors and the physical names and ids of column
 * mapping ([[DeltaFiles]]): not a change-data-feed read, splits and pushdown allowed (Delta's rewrite for deletion vectors then
 * reads `_metadata.row_index`, not its own row counter), no Delta-internal column but the
 * is-deleted one that rewrite adds, no widened column type.
 *
 * Loads Delta's classes: only [[DeltaTables]] calls it, for a format it recognised.
 */
private[shim] object DeltaFormats {
  /** The field metadata where Delta records a column's type changes (`TypeWideningMetadata`'s key,
    * private to Delta; the same in every release built against). */
  private val TypeChangesKey = "delta.typeChanges"

  def declineReasons(format: FileFormat, requiredSchema: StructType): Seq[String] = {
    val f = format.asInstanceOf[DeltaParquetFileFormat]
    val reasons = Seq.newBuilder[String]
    if (f.isCDCRead) reasons += "a Delta change data feed read"
    if (f.columnMappingMode != NoMapping && f.columnMappingMode != NameMapping && f.columnMappingMode != IdMapping)
      reasons += s"Delta column mapping, mode ${f.columnMappingMode.name}"
    if (!f.optimizationsEnabled) reasons += "Delta reads this scan unsplit and without filter pushdown"
    // The is-deleted column is lmspark's to fill only in Delta's rewrite for deletion vectors (a table path).
    val internal = requiredSchema.fieldNames.filter(n => n == DeltaParquetFileFormat.ROW_INDEX_COLUMN_NAME ||
      (n == DeltaParquetFileFormat.IS_ROW_DELETED_COLUMN_NAME && f.tablePath.isEmpty))
    if (internal.nonEmpty) reasons += s"reads Delta's internal columns (${internal.mkString(", ")})"
    val widened = widenedColumns(f.referenceSchema, "")
    if (widened.nonEmpty) reasons += s"Delta type widening, columns ${widened.mkString(", ")} (not served yet)"
    reasons.result()
  }

  def files(format: FileFormat): TableFiles = DeltaFiles(format.asInstanceOf[DeltaParquetFileFormat].tablePath, format)

  def declined(format: FileFormat, reasons: Seq[String]): FileFormat with DeclinedFormat =
    new DeclinedDeltaParquetFileFormat(reasons, format.asInstanceOf[DeltaParquetFileFormat])

  /** The columns (dotted paths) whose type Delta widened after files were written. */
  private def widenedColumns(schema: StructType, prefix: String): Seq[String] = schema.fields.toSeq.flatMap { f =>
    val path = prefix + f.name
    val here = if (f.metadata.contains(TypeChangesKey)) Seq(path) else Nil
    here ++ nested(f.dataType, path)
  }

  private def nested(t: DataType, path: String): Seq[String] = t match {
    case s: StructType => widenedColumns(s, path + ".")
    case a: ArrayType => nested(a.elementType, path + ".element")
    case m: MapType => nested(m.keyType, path + ".key") ++ nested(m.valueType, path + ".value")
    case _ => Nil
  }
}
