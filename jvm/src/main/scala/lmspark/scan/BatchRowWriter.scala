package lmspark.scan

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/**
 * Turns the rows of a `ColumnarBatch` into `UnsafeRow`s, writing each field straight from its
 * `ColumnVector` with Spark's `UnsafeRowWriter`: no generic row, no projection. Column `k` of
 * the batch becomes field `k` of the row; `types(k)` is its Spark type.
 *
 * Invariants: one `UnsafeRowWriter` (one row, one buffer) is reused for every row, as Spark's own
 * projections do, so a returned row is valid only until the next call (copy it to keep it). The
 * per-column [[BatchRowWriter.FieldWriter]]s are chosen once, by data type, in
 * [[BatchRowWriter.fieldWriter]], the only type dispatch. Values are read with the vector's
 * getters, so dictionary-encoded vectors, constant vectors (partition values, missing columns)
 * and Spark's own vectors all read as they do for any other consumer. Not thread-safe.
 */
final class BatchRowWriter(types: Array[DataType]) {
  import BatchRowWriter._

  private[this] val numFields = types.length
  private[this] val fields: Array[FieldWriter] = types.map(fieldWriter)
  /** Initial variable-length space: 32 bytes per string / binary / wide decimal field. */
  private[this] val writer = new UnsafeRowWriter(numFields, 32 * fields.count(_.variableLength))
  /** The columns of the batch being written. */
  private[this] val vectors = new Array[ColumnVector](numFields)

  /** The rows of `batch` in order, field `k` from column `k`. Each row is valid until the next
    * `next()`; the iterator is valid until the next call of `rows`. */
  def rows(batch: ColumnarBatch): Iterator[UnsafeRow] = {
    if (batch.numCols() != numFields)
      throw new IllegalArgumentException(s"batch has ${batch.numCols()} columns, rows have $numFields fields")
    var k = 0
    while (k < numFields) { vectors(k) = batch.column(k); k += 1 }
    val n = batch.numRows()
    new Iterator[UnsafeRow] {
      private[this] var rowId = 0
      override def hasNext: Boolean = rowId < n
      override def next(): UnsafeRow = {
        if (rowId >= n) throw new NoSuchElementException("no more rows in the batch")
        val row = writeRow(rowId)
        rowId += 1
        row
      }
    }
  }

  private def writeRow(rowId: Int): UnsafeRow = {
    val w = writer
    w.reset()
    w.zeroOutNullBytes()
    var k = 0
    while (k < numFields) {
      val v = vectors(k)
      if (v.isNullAt(rowId)) fields(k).writeNull(w, k) else fields(k).write(w, k, v, rowId)
      k += 1
    }
    w.getRow
  }
}

object BatchRowWriter {

  /** Writes one field of the current row from a vector; stateless apart from its type's
    * parameters (decimal precision and scale). */
  sealed abstract class FieldWriter {
    /** Writes the non-null value at `rowId` of `v` as field `ordinal`. */
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit
    /** Marks field `ordinal` null. */
    def writeNull(w: UnsafeRowWriter, ordinal: Int): Unit = w.setNullAt(ordinal)
    /** Whether the value lives in the row's variable-length region. */
    def variableLength: Boolean = false
  }

  private object Booleans extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getBoolean(rowId))
  }
  private object Bytes extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getByte(rowId))
  }
  private object Shorts extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getShort(rowId))
  }
  /** int, date, year-month interval. */
  private object Ints extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getInt(rowId))
  }
  /** long, timestamp, timestamp_ntz, day-time interval. */
  private object Longs extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getLong(rowId))
  }
  private object Floats extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getFloat(rowId))
  }
  private object Doubles extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getDouble(rowId))
  }

  /** Strings of any collation: the vector's `UTF8String` view (no copy for plain Spark vectors)
    * is copied once, into the row. */
  private object Strings extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getUTF8String(rowId))
    override def variableLength: Boolean = true
  }

  /** Binary. A `WritableColumnVector` serves any byte-array column as a `UTF8String` view of its
    * bytes (no intermediate array unless dictionary-encoded), which the row writer copies like a
    * byte array; other vectors (a constant partition vector) through `getBinary`. */
  private object Binaries extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = v match {
      case wv: WritableColumnVector => w.write(ordinal, wv.getUTF8String(rowId))
      case _ => w.write(ordinal, v.getBinary(rowId))
    }
    override def variableLength: Boolean = true
  }

  /** Decimals of precision <= 18: an unscaled long in the fixed-width slot. */
  private final class CompactDecimals(precision: Int, scale: Int) extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit =
      w.write(ordinal, v.getDecimal(rowId, precision, scale), precision, scale)
  }

  /** Decimals of precision > 18: 16 bytes reserved in the variable-length region even when null,
    * so that an `UnsafeRow.setDecimal` can later update the value in place (as Spark's
    * projections write them). */
  private final class WideDecimals(precision: Int, scale: Int) extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit =
      w.write(ordinal, v.getDecimal(rowId, precision, scale), precision, scale)
    override def writeNull(w: UnsafeRowWriter, ordinal: Int): Unit = w.write(ordinal, null: Decimal, precision, scale)
    override def variableLength: Boolean = true
  }

  /** NullType: every value is null. */
  private object Nulls extends FieldWriter {
    def write(w: UnsafeRowWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.setNullAt(ordinal)
  }

  /** The writer for a column of type `t`, or None when rows cannot hold it flat (nested,
    * interval, variant and other types this scan never produces). */
  def fieldWriterFor(t: DataType): Option[FieldWriter] = t match {
    case BooleanType => Some(Booleans)
    case ByteType => Some(Bytes)
    case ShortType => Some(Shorts)
    case IntegerType | DateType | _: YearMonthIntervalType => Some(Ints)
    case LongType | TimestampType | TimestampNTZType | _: DayTimeIntervalType => Some(Longs)
    case FloatType => Some(Floats)
    case DoubleType => Some(Doubles)
    case d: DecimalType if d.precision <= Decimal.MAX_LONG_DIGITS => Some(new CompactDecimals(d.precision, d.scale))
    case d: DecimalType => Some(new WideDecimals(d.precision, d.scale))
    case _: StringType => Some(Strings)
    case BinaryType => Some(Binaries)
    case NullType => Some(Nulls)
    case _ => None
  }

  /** Whether every column of `schema` can be written as a row field. */
  def supports(schema: StructType): Boolean = schema.fields.forall(f => fieldWriterFor(f.dataType).isDefined)

  private def fieldWriter(t: DataType): FieldWriter =
    fieldWriterFor(t).getOrElse(throw new IllegalArgumentException(s"lmspark cannot write ${t.catalogString} into rows"))
}
