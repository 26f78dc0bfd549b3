package lmspark.shim

import org.apache.parquet.schema.MessageType
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

/** Spark 4.1+'s clipping of a file schema to a requested schema (what its vectorized reader reads):
  * unless `spark.sql.legacy.parquet.returnNullStructIfAllFieldsMissing`, a struct whose requested
  * fields are all missing keeps one field of the file's (a carrier) for its null bits. */
object ParquetClip {
  def clip(fileSchema: MessageType, requested: StructType, caseSensitive: Boolean, useFieldId: Boolean,
      nullStructIfFieldsMissing: Boolean): MessageType =
    ParquetReadSupport.clipParquetSchema(fileSchema, requested, caseSensitive, useFieldId, nullStructIfFieldsMissing)

  /** The session's `spark.sql.legacy.parquet.returnNullStructIfAllFieldsMissing`. */
  def nullStructIfFieldsMissing(conf: SQLConf): Boolean =
    conf.getConf(SQLConf.LEGACY_PARQUET_RETURN_NULL_STRUCT_IF_ALL_FIELDS_MISSING).asInstanceOf[Boolean]
}
