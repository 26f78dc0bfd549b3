package lmspark.predicate

import org.apache.spark.unsafe.types.UTF8String

import lmspark.predicate.Predicate._

/** Three-valued truth values as bits, so a set of possible outcomes is an `Int`: `T | F | N`. */
object Kleene {
  final val T = 1
  final val F = 2
  final val N = 4
  final val All = 7

  /** The outcomes of `NOT x` for outcomes `bits` of `x` (TRUE and FALSE swap, NULL stays). */
  def negate(bits: Int): Int = (bits & N) | ((bits & T) << 1) | ((bits & F) >> 1)

  def and(a: Int, b: Int): Int =
    if (a == F || b == F) F else if (a == T && b == T) T else N

  def or(a: Int, b: Int): Int =
    if (a == T || b == T) T else if (a == F && b == F) F else N

  def show(v: Int): String = v match {
    case T => "TRUE"
    case F => "FALSE"
    case N => "NULL"
    case other => s"{${Seq(T -> "T", F -> "F", N -> "N").collect { case (b, s) if (other & b) != 0 => s }.mkString(",")}}"
  }
}

/** Evaluation of predicates on concrete values, with Spark's semantics: the three-valued result
  * (`Kleene.T`, `F` or `N`) Catalyst gives for the same expression on the same row. Used for
  * dictionary pruning ([[Guarantees.canMatchValues]]), for point domains in statistics, and as the
  * checked reference evaluator in tests. */
object Evaluator {

  /** The leaf's result for a value of its term (after the term's casts; `null` is NULL). */
  def leafFn(l: Leaf): Any => Int = {
    val dt = l.term.dataType
    l match {
      case Compare(_, op, value) =>
        val ord = Values.ordering(dt)
        val test = signTest(op)
        val nullResult = nullCompare(op)
        v => if (v == null) nullResult else if (test(ord.compare(v, value))) Kleene.T else Kleene.F
      case In(_, values, hasNull) =>
        val member = membership(values, Values.ordering(dt))
        val miss = if (hasNull) Kleene.N else Kleene.F
        v => if (v == null) Kleene.N else if (member(v)) Kleene.T else miss
      case IsNull(_) => v => if (v == null) Kleene.T else Kleene.F
      case IsNotNull(_) => v => if (v == null) Kleene.F else Kleene.T
      case StartsWith(_, p) => stringFn(_.startsWith(p))
      case EndsWith(_, s) => stringFn(_.endsWith(s))
      case Contains(_, s) => stringFn(_.contains(s))
    }
  }

  /** Whether a comparison's sign (of `value compare literal`) satisfies `op`. */
  def signTest(op: CompareOp): Int => Boolean = {
    import CompareOp._
    op match {
      case Eq | NullSafeEq => _ == 0
      case Lt => _ < 0
      case Le => _ <= 0
      case Gt => _ > 0
      case Ge => _ >= 0
    }
  }

  /** A comparison's result on NULL: FALSE for `<=>`, NULL for the others. */
  def nullCompare(op: CompareOp): Int = if (op == CompareOp.NullSafeEq) Kleene.F else Kleene.N

  private def stringFn(f: UTF8String => Boolean): Any => Int =
    v => if (v == null) Kleene.N else if (f(v.asInstanceOf[UTF8String])) Kleene.T else Kleene.F

  /** Whether a value equals one of `values` under `ord` (binary search over a sorted copy for
    * long lists). */
  def membership(values: IndexedSeq[Any], ord: Ordering[Any]): Any => Boolean =
    if (values.size <= 8) v => values.exists(x => ord.equiv(x, v))
    else {
      val sorted = values.toArray[Any].sorted(ord)
      v => {
        var lo = 0
        var hi = sorted.length - 1
        var found = false
        while (!found && lo <= hi) {
          val mid = (lo + hi) >>> 1
          val c = ord.compare(sorted(mid), v)
          if (c == 0) found = true else if (c < 0) lo = mid + 1 else hi = mid - 1
        }
        found
      }
    }

  /** A leaf's result from a column value (applying the term's casts first). */
  def columnLeafFn(l: Leaf): Any => Int = {
    val f = leafFn(l)
    if (l.term.casts.isEmpty) f
    else {
      val c = Values.termCaster(l.term)
      v => f(c(v))
    }
  }

  /** `p` compiled into a function from a row (column index -> Catalyst value, `null` for NULL) to
    * its three-valued result. Not thread-safe. */
  def compile(p: Predicate): (Int => Any) => Int = p match {
    case True => _ => Kleene.T
    case False => _ => Kleene.F
    case l: Leaf =>
      val f = columnLeafFn(l)
      val i = l.term.column.index
      row => f(row(i))
    case And(cs) =>
      val fs = cs.map(compile).toArray
      row => {
        var r = Kleene.T
        var i = 0
        while (i < fs.length && r != Kleene.F) { r = Kleene.and(r, fs(i)(row)); i += 1 }
        r
      }
    case Or(cs) =>
      val fs = cs.map(compile).toArray
      row => {
        var r = Kleene.F
        var i = 0
        while (i < fs.length && r != Kleene.T) { r = Kleene.or(r, fs(i)(row)); i += 1 }
        r
      }
    case Not(c) =>
      val f = compile(c)
      row => Kleene.negate(f(row))
  }

  /** `p`'s three-valued result on one row. */
  def eval(p: Predicate, row: Int => Any): Int = compile(p)(row)
}
