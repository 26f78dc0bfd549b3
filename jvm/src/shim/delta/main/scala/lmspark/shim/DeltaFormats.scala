package lmspark.shim

import org.apache.spark.sql.delta.{DeltaParquetFileFormat, NoMapping}
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

/**
 * What lmspark reads of a Delta scan, decided from Delta's format (the same API in every Delta
 * release lmspark builds against). A scan reads as plain Parquet when Delta's reader would hand
 * the file to Spark's unchanged: no deletion vectors marked in the scan (`tablePath` is set only
 * when Delta rewrote the scan to drop deleted rows), no column mapping, not a change-data-feed
 * read, splits and pushdown allowed, no Delta-internal column, no widened column type.
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
    if (f.tablePath.isDefined)
      reasons += "Delta deletion vectors (files of this table have deleted rows; not served yet)"
    if (f.columnMappingMode != NoMapping)
      reasons += s"Delta column mapping, mode ${f.columnMappingMode.name} (not served yet)"
    if (!f.optimizationsEnabled) reasons += "Delta reads this scan unsplit and without filter pushdown"
    val internal = requiredSchema.fieldNames.filter(n =>
      n == DeltaParquetFileFormat.IS_ROW_DELETED_COLUMN_NAME || n == DeltaParquetFileFormat.ROW_INDEX_COLUMN_NAME)
    if (internal.nonEmpty) reasons += s"reads Delta's internal columns (${internal.mkString(", ")})"
    val widened = widenedColumns(f.referenceSchema, "")
    if (widened.nonEmpty) reasons += s"Delta type widening, columns ${widened.mkString(", ")} (not served yet)"
    reasons.result()
  }

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
