package lmspark.shim

import org.apache.parquet.column.ColumnDescriptor
import org.apache.spark.sql.types.DataType

/** The (Parquet type, Spark type) pairs a line reads differently from the rules lmspark's reader
  * follows (Spark 4.x's `ParquetVectorUpdaterFactory`): none on the 4.x lines. */
object LineReadRules {
  def refusal(descriptor: ColumnDescriptor, sparkType: DataType): Option[String] = None
}
