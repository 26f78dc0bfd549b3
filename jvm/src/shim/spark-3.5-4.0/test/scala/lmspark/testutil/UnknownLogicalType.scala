package lmspark.testutil

import org.apache.parquet.schema.LogicalTypeAnnotation

/** The UNKNOWN logical type (always-null columns), which parquet-java builds only from 1.16 on
  * (Spark 4.1); absent on the 3.5 and 4.0 lines. */
object UnknownLogicalType {
  val annotation: Option[LogicalTypeAnnotation] = None
}
