package lmspark.column

import scala.util.control.NonFatal

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.column.statistics.Statistics
import org.apache.parquet.column.values.bloomfilter.BloomFilter
import org.apache.parquet.format.Encoding
import org.apache.parquet.internal.column.columnindex.ColumnIndex
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.ColumnOrder.ColumnOrderName
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._

import lmspark.decode.{Dictionary, DictionaryIdsReplay, ValuesDecoder}
import lmspark.predicate.{ColumnPages, ColumnStats}
import lmspark.selection.PageLocations

/** One column's metadata values (chunk statistics, page index bounds, dictionary entries) as
  * Catalyst values of the Spark type it is read as, converted by the same [[VectorWriter]] that
  * converts its rows (the writer [[ColumnReaderFactory.writerFor]] gives the pair): the metadata
  * bytes are PLAIN-decoded by the decoder data pages use, written into a small vector by the
  * writer and read back as copies. So rebasing, unsigned widening, INT96, decimals of every
  * physical type and every widening give exactly the values the rows get. A conversion that
  * throws (an ancient value under EXCEPTION rebase mode, an overflow) makes that value unknown,
  * never an error.
  *
  * Everything is checked before it is returned; what is not trustworthy is dropped:
  *  - bounds never come from INT96 columns or columns whose column order is undefined (no order),
  *    from strings under a collation other than the default UTF8_BINARY, or from a NaN bound (then
  *    the null count is still used). Old writers' statistics in the deprecated `min` / `max` fields
  *    (a signed byte-wise order for binaries) are already dropped by parquet-java's footer
  *    conversion for every type whose order is not signed (strings, binaries, unsigned integers,
  *    decimals), unless min == max, and for binary columns of PARQUET-251 writers;
  *  - bounds of a truncating read (INT32 read as byte / short) are used only when both lie in the
  *    target range (the conversion is then the identity on every value between them);
  *  - statistics or a page index that contradict themselves (min > max in Spark's ordering, a null
  *    count outside [0, rows], nulls in a REQUIRED column, bounds on an all-null chunk) are
  *    rejected whole (`Left`).
  * Exactness: chunk bounds of fixed-width types are values of the chunk (writers store actual
  * values); BINARY / FIXED_LEN_BYTE_ARRAY bounds may be truncated by writers, and page index
  * bounds are only bounds per the format, so those are never exact. FLOAT / DOUBLE: `mayHaveNaN`
  * is always true (writers leave NaN out of bounds and the format's nan_count is not read), a
  * zero lower bound is -0.0 and a zero upper bound +0.0 (the format says either zero may hide the
  * other; Spark compares them equal).
  *
  * Not thread-safe (the writer may keep a scratch array); one instance per column and task. */
final class SparkValues private (
    descriptor: ColumnDescriptor,
    val sparkType: DataType,
    options: ColumnReadOptions,
    writer: VectorWriter) {
  import SparkValues._

  private[this] val primitive = descriptor.getPrimitiveType
  private[this] val physical = primitive.getPrimitiveTypeName
  private[this] val typeLength = primitive.getTypeLength
  private[this] val required = descriptor.getMaxDefinitionLevel == 0
  private[this] val floating = physical == PrimitiveTypeName.FLOAT || physical == PrimitiveTypeName.DOUBLE
  private[this] val binaryLike =
    physical == PrimitiveTypeName.BINARY || physical == PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY
  private[this] val ordering: Ordering[Any] = TypeUtils.getInterpretedOrdering(sparkType)

  /** Why no bound of this column is ever used, if so. */
  val boundsUnusable: Option[String] =
    if (physical == PrimitiveTypeName.INT96) Some("INT96 values have no defined order")
    else if (primitive.columnOrder().getColumnOrderName == ColumnOrderName.UNDEFINED) Some("the column order is undefined")
    else sparkType match {
      case st: StringType if !lmspark.shim.SparkLineApis.ordersByBytes(st) =>
        Some(s"${st.catalogString} may not order by bytes (only the default UTF8_BINARY collation does)")
      case _ => None
    }

  /** The inclusive range of physical INT32 values the writer converts without truncating. */
  private[this] val identityRange: Option[(Long, Long)] = (physical, sparkType) match {
    case (PrimitiveTypeName.INT32, ByteType) => Some((Byte.MinValue.toLong, Byte.MaxValue.toLong))
    case (PrimitiveTypeName.INT32, ShortType) => Some((Short.MinValue.toLong, Short.MaxValue.toLong))
    case _ => None
  }

  /** Chunk statistics as [[ColumnStats]], or why they are not used (unreliable or inconsistent). */
  def statistics(stats: Statistics[_], rowCount: Long): Either[String, ColumnStats] = {
    if (stats == null || stats.isEmpty) return Left("no statistics")
    if (rowCount < 0) return Left(s"negative row count $rowCount")
    val nulls = if (stats.isNumNullsSet) Some(stats.getNumNulls) else None
    if (nulls.isDefined) {
      val n = nulls.get
      if (n < 0 || n > rowCount) return Left(s"null count $n outside [0, $rowCount rows]")
      if (required && n > 0) return Left(s"null count $n in a REQUIRED column")
    }
    if (!stats.hasNonNullValue) {
      if (nulls.isEmpty) return Left("neither bounds nor a null count")
      return Right(ColumnStats(None, None, nulls, rowCount, mayHaveNaN = floating))
    }
    if (rowCount == 0 || nulls.contains(rowCount))
      return Left(s"bounds for a chunk of $rowCount rows whose null count is ${nulls.getOrElse("unknown")}")
    val (min, max) = bounds(stats.getMinBytes, stats.getMaxBytes)
    if (min.isDefined && max.isDefined && ordering.gt(min.get, max.get))
      return Left(s"min ${show(min.get)} > max ${show(max.get)}")
    val exact = !binaryLike
    Right(ColumnStats(min.map(lowZero), max.map(highZero), nulls, rowCount,
      minExact = exact && min.isDefined, maxExact = exact && max.isDefined, mayHaveNaN = floating))
  }

  /** Page statistics from a column index over `pages`, or why the index is ignored (inconsistent in
    * itself, with the offset index, or with the chunk statistics `chunk`). */
  def pages(ci: ColumnIndex, pages: PageLocations, chunk: Option[ColumnStats]): Either[String, ColumnPages] = {
    if (ci == null) return Left("no column index")
    val n = pages.pages
    val nullPages = ci.getNullPages
    val nullCounts = Option(ci.getNullCounts)
    val mins = ci.getMinValues
    val maxs = ci.getMaxValues
    if (nullPages.size != n || nullCounts.exists(_.size != n) || mins.size != n || maxs.size != n)
      return Left(s"the column index lists ${nullPages.size} pages (null counts for " +
        s"${nullCounts.fold("none")(_.size.toString)}), the offset index $n")
    val firstRows = new Array[Long](n)
    val endRows = new Array[Long](n)
    val stats = new Array[ColumnStats](n)
    var nullSum = 0L
    var i = 0
    while (i < n) {
      firstRows(i) = pages.firstRow(i)
      endRows(i) = pages.endRow(i)
      val rows = endRows(i) - firstRows(i)
      val nc = nullCounts.map(_.get(i).longValue)
      if (nc.isDefined) {
        val c = nc.get
        if (c < 0 || c > rows) return Left(s"page $i has null count $c outside [0, $rows rows]")
        if (required && c > 0) return Left(s"page $i of a REQUIRED column has null count $c")
        nullSum += c
      }
      stats(i) =
        if (nullPages.get(i)) {
          if (required) return Left(s"page $i of a REQUIRED column is a null page")
          if (!nc.contains(rows))
            return Left(s"page $i is a null page but its null count is ${nc.fold("unknown")(_.toString)} of $rows rows")
          ColumnStats(None, None, Some(rows), rows, mayHaveNaN = floating)
        } else {
          if (nc.contains(rows)) return Left(s"page $i is not a null page but all its $rows rows are null")
          val (min, max) = bounds(bytesOf(mins.get(i)), bytesOf(maxs.get(i)))
          if (min.isDefined && max.isDefined && ordering.gt(min.get, max.get))
            return Left(s"page $i has min ${show(min.get)} > max ${show(max.get)}")
          val chunkMin = chunk.flatMap(_.min)
          val chunkMax = chunk.flatMap(_.max)
          if (max.isDefined && chunkMin.isDefined && ordering.lt(max.get, chunkMin.get))
            return Left(s"page $i has max ${show(max.get)} below the chunk's min ${show(chunkMin.get)}")
          if (min.isDefined && chunkMax.isDefined && ordering.gt(min.get, chunkMax.get))
            return Left(s"page $i has min ${show(min.get)} above the chunk's max ${show(chunkMax.get)}")
          ColumnStats(min.map(lowZero), max.map(highZero), nc, rows, mayHaveNaN = floating)
        }
      i += 1
    }
    val chunkNulls = chunk.flatMap(_.nullCount)
    if (nullCounts.isDefined && chunkNulls.isDefined && chunkNulls.get != nullSum)
      return Left(s"the pages' null counts add up to $nullSum, the chunk's statistics say ${chunkNulls.get}")
    Right(ColumnPages(firstRows, endRows, stats.toIndexedSeq))
  }

  /** Every dictionary entry as a Spark value (entry `i` at index `i`); None for BOOLEAN. The
    * entries are converted a block at a time, when one of a block is first read
    * ([[SparkValues.Entries]]: 64 entries, then blocks doubling), so a reader that stops early
    * converts little (dictionary pruning stops at the first entry that could pass), and one that
    * reads all converts in a few calls. Reading an entry of a block that does not convert (an
    * ancient value under EXCEPTION rebase mode) raises [[SparkValues.Unconvertible]]. */
  def dictionary(d: Dictionary): Option[IndexedSeq[Any]] =
    if (physical == PrimitiveTypeName.BOOLEAN) None
    else Some(new SparkValues.Entries(d.size, (from, n) => {
      val replay = new DictionaryIdsReplay(d)
      replay.set(Array.tabulate(n)(from + _), n)
      convert(replay, n)
    }))

  /** Whether `value` (a Catalyst value of the Spark type) is certainly absent from the chunk per
    * its bloom filter; false when unsure (no exact physical counterpart, unsupported type). */
  def absentByBloom(bloom: BloomFilter, value: Any): Boolean =
    value != null && (ColumnReaderFactory.physicalLiterals(descriptor, sparkType, options, value) match {
      case None => false
      case Some(literals) => literals.forall(l => !bloom.findHash(hashOf(bloom, l)))
    })

  /** Whether `bloom` denies a value the chunk certainly holds (an exact bound of `stats`): such a
    * bloom filter is wrong and must not be used. */
  def bloomDeniesBounds(bloom: BloomFilter, stats: ColumnStats): Boolean =
    (stats.minExact && stats.min.exists(absentByBloom(bloom, _))) ||
      (stats.maxExact && stats.max.exists(absentByBloom(bloom, _)))

  // ---- internals ----

  /** A zero lower bound of a floating column as -0.0 (it may hide -0.0 values). */
  private def lowZero(v: Any): Any = v match {
    case f: Float if f == 0.0f => -0.0f
    case d: Double if d == 0.0 => -0.0
    case other => other
  }

  /** A zero upper bound of a floating column as +0.0. */
  private def highZero(v: Any): Any = v match {
    case f: Float if f == 0.0f => 0.0f
    case d: Double if d == 0.0 => 0.0
    case other => other
  }

  /** Lower and upper bounds from their physical bytes (as Statistics / ColumnIndex give them):
    * each converted, or None when unusable for this column, malformed, NaN, unconvertible or
    * outside a truncating read's identity range. */
  private def bounds(minBytes: Array[Byte], maxBytes: Array[Byte]): (Option[Any], Option[Any]) = {
    if (boundsUnusable.isDefined) return (None, None)
    val range = identityRange.forall { case (lo, hi) =>
      Seq(minBytes, maxBytes).forall(b => b != null && b.length == 4 && { val x = int32(b); x >= lo && x <= hi })
    }
    if (!range) return (None, None)
    def one(b: Array[Byte]): Option[Any] =
      plain(b).flatMap(p => convertPlain(p, 1)).map(_.head).filter {
        case f: Float => !f.isNaN
        case d: Double => !d.isNaN
        case _ => true
      }
    val min = one(minBytes)
    val max = one(maxBytes)
    // A NaN bound makes the other one meaningless too (the writer's order was not Spark's).
    if (floating && (min.isEmpty || max.isEmpty)) (None, None) else (min, max)
  }

  private def int32(b: Array[Byte]): Int =
    (b(0) & 0xff) | ((b(1) & 0xff) << 8) | ((b(2) & 0xff) << 16) | ((b(3) & 0xff) << 24)

  /** One physical value's bytes (little-endian for fixed-width numbers, raw for binaries) as a
    * PLAIN-encoded page of one value, or None when the length does not fit the type. */
  private def plain(b: Array[Byte]): Option[Array[Byte]] = {
    if (b == null) return None
    def fixed(width: Int) = if (b.length == width) Some(b) else None
    physical match {
      case PrimitiveTypeName.BOOLEAN => if (b.length == 1 && (b(0) & 0xfe) == 0) Some(Array(b(0))) else None
      case PrimitiveTypeName.INT32 | PrimitiveTypeName.FLOAT => fixed(4)
      case PrimitiveTypeName.INT64 | PrimitiveTypeName.DOUBLE => fixed(8)
      case PrimitiveTypeName.INT96 => fixed(12)
      case PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY => fixed(typeLength)
      case PrimitiveTypeName.BINARY =>
        val out = new Array[Byte](4 + b.length)
        val n = b.length
        out(0) = n.toByte; out(1) = (n >>> 8).toByte; out(2) = (n >>> 16).toByte; out(3) = (n >>> 24).toByte
        System.arraycopy(b, 0, out, 4, n)
        Some(out)
    }
  }

  /** `n` PLAIN values converted through the writer, decoded by the decoder PLAIN data pages use. */
  private def convertPlain(bytes: Array[Byte], n: Int): Option[IndexedSeq[Any]] =
    PageDecoders.create(Encoding.PLAIN, physical, typeLength).flatMap { dec =>
      try {
        dec.init(bytes, 0, bytes.length, n)
        through(dec, n)
      } catch { case NonFatal(_) => None }
    }

  /** The next `n` values of `dec` written by the writer into a scratch vector of the Spark type and
    * read back as Catalyst values (copies); None when the writer throws. */
  private def through(dec: ValuesDecoder, n: Int): Option[IndexedSeq[Any]] =
    try Some(convert(dec, n).toIndexedSeq)
    catch { case _: SparkValues.Unconvertible => None }

  /** The next `n` values of `dec` as Catalyst values (copies); [[SparkValues.Unconvertible]] when
    * the writer throws. */
  private def convert(dec: ValuesDecoder, n: Int): Array[Any] = {
    val v = new OnHeapColumnVector(math.max(n, 1), sparkType)
    try {
      writer.write(dec, n, v, 0)
      Array.tabulate[Any](n)(i => catalystValue(v, i))
    } catch { case NonFatal(e) => throw new SparkValues.Unconvertible(e) }
    finally v.close()
  }

  private def catalystValue(v: OnHeapColumnVector, i: Int): Any = sparkType match {
    case BooleanType => v.getBoolean(i)
    case ByteType => v.getByte(i)
    case ShortType => v.getShort(i)
    case IntegerType | DateType => v.getInt(i)
    case LongType | TimestampType | TimestampNTZType => v.getLong(i)
    case FloatType => v.getFloat(i)
    case DoubleType => v.getDouble(i)
    case _: StringType => v.getUTF8String(i).copy()
    case BinaryType => v.getBinary(i).clone()
    case d: DecimalType => v.getDecimal(i, d.precision, d.scale)
    case other => throw new IllegalStateException(s"no Catalyst value for $other") // writerFor pairs none
  }

  private def show(v: Any): String = v match {
    case b: Array[Byte] => b.map(x => f"${x & 0xff}%02x").mkString("0x", "", "")
    case other => String.valueOf(other)
  }
}

object SparkValues {

  /** Some values of a column could not be converted to Spark values (the writer threw). */
  final class Unconvertible(cause: Throwable) extends RuntimeException(cause)

  /** `length` values, converted a block at a time by `convert(from, n)` when one of the block is
    * first read, then kept. Block 0 is the first [[Entries.FirstBlock]] values, block `k > 0` the
    * values `[FirstBlock 2^(k-1), FirstBlock 2^k)`: an early stop converts one small block, a full
    * read about `log2(length / FirstBlock) + 1` blocks (each conversion sets up a column vector). A
    * block whose conversion throws is tried again on the next read of it. Observably immutable; not
    * thread-safe (one task's pruning reads it). */
  final class Entries private[SparkValues] (override val length: Int, convert: (Int, Int) => Array[Any])
      extends IndexedSeq[Any] {
    private[this] val blocks = new Array[Array[Any]](if (length == 0) 0 else Entries.blockOf(length - 1) + 1)

    override def apply(i: Int): Any = {
      if (i < 0 || i >= length) throw new IndexOutOfBoundsException(s"entry $i of $length")
      val b = Entries.blockOf(i)
      val from = Entries.blockStart(b)
      var vs = blocks(b)
      if (vs == null) {
        vs = convert(from, Entries.blockStart(b + 1).min(length) - from)
        blocks(b) = vs
      }
      vs(i - from)
    }
  }

  object Entries {
    /** Entries in block 0 (a power of two). */
    val FirstBlock = 64
    private[this] val firstLog = Integer.numberOfTrailingZeros(FirstBlock)

    /** The block holding entry `i >= 0`. */
    def blockOf(i: Int): Int = if (i < FirstBlock) 0 else 31 - Integer.numberOfLeadingZeros(i) - firstLog + 1

    /** The first entry of block `b` (Int.MaxValue past the last block an Int index can reach). */
    def blockStart(b: Int): Int =
      if (b == 0) 0 else math.min(FirstBlock.toLong << (b - 1), Int.MaxValue.toLong).toInt

    /** The entries of block `b` among `length`. */
    def block(b: Int, length: Int): Range = blockStart(b) until blockStart(b + 1).min(length)
  }

  /** Converter for a column lmspark reads (None when [[ColumnReaderFactory]] pairs no writer with
    * it). */
  def forColumn(descriptor: ColumnDescriptor, sparkType: DataType, options: ColumnReadOptions): Option[SparkValues] =
    ColumnReaderFactory.writerFor(descriptor, sparkType, options).toOption
      .map(w => new SparkValues(descriptor, sparkType, options, w))

  private def bytesOf(b: java.nio.ByteBuffer): Array[Byte] =
    if (b == null) null
    else {
      val d = b.duplicate()
      val out = new Array[Byte](d.remaining)
      d.get(out)
      out
    }

  private def hashOf(bloom: BloomFilter, literal: Any): Long = literal match {
    case i: java.lang.Integer => bloom.hash(i.intValue)
    case l: java.lang.Long => bloom.hash(l.longValue)
    case f: java.lang.Float => bloom.hash(f.floatValue)
    case d: java.lang.Double => bloom.hash(d.doubleValue)
    case b: Binary => bloom.hash(b)
    case other => throw new IllegalArgumentException(s"no bloom hash for $other")
  }
}
