package lmspark.column

import java.util.concurrent.atomic.AtomicLong

import scala.util.Random

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.DataType

import lmspark.testutil._

/** One step of a read pattern: read or skip `n` rows. */
final case class Op(read: Boolean, n: Int) {
  override def toString: String = s"${if (read) "r" else "s"}$n"
}

/** How a pattern interleaves reads of one batch size with skips over a column chunk. */
sealed abstract class SkipPattern(val name: String) {
  override def toString: String = name
}

/** The read patterns of the matrix and skip suites, the reader runs that check them against an
  * oracle, and the model of which pages a run must decompress. */
object SkipPattern {

  /** Reads of `batch` rows to the end. */
  case object NoSkip extends SkipPattern("no-skip")

  /** read `batch`, skip `batch`, ... */
  case object Alternate extends SkipPattern("alternate")

  /** Seeded mix of reads of `batch` rows and skips of 0, 1, up to `3 * batch` and up to a third of
    * the chunk. */
  case object RandomSkips extends SkipPattern("random")

  /** Reads up to `batch` rows but not past the current page, then skips to the start of the page
    * after the next one: every other page is skipped whole. */
  case object WholePages extends SkipPattern("whole-pages")

  val all: Seq[SkipPattern] = Seq(NoSkip, Alternate, RandomSkips, WholePages)
  val withSkips: Seq[SkipPattern] = Seq(Alternate, RandomSkips, WholePages)

  val batchSizes: Seq[Int] = Seq(1, 3, 7, 64, 4096)

  /** The ops of `pattern` over a chunk laid out as `layout`. */
  def ops(pattern: SkipPattern, layout: ChunkLayout, batch: Int, seed: Long): IndexedSeq[Op] = {
    val rows = layout.rows
    val out = IndexedSeq.newBuilder[Op]
    var pos = 0L
    def add(read: Boolean, n: Long): Unit = {
      val k = math.min(n, rows - pos).toInt
      out += Op(read, k)
      pos += k
    }
    pattern match {
      case NoSkip => while (pos < rows) add(read = true, batch)
      case Alternate =>
        var read = true
        while (pos < rows) { add(read, batch); read = !read }
      case RandomSkips =>
        val r = new Random(seed)
        while (pos < rows) {
          r.nextInt(8) match {
            case 0 => add(read = false, 0)
            case 1 => add(read = false, 1)
            case 2 | 3 => add(read = false, r.nextInt(3 * batch + 1))
            case 4 => add(read = false, r.nextInt((rows / 3).toInt + 1))
            case _ => add(read = true, batch)
          }
        }
      case WholePages =>
        val starts = layout.pageStarts
        def nextStart(p: Long): Long = starts.find(_ > p).getOrElse(rows)
        while (pos < rows) {
          add(read = true, math.min(batch.toLong, nextStart(pos) - pos))
          if (pos < rows) add(read = false, nextStart(nextStart(pos)) - pos)
        }
    }
    out.result()
  }

  /** Pages a reader must decompress for `ops`: every data page a read touches or a skip ends
    * strictly inside of (the rest of it is then read or skipped row by row), plus the dictionary
    * page when one of those is dictionary-encoded. Pages skipped whole are never decompressed, nor
    * is the dictionary page when only plain pages are loaded. */
  def expectedPagesRead(ops: Seq[Op], layout: ChunkLayout): Int = {
    val starts = layout.pageStarts
    val loaded = new Array[Boolean](layout.pageRows.size)
    def pageOf(row: Long): Int = starts.lastIndexWhere(_ <= row)
    var pos = 0L
    for (op <- ops if op.n > 0) {
      val e = pos + op.n
      if (op.read) (pageOf(pos) to pageOf(e - 1)).foreach(loaded(_) = true)
      else if (e < layout.rows && starts(pageOf(e)) != e) loaded(pageOf(e)) = true
      pos = e
    }
    layout.pagesDecompressed(loaded.indices.filter(loaded(_)))
  }

  /** Runs `ops` on `reader`, checking every value read against `expected` (Spark-side values,
    * [[TestTypes.fromVector]] form) and the pages read against [[expectedPagesRead]]. `v` must
    * hold at least the largest read. Failures name `what` and the ops so far. */
  def run(what: String, reader: ColumnReader, sparkType: DataType, expected: IndexedSeq[Any], ops: Seq[Op],
      layout: ChunkLayout, v: OnHeapColumnVector): Unit = {
    var pos = 0
    var done = 0
    def opsSoFar: String = {
      val shown = ops.take(done + 1)
      (if (shown.size > 40) "... " + shown.takeRight(40).mkString(" ") else shown.mkString(" "))
    }
    try {
      for (op <- ops) {
        if (op.read) {
          v.reset()
          reader.read(op.n, v)
          var i = 0
          while (i < op.n) {
            val a = TestTypes.fromVector(sparkType, v, i)
            val e = expected(pos + i)
            if (!TestTypes.same(a, e))
              throw new AssertionError(s"$what: row ${pos + i} is ${TestTypes.show(a)}, expected ${TestTypes.show(e)} " +
                s"after ops [$opsSoFar]")
            i += 1
          }
        } else reader.skip(op.n)
        pos += op.n
        done += 1
      }
    } catch {
      case e: AssertionError => throw e
      case e: Exception => throw new AssertionError(s"$what after ops [$opsSoFar]: $e", e)
    }
    val pages = expectedPagesRead(ops, layout)
    if (reader.pagesRead != pages)
      throw new AssertionError(s"$what: read ${reader.pagesRead} pages, expected $pages of ${layout.pages} " +
        s"(ops [${ops.mkString(" ")}])")
  }

  /** Matrix cases (type x encoding mode x nulls x page version x codec x batch x pattern) run so
    * far in this JVM, per pattern. */
  val casesRun: Map[SkipPattern, AtomicLong] = all.map(p => p -> new AtomicLong).toMap
}
