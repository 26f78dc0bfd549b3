package lmspark.predicate

import scala.util.Random

import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import lmspark.predicate.PredicateGen._
import lmspark.predicate.Predicate._

/** [[VectorFilter]]'s columnar kernels (typed comparisons, fused ranges, IN lists, string tests,
  * the generic path under casts) against Catalyst evaluating the same one-column predicate on every
  * row: random column types, data with NULLs and extremes, random predicate trees, and conjunctions
  * built to hold a lower and an upper bound of the column (the fused range), with bounds at the
  * type's extremes. */
class VectorFilterPropertySuite extends AnyFunSuite with PropertyCases {

  private def pick[T](r: Random, xs: Seq[T]): T = xs(r.nextInt(xs.size))

  /** Types with a typed kernel, and a few without. */
  private val Types: IndexedSeq[DataType] = IndexedSeq(ByteType, ShortType, IntegerType, LongType, DateType,
    TimestampType, FloatType, DoubleType, StringType, DecimalType(5, 2), DecimalType(12, 4), DecimalType(18, 2),
    DecimalType(25, 5), BooleanType)

  /** Rows `[0, n)` of `values` in a vector of `dt`, as Spark's readers store them. */
  private def vector(dt: DataType, values: Array[Any]): WritableColumnVector = {
    val v = new OnHeapColumnVector(math.max(values.length, 1), dt)
    for ((x, i) <- values.zipWithIndex) {
      if (x == null) v.putNull(i)
      else (dt, x) match {
        case (BooleanType, b: Boolean) => v.putBoolean(i, b)
        case (ByteType, b: Byte) => v.putByte(i, b)
        case (ShortType, s: Short) => v.putShort(i, s)
        case (IntegerType | DateType, n: Int) => v.putInt(i, n)
        case (LongType | TimestampType, l: Long) => v.putLong(i, l)
        case (FloatType, f: Float) => v.putFloat(i, f)
        case (DoubleType, d: Double) => v.putDouble(i, d)
        case (StringType, s: UTF8String) => v.putByteArray(i, s.getBytes)
        case (d: DecimalType, x: Decimal) => v.putDecimal(i, x, d.precision)
        case other => throw new IllegalArgumentException(s"no vector write for $other")
      }
    }
    v
  }

  /** A bound of the bare column, sometimes at the type's extreme. */
  private def bound(c: ColumnRef, pool: IndexedSeq[Any], lower: Boolean, r: Random): Leaf = {
    val op =
      if (lower) pick(r, Seq(CompareOp.Gt, CompareOp.Ge)) else pick(r, Seq(CompareOp.Lt, CompareOp.Le))
    val extreme: Option[Any] = c.dataType match {
      case ByteType => Some(pick(r, Seq(Byte.MinValue, Byte.MaxValue)))
      case ShortType => Some(pick(r, Seq(Short.MinValue, Short.MaxValue)))
      case IntegerType | DateType => Some(pick(r, Seq(Int.MinValue, Int.MaxValue)))
      case LongType | TimestampType => Some(pick(r, Seq(Long.MinValue, Long.MaxValue)))
      case _ => None
    }
    val lit = if (extreme.isDefined && r.nextInt(5) == 0) extreme.get else literal(Term(c), pool, r)
    Compare(Term(c), op, lit)
  }

  private def randomCase(r: Random): (ColumnRef, Predicate, Array[Any]) = {
    val c = ColumnRef(0, "c0", pick(r, Types))
    val s = Schema(IndexedSeq(c), IndexedSeq(PredicateGen.pool(c.dataType, r)))
    val p = r.nextInt(3) match {
      case 0 => predicate(s, r)
      case _ =>
        val bounds = Seq(bound(c, s.pools(0), lower = true, r), bound(c, s.pools(0), lower = false, r))
        val others = Seq.fill(r.nextInt(2))(predicate(s, r, 1))
        val and = And(r.shuffle(bounds ++ others))
        if (r.nextInt(4) == 0) Not(and) else and
    }
    val n = pick(r, Seq(1, 7, 64, 300))
    (c, p, columnValues(c.dataType, s.pools(0), n, r))
  }

  test("evaluate agrees with Catalyst on every row") {
    cases("vector filter", 3000) { r =>
      val (c, p, values) = randomCase(r)
      val f = new VectorFilter(p, c)
      val out = f.evaluate(vector(c.dataType, values), values.length)
      val expr = toCatalyst(p)
      for (i <- values.indices) {
        val expected = catalyst(expr, PredicateGen.row(IndexedSeq(values), i)) == Kleene.T
        assert(((out(i) & 1) != 0) == expected, s"$p on ${values(i)} (row $i): Catalyst TRUE = $expected")
      }
      assert(f.nullPasses == (catalyst(expr, PredicateGen.row(IndexedSeq(Array[Any](null)), 0)) == Kleene.T))
    }
  }
}
