package lmspark.shim

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.schema.LogicalTypeAnnotation.{DateLogicalTypeAnnotation, DecimalLogicalTypeAnnotation, IntLogicalTypeAnnotation, UUIDLogicalTypeAnnotation}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.types._

/**
 * The (Parquet type, Spark type) pairs that Spark 3.5 reads differently from the 4.x lines, whose
 * rules lmspark's reader follows: 3.5's vectorized reader has no type widening (INT32 as LONG or
 * DOUBLE, FLOAT as DOUBLE, decimals of another precision or scale, DATE as TIMESTAMP_NTZ), refuses
 * INT96 as TIMESTAMP_NTZ and BINARY decimals of up to 18 digits, and has no UUID logical type.
 * lmspark declines those pairs, so Spark's own reader gives 3.5's answer or 3.5's error.
 */
object LineReadRules {
  def refusal(descriptor: ColumnDescriptor, sparkType: DataType): Option[String] = {
    val t = descriptor.getPrimitiveType
    val ann = t.getLogicalTypeAnnotation
    val why = s"Spark 3.5 reads ${t.getPrimitiveTypeName}${Option(ann).fold("")(a => s" ($a)")} as " +
      s"${sparkType.catalogString} differently from lmspark"
    def sameDecimal(dt: DecimalType): Boolean = ann match {
      case d: DecimalLogicalTypeAnnotation => d.getPrecision == dt.precision && d.getScale == dt.scale
      case _ => false
    }
    def unsigned(bits: Int): Boolean = ann match {
      case i: IntLogicalTypeAnnotation => !i.isSigned && i.getBitWidth == bits
      case _ => false
    }
    val refused = (t.getPrimitiveTypeName, sparkType) match {
      case (_, _) if ann.isInstanceOf[UUIDLogicalTypeAnnotation] => true
      case (PrimitiveTypeName.INT32, LongType) => !unsigned(32)
      case (PrimitiveTypeName.INT32, DoubleType) => true
      case (PrimitiveTypeName.INT32, TimestampNTZType) => ann.isInstanceOf[DateLogicalTypeAnnotation]
      case (PrimitiveTypeName.INT64, dt: DecimalType) => !(sameDecimal(dt) || (unsigned(64) && dt.precision == 20 && dt.scale == 0))
      case (PrimitiveTypeName.FLOAT, DoubleType) => true
      case (PrimitiveTypeName.INT96, TimestampNTZType) => true
      // 3.5 reads BINARY decimals only above 18 digits (canReadAsBinaryDecimal)
      case (PrimitiveTypeName.BINARY, dt: DecimalType) => dt.precision <= 18 || !sameDecimal(dt)
      case (_, dt: DecimalType) => !sameDecimal(dt)
      case _ => false
    }
    if (refused) Some(why) else None
  }
}
