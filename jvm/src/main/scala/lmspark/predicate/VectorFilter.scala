package lmspark.predicate

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}
import org.apache.spark.unsafe.types.UTF8String

import lmspark.predicate.Predicate._
import lmspark.shim.SparkLineApis

/** A predicate over one column compiled for vectors: `evaluate` computes, for rows `[0, n)` of a
  * vector of that column, whether the predicate is TRUE (Spark's three-valued result, exactly as
  * [[Evaluator]] gives it row by row).
  *
  * Evaluation is columnar: every leaf fills a whole array of Kleene results in one tight loop typed by
  * the column's Spark type (ints, longs, floats, doubles and UTF8_BINARY strings; any other type, and
  * leaves under casts, go through [[Evaluator]] on boxed values), and AND / OR / NOT combine those
  * arrays. A dictionary-encoded vector is evaluated once per dictionary entry (`evaluateDictionary`
  * gives the entries' results, which the caller keeps per dictionary) and each row's id is then tested
  * against that bitmap: one bit test per row instead of a comparison.
  *
  * Invariants: `p` reads only `column` (no other column); results are exact for NULL rows (the
  * predicate's result on NULL, computed once), NaN (greatest, equal to itself) and -0.0 (= 0.0).
  * Not thread-safe (scratch arrays are reused). */
final class VectorFilter(val predicate: Predicate, val column: ColumnRef) {
  require(Guarantees.columns(predicate).forall(_ == column.index),
    s"a vector filter reads one column ($column), got $predicate")

  private[this] val dataType = column.dataType
  /** Whether a NULL row passes. */
  val nullPasses: Boolean = Evaluator.compile(predicate)(_ => null) == Kleene.T

  /** Built on first use, after every field the compilation reads. */
  private[this] lazy val root: Node = compile(predicate)
  private[this] var result: Array[Byte] = new Array[Byte](0)

  /** Row `i`'s Kleene result ([[Kleene]] T = 1, F = 2, N = 4) for `i < n`: bit 0 is set exactly on
    * the rows where the predicate is TRUE. The array is scratch, valid until the next call. `v` must
    * not be dictionary-encoded (its getters decode lazily otherwise, which is correct but slow). */
  def evaluate(v: ColumnVector, n: Int): Array[Byte] = kleene(v, n)

  /** The predicate's TRUE-ness per dictionary entry, 1 or 0: `entries` holds the dictionary's
    * values (no NULLs) as a vector of the column's type. */
  def evaluateDictionary(entries: ColumnVector, size: Int): Array[Byte] = {
    val r = kleene(entries, size)
    val out = new Array[Byte](size)
    var i = 0
    while (i < size) { out(i) = (r(i) & Kleene.T).toByte; i += 1 }
    out
  }

  /** Like `evaluate`, for a vector whose non-null rows are dictionary ids (`ids`) of a dictionary
    * whose entries passed as `passing` (from `evaluateDictionary`): sets `out(i)` to 1 where the
    * predicate is TRUE on row `i`, else 0. The id of a NULL row is never read. */
  def evaluateIds(v: ColumnVector, ids: ColumnVector, passing: Array[Byte], n: Int, out: Array[Byte]): Unit = {
    var i = 0
    if (!v.hasNull) {
      while (i < n) { out(i) = passing(ids.getInt(i)); i += 1 }
    } else {
      val np: Byte = if (nullPasses) 1 else 0
      while (i < n) {
        out(i) = if (v.isNullAt(i)) np else passing(ids.getInt(i))
        i += 1
      }
    }
  }

  private def kleene(v: ColumnVector, n: Int): Array[Byte] = {
    if (result.length < n) result = new Array[Byte](math.max(n, 1024))
    root.eval(v, n, result)
    result
  }

  // ---- compiled tree -------------------------------------------------------------------------

  /** A node fills `out[0, n)` with Kleene results for rows `[0, n)` of the vector. */
  private abstract class Node { def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit }

  private def compile(p: Predicate): Node = p match {
    case Predicate.True => constant(Kleene.T)
    case Predicate.False => constant(Kleene.F)
    case And(cs) =>
      val (range, rest) = fuseRange(cs)
      val children = range.toSeq ++ rest.map(compile)
      if (children.size == 1) children.head else combine(children.toArray, and = true)
    case Or(cs) => combine(cs.map(compile).toArray, and = false)
    case Not(c) =>
      val child = compile(c)
      new Node {
        def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
          child.eval(v, n, out)
          var i = 0
          while (i < n) { out(i) = Kleene.negate(out(i)).toByte; i += 1 }
        }
      }
    case l: Leaf => leaf(l)
  }

  private def constant(k: Int): Node = new Node {
    def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = java.util.Arrays.fill(out, 0, n, k.toByte)
  }

  private def combine(children: Array[Node], and: Boolean): Node = new Node {
    private[this] var scratch = new Array[Byte](0)
    def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
      if (scratch.length < n) scratch = new Array[Byte](math.max(n, 1024))
      children(0).eval(v, n, out)
      var c = 1
      while (c < children.length) {
        children(c).eval(v, n, scratch)
        var i = 0
        if (and) while (i < n) { out(i) = Kleene.and(out(i), scratch(i)).toByte; i += 1 }
        else while (i < n) { out(i) = Kleene.or(out(i), scratch(i)).toByte; i += 1 }
        c += 1
      }
    }
  }

  /** A leaf: a typed kernel when the term is the bare column of a kernel type, else [[Evaluator]]. */
  private def leaf(l: Leaf): Node = {
    if (l.term.casts.nonEmpty) return generic(l)
    l match {
      case IsNull(_) => nulls(isNull = true)
      case IsNotNull(_) => nulls(isNull = false)
      case Compare(_, op, value) => kind match {
        case Kind.DecimalInt | Kind.DecimalLong => unscaled(value).fold(generic(l))(u => compareUnscaled(op, u))
        case Kind.Int => compareInts(op, value)
        case Kind.Long => compareLongs(op, value)
        case Kind.Double | Kind.Float => compareFloating(op, value)
        case Kind.String => compareStrings(op, value.asInstanceOf[UTF8String])
        case _ => generic(l)
      }
      case In(_, values, hasNull) if kind == Kind.Int || kind == Kind.Long =>
        val sorted = values.map(v => intOrLong(v)).toArray.sorted
        val miss = if (hasNull) Kleene.N else Kleene.F
        val ints = kind == Kind.Int
        rowwise((v, i) => if (java.util.Arrays.binarySearch(sorted, if (ints) intAt(v, i) else v.getLong(i)) >= 0) Kleene.T else miss)
      case In(_, values, hasNull) if (kind == Kind.DecimalInt || kind == Kind.DecimalLong) && values.forall(unscaled(_).isDefined) =>
        val sorted = values.map(unscaled(_).get).toArray.sorted
        val miss = if (hasNull) Kleene.N else Kleene.F
        val ints = kind == Kind.DecimalInt
        rowwise((v, i) => if (java.util.Arrays.binarySearch(sorted, if (ints) v.getInt(i).toLong else v.getLong(i)) >= 0) Kleene.T else miss)
      case In(_, values, hasNull) if kind == Kind.String =>
        val set = new java.util.HashSet[UTF8String]()
        values.foreach(x => set.add(x.asInstanceOf[UTF8String]))
        val miss = if (hasNull) Kleene.N else Kleene.F
        rowwise((v, i) => if (set.contains(v.getUTF8String(i))) Kleene.T else miss)
      case StartsWith(_, s) if kind == Kind.String => rowwise((v, i) => bool(v.getUTF8String(i).startsWith(s)))
      case EndsWith(_, s) if kind == Kind.String => rowwise((v, i) => bool(v.getUTF8String(i).endsWith(s)))
      case Contains(_, s) if kind == Kind.String =>
        val search = new ByteSearch(s)
        rowwise((v, i) => bool(search.in(v.getUTF8String(i))))
      case _ => generic(l)
    }
  }

  @inline private def bool(b: Boolean): Int = if (b) Kleene.T else Kleene.F

  /** A lower (`>`, `>=`) or upper (`<`, `<=`) bound of a bare integral or decimal column: (lower?,
    * the inclusive bound, whether the side is empty: `> max` or `< min`); None for any other leaf. */
  private def bound(p: Predicate): Option[(Boolean, Long, Boolean)] = p match {
    case Compare(t, op, value) if t.casts.isEmpty && (op == CompareOp.Lt || op == CompareOp.Le ||
        op == CompareOp.Gt || op == CompareOp.Ge) =>
      val lit: Option[Long] = kind match {
        case Kind.Int | Kind.Long => Some(intOrLong(value))
        case Kind.DecimalInt | Kind.DecimalLong => unscaled(value)
        case _ => None
      }
      lit.map { x =>
        op match {
          case CompareOp.Ge => (true, x, false)
          case CompareOp.Gt => (true, x + 1, x == Long.MaxValue)
          case CompareOp.Le => (false, x, false)
          case _ => (false, x - 1, x == Long.MinValue)
        }
      }
    case _ => None
  }

  /** One lower and one upper bound among a conjunction's terms, fused into one `RangeNode` (one pass
    * over the vector instead of two and a combine), and the other terms. */
  private def fuseRange(cs: Seq[Predicate]): (Option[Node], Seq[Predicate]) = {
    val lower = cs.find(c => bound(c).exists(_._1))
    val upper = cs.find(c => bound(c).exists(!_._1))
    (lower, upper) match {
      case (Some(l), Some(u)) =>
        val (_, lo, loEmpty) = bound(l).get
        val (_, hi, hiEmpty) = bound(u).get
        (Some(new RangeNode(lo, hi, loEmpty || hiEmpty)), cs.filterNot(c => (c eq l) || (c eq u)))
      case _ => (None, cs)
    }
  }

  /** `lo <= x <= hi` on an integral or decimal (unscaled) column, one unsigned comparison per row;
    * NULL rows give NULL (the AND of two comparisons with NULL). */
  private final class RangeNode(lo: Long, hi: Long, empty: Boolean) extends Node {
    private[this] val none = empty || hi < lo
    private[this] val width = hi - lo // the span, unsigned (all of it when lo = min and hi = max)
    def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
      val hasNull = v.hasNull
      val ints = kind == Kind.Int || kind == Kind.DecimalInt
      var i = 0
      while (i < n) {
        out(i) =
          if (hasNull && v.isNullAt(i)) Kleene.N.toByte
          else if (none) Kleene.F.toByte
          else {
            val x: Long = if (ints) intAt(v, i) else v.getLong(i)
            if (java.lang.Long.compareUnsigned(x - lo, width) <= 0) Kleene.T.toByte else Kleene.F.toByte
          }
        i += 1
      }
    }
  }

  /** The kernel family of the column's type. */
  private object Kind {
    final val Int = 0; final val Long = 1; final val Float = 2; final val Double = 3; final val String = 4
    /** Decimals stored as unscaled ints (precision <= 9) or longs (<= 18) in Spark's vectors. */
    final val DecimalInt = 5; final val DecimalLong = 6
    final val Other = 7
  }

  private[this] val kind: Int = dataType match {
    case ByteType | ShortType | IntegerType | DateType => Kind.Int
    case LongType | TimestampType | TimestampNTZType => Kind.Long
    case FloatType => Kind.Float
    case DoubleType => Kind.Double
    case st: StringType if Values.binaryString(st) => Kind.String
    case d: DecimalType if d.precision <= Decimal.MAX_INT_DIGITS => Kind.DecimalInt
    case d: DecimalType if d.precision <= Decimal.MAX_LONG_DIGITS => Kind.DecimalLong
    case _ => Kind.Other
  }

  /** A decimal literal as an unscaled value at the column's scale, when it is exactly one (a literal
    * with more fractional digits, or out of range, goes to the generic path). */
  private def unscaled(x: Any): Option[Long] = (dataType, x) match {
    case (d: DecimalType, v: Decimal) =>
      try {
        val u = v.toJavaBigDecimal.setScale(d.scale, java.math.RoundingMode.UNNECESSARY).unscaledValue
        if (u.bitLength < 64) Some(u.longValue) else None
      } catch { case _: ArithmeticException => None }
    case _ => None
  }

  @inline private def intAt(v: ColumnVector, i: Int): Long = dataType match {
    case ByteType => v.getByte(i).toLong
    case ShortType => v.getShort(i).toLong
    case _ => v.getInt(i).toLong
  }

  private def intOrLong(x: Any): Long = x match {
    case b: Byte => b.toLong
    case s: Short => s.toLong
    case i: Int => i.toLong
    case l: Long => l
    case other => throw new IllegalArgumentException(s"not an integral literal: $other")
  }

  /** A leaf's Kleene result on the non-null row `i` of `v` (a class, so that no row boxes its index). */
  private abstract class RowTest { def apply(v: ColumnVector, i: Int): Int }

  /** NULL rows give NULL (every leaf built here does); other rows `f(v, i)`. */
  private def rowwise(f: RowTest): Node = {
    val nullResult = Kleene.N.toByte
    new Node {
      def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
        var i = 0
        val hasNull = v.hasNull
        while (i < n) {
          out(i) = if (hasNull && v.isNullAt(i)) nullResult else f(v, i).toByte
          i += 1
        }
      }
    }
  }

  private def nulls(isNull: Boolean): Node = new Node {
    private[this] val whenNull = (if (isNull) Kleene.T else Kleene.F).toByte
    private[this] val whenValue = (if (isNull) Kleene.F else Kleene.T).toByte
    def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
      if (!v.hasNull) java.util.Arrays.fill(out, 0, n, whenValue)
      else {
        var i = 0
        while (i < n) { out(i) = if (v.isNullAt(i)) whenNull else whenValue; i += 1 }
      }
    }
  }

  /** Fills `out` from the comparison of each row with a literal, read only for non-null rows (a NULL
    * row of a dictionary-encoded vector has no valid id to decode): bit `sign + 1` of `accepted` says
    * whether a row whose comparison has that sign passes. Each concrete node has its own loop, so
    * the JIT sees one getter and one comparison per loop (inlined), and no per-row call through a
    * function value. */
  private abstract class CompareNode(op: CompareOp) extends Node {
    protected[this] final val accepted: Int = op match {
      case CompareOp.Eq | CompareOp.NullSafeEq => 2
      case CompareOp.Lt => 1
      case CompareOp.Le => 3
      case CompareOp.Gt => 4
      case CompareOp.Ge => 6
    }
    protected[this] final val nullResult: Byte = Evaluator.nullCompare(op).toByte
    @inline protected[this] final def result(sign: Int): Byte =
      if (((accepted >>> (sign + 1)) & 1) != 0) Kleene.T.toByte else Kleene.F.toByte
  }

  /** INT32 values (`getInt`), or with `width` 1 / 2 bytes and shorts, against a long literal. */
  private final class IntCompare(op: CompareOp, lit: Long, width: Int) extends CompareNode(op) {
    def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
      val hasNull = v.hasNull
      var i = 0
      while (i < n) {
        out(i) =
          if (hasNull && v.isNullAt(i)) nullResult
          else {
            val x: Long = if (width == 4) v.getInt(i) else if (width == 2) v.getShort(i) else v.getByte(i)
            result(java.lang.Long.compare(x, lit))
          }
        i += 1
      }
    }
  }

  private final class LongCompare(op: CompareOp, lit: Long) extends CompareNode(op) {
    def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
      val hasNull = v.hasNull
      var i = 0
      while (i < n) {
        out(i) = if (hasNull && v.isNullAt(i)) nullResult else result(java.lang.Long.compare(v.getLong(i), lit))
        i += 1
      }
    }
  }

  private final class FloatingCompare(op: CompareOp, lit: Double, float: Boolean) extends CompareNode(op) {
    def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
      val hasNull = v.hasNull
      var i = 0
      while (i < n) {
        out(i) =
          if (hasNull && v.isNullAt(i)) nullResult
          else result(compareDoubles(if (float) v.getFloat(i).toDouble else v.getDouble(i), lit))
        i += 1
      }
    }
  }

  private final class StringCompare(op: CompareOp, lit: UTF8String) extends CompareNode(op) {
    def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
      val hasNull = v.hasNull
      var i = 0
      while (i < n) {
        out(i) =
          if (hasNull && v.isNullAt(i)) nullResult
          else result(Integer.signum(SparkLineApis.binaryCompare(v.getUTF8String(i), lit)))
        i += 1
      }
    }
  }

  private def compareInts(op: CompareOp, value: Any): Node = {
    val lit = intOrLong(value)
    dataType match {
      case ByteType => new IntCompare(op, lit, 1)
      case ShortType => new IntCompare(op, lit, 2)
      case _ => new IntCompare(op, lit, 4)
    }
  }

  private def compareUnscaled(op: CompareOp, lit: Long): Node =
    if (kind == Kind.DecimalInt) new IntCompare(op, lit, 4) else new LongCompare(op, lit)

  private def compareLongs(op: CompareOp, value: Any): Node = new LongCompare(op, intOrLong(value))

  /** Spark's order for floating point: NaN greatest and equal to itself, -0.0 == 0.0. */
  @inline private def compareDoubles(a: Double, b: Double): Int =
    if (a < b) -1 else if (a > b) 1 else if (a == b) 0
    else java.lang.Boolean.compare(java.lang.Double.isNaN(a), java.lang.Double.isNaN(b))

  private def compareFloating(op: CompareOp, value: Any): Node = {
    val lit = value match {
      case f: Float => f.toDouble
      case d: Double => d
      case other => throw new IllegalArgumentException(s"not a floating literal: $other")
    }
    new FloatingCompare(op, lit, dataType == FloatType)
  }

  private def compareStrings(op: CompareOp, lit: UTF8String): Node = new StringCompare(op, lit)

  /** Any leaf, through [[Evaluator]] on each row's boxed Catalyst value (casts applied). */
  private def generic(l: Leaf): Node = {
    val f = Evaluator.columnLeafFn(l)
    new Node {
      def eval(v: ColumnVector, n: Int, out: Array[Byte]): Unit = {
        val batch = new ColumnarBatch(Array(v))
        batch.setNumRows(n)
        var i = 0
        while (i < n) {
          val r: InternalRow = batch.getRow(i)
          out(i) = f(if (r.isNullAt(0)) null else r.get(0, dataType)).toByte
          i += 1
        }
      }
    }
  }
}
