package lmspark.scan

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter, UnsafeWriter}
import org.apache.spark.unsafe.Platform
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
  /** Initial variable-length space: 32 bytes per string / binary / wide decimal / nested field. */
  private[this] val writer = new UnsafeRowWriter(numFields, 32 * types.count(t => fieldWriterFor(t, null).forall(_.variableLength)))
  private[this] val fields: Array[FieldWriter] = types.map(fieldWriter(_, writer))
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

  /** Writes one field of the current row, or one element of an array, from a vector (`w` is the
    * row's or the array's writer); stateless apart from its type's parameters (decimal precision
    * and scale) and, for nested types, the writers of their parts, made once for the row's buffer. */
  sealed abstract class FieldWriter {
    /** Writes the non-null value at `rowId` of `v` as field (or element) `ordinal`. */
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit
    /** Marks field (or element) `ordinal` null. */
    def writeNull(w: UnsafeWriter, ordinal: Int): Unit = w match {
      case r: UnsafeRowWriter => r.setNullAt(ordinal)
      case a => elementBytes match {
        case 1 => a.setNull1Bytes(ordinal)
        case 2 => a.setNull2Bytes(ordinal)
        case 4 => a.setNull4Bytes(ordinal)
        case _ => a.setNull8Bytes(ordinal)
      }
    }
    /** Whether the value lives in the row's variable-length region. */
    def variableLength: Boolean = false
    /** The bytes of its slot in an array (8 for values held by offset and size). */
    def elementBytes: Int = 8
  }

  private object Booleans extends FieldWriter {
    override def elementBytes: Int = 1
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getBoolean(rowId))
  }
  private object Bytes extends FieldWriter {
    override def elementBytes: Int = 1
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getByte(rowId))
  }
  private object Shorts extends FieldWriter {
    override def elementBytes: Int = 2
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getShort(rowId))
  }
  /** int, date, year-month interval. */
  private object Ints extends FieldWriter {
    override def elementBytes: Int = 4
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getInt(rowId))
  }
  /** long, timestamp, timestamp_ntz, day-time interval. */
  private object Longs extends FieldWriter {
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getLong(rowId))
  }
  private object Floats extends FieldWriter {
    override def elementBytes: Int = 4
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getFloat(rowId))
  }
  private object Doubles extends FieldWriter {
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getDouble(rowId))
  }

  /** Strings of any collation: the vector's `UTF8String` view (no copy for plain Spark vectors)
    * is copied once, into the row. */
  private object Strings extends FieldWriter {
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = w.write(ordinal, v.getUTF8String(rowId))
    override def variableLength: Boolean = true
  }

  /** Binary. A `WritableColumnVector` serves any byte-array column as a `UTF8String` view of its
    * bytes (no intermediate array unless dictionary-encoded), which the row writer copies like a
    * byte array; other vectors (a constant partition vector) through `getBinary`. */
  private object Binaries extends FieldWriter {
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = v match {
      case wv: WritableColumnVector => w.write(ordinal, wv.getUTF8String(rowId))
      case _ => w.write(ordinal, v.getBinary(rowId))
    }
    override def variableLength: Boolean = true
  }

  /** Decimals of precision <= 18: an unscaled long in the fixed-width slot. */
  private final class CompactDecimals(precision: Int, scale: Int) extends FieldWriter {
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit =
      w.write(ordinal, v.getDecimal(rowId, precision, scale), precision, scale)
  }

  /** Decimals of precision > 18: 16 bytes reserved in the variable-length region even when null,
    * so that an `UnsafeRow.setDecimal` can later update the value in place (as Spark's
    * projections write them). */
  private final class WideDecimals(precision: Int, scale: Int) extends FieldWriter {
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit =
      w.write(ordinal, v.getDecimal(rowId, precision, scale), precision, scale)
    override def writeNull(w: UnsafeWriter, ordinal: Int): Unit = w match {
      case r: UnsafeRowWriter => r.write(ordinal, null: Decimal, precision, scale)
      case a => a.setNull8Bytes(ordinal)
    }
    override def variableLength: Boolean = true
  }

  /** NullType: every value is null. */
  private object Nulls extends FieldWriter {
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = writeNull(w, ordinal)
    override def elementBytes: Int = 1
  }

  /** A struct: its fields written by a row writer nested in the parent's buffer. */
  private final class Structs(t: StructType, parent: UnsafeWriter) extends FieldWriter {
    private[this] val row = new UnsafeRowWriter(parent, t.length)
    private[this] val fields = t.fields.map(f => fieldWriter(f.dataType, row))
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = {
      val start = w.cursor()
      row.resetRowWriter()
      var k = 0
      while (k < fields.length) {
        val c = v.getChild(k)
        if (c.isNullAt(rowId)) fields(k).writeNull(row, k) else fields(k).write(row, k, c, rowId)
        k += 1
      }
      w.setOffsetAndSizeFromPreviousCursor(ordinal, start)
    }
    override def variableLength: Boolean = true
  }

  /** The elements `[offset, offset + length)` of `data` into `aw`, an array writer in the buffer. */
  private def writeElements(aw: UnsafeArrayWriter, element: FieldWriter, data: ColumnVector, offset: Int, length: Int): Unit = {
    aw.initialize(length)
    var i = 0
    while (i < length) {
      if (data.isNullAt(offset + i)) element.writeNull(aw, i) else element.write(aw, i, data, offset + i)
      i += 1
    }
  }

  /** A list: Spark's `UnsafeArrayData` layout, written from the vector's offsets and lengths. */
  private final class Arrays(t: ArrayType, parent: UnsafeWriter) extends FieldWriter {
    private[this] val element = fieldWriter(t.elementType, null)
    private[this] val array = new UnsafeArrayWriter(parent, element.elementBytes)
    private[this] val elementWriter = fieldWriter(t.elementType, array)
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = {
      val wv = v.asInstanceOf[WritableColumnVector]
      val start = w.cursor()
      writeElements(array, elementWriter, wv.arrayData(), wv.getArrayOffset(rowId), wv.getArrayLength(rowId))
      w.setOffsetAndSizeFromPreviousCursor(ordinal, start)
    }
    override def variableLength: Boolean = true
  }

  /** A map: Spark's `UnsafeMapData` layout (the key array's size, the key array, the value array). */
  private final class Maps(t: MapType, parent: UnsafeWriter) extends FieldWriter {
    private[this] val keys = new UnsafeArrayWriter(parent, fieldWriter(t.keyType, null).elementBytes)
    private[this] val values = new UnsafeArrayWriter(parent, fieldWriter(t.valueType, null).elementBytes)
    private[this] val keyWriter = fieldWriter(t.keyType, keys)
    private[this] val valueWriter = fieldWriter(t.valueType, values)
    def write(w: UnsafeWriter, ordinal: Int, v: ColumnVector, rowId: Int): Unit = {
      val wv = v.asInstanceOf[WritableColumnVector]
      val offset = wv.getArrayOffset(rowId)
      val length = wv.getArrayLength(rowId)
      val start = w.cursor()
      w.grow(8)
      w.increaseCursor(8)
      writeElements(keys, keyWriter, wv.getChild(0), offset, length)
      Platform.putLong(w.getBuffer, start, w.cursor() - start - 8L)
      writeElements(values, valueWriter, wv.getChild(1), offset, length)
      w.setOffsetAndSizeFromPreviousCursor(ordinal, start)
    }
    override def variableLength: Boolean = true
  }

  /** The writer for a column of type `t` written into `parent`'s buffer (null: only to ask whether
    * and how it can be written), or None when rows cannot hold it (interval, variant and other
    * types this scan never produces). */
  def fieldWriterFor(t: DataType, parent: UnsafeWriter): Option[FieldWriter] = t match {
    case s: StructType =>
      if (s.fields.forall(f => fieldWriterFor(f.dataType, null).isDefined))
        Some(if (parent == null) new Structs(s, new UnsafeRowWriter(0)) else new Structs(s, parent)) else None
    case a: ArrayType =>
      if (fieldWriterFor(a.elementType, null).isDefined)
        Some(if (parent == null) new Arrays(a, new UnsafeRowWriter(0)) else new Arrays(a, parent)) else None
    case m: MapType =>
      if (fieldWriterFor(m.keyType, null).isDefined && fieldWriterFor(m.valueType, null).isDefined)
        Some(if (parent == null) new Maps(m, new UnsafeRowWriter(0)) else new Maps(m, parent)) else None
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
  def supports(schema: StructType): Boolean = schema.fields.forall(f => fieldWriterFor(f.dataType, null).isDefined)

  private def fieldWriter(t: DataType, parent: UnsafeWriter): FieldWriter =
    fieldWriterFor(t, parent).getOrElse(throw new IllegalArgumentException(s"lmspark cannot write ${t.catalogString} into rows"))
}
