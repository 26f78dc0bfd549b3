package lmspark.testutil

import org.apache.parquet.schema.LogicalTypeAnnotation

/** The UNKNOWN logical type (always-null columns), which parquet-java builds from 1.16 on. */
object UnknownLogicalType {
  val annotation: Option[LogicalTypeAnnotation] = Some(LogicalTypeAnnotation.unknownType())
}
