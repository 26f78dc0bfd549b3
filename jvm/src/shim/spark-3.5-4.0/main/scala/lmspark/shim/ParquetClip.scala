package lmspark.shim

import org.apache.parquet.schema.MessageType
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/** Spark 3.5 / 4.0's clipping of a file schema to a requested schema (what its vectorized reader
  * reads): a struct whose requested fields are all missing reads as null. */
object ParquetClip {
  def clip(fileSchema: MessageType, requested: StructType, caseSensitive: Boolean, useFieldId: Boolean,
      nullStructIfFieldsMissing: Boolean): MessageType =
    ParquetReadSupport.clipParquetSchema(fileSchema, requested, caseSensitive, useFieldId)

  /** The session's `returnNullStructIfAllFieldsMissing` (always the legacy behaviour before 4.1). */
  def nullStructIfFieldsMissing(conf: SQLConf): Boolean = true
}
