package lmspark.selection

import org.scalatest.funsuite.AnyFunSuite

import lmspark.selection.bench.SelectionBench

/** Runs every shape of [[SelectionBench]] once over tiny pages, both strategies and both pages, so
  * none can rot; checks both strategies return exactly the selected values. No timing assertions. */
class SelectionBenchSmokeSuite extends AnyFunSuite {

  test("every benchmark shape runs once under both strategies and returns the selected values") {
    val rows = 5000
    val pages = Seq(SelectionBench.plainPage(rows), SelectionBench.dictPage(rows))
    val v = new SelectionBench.Vectors
    SelectionBench.shapes.foreach { shape =>
      val sel = SelectionBench.selection(shape, rows)
      assert(sel.rowCount == rows, shape.name)
      pages.foreach { p =>
        val expected = SelectionBench.expectedSum(p, sel)
        Seq(SelectionStrategy.Selectors, SelectionStrategy.Mask).foreach { st =>
          assert(SelectionBench.scan(p, sel.withStrategy(st), st, v, verify = true) == expected, s"${shape.name} ${p.name} $st")
        }
      }
    }
    info(s"${SelectionBench.shapes.size} shapes x 2 pages x 2 strategies")
  }

  test("the harness end to end on tiny sizes (measure, crossings, report)") {
    val results = SelectionBench.measure(rows = 2048, warmup = 0, reps = 1, _ => ())
    assert(results.size == SelectionBench.shapes.size * 4)
    assert(SelectionBench.crossings(results).size == 6)
    assert(SelectionBench.markdown(results, 32, "smoke").contains("even_run4096_sel50"))
    assert(SelectionBench.csv(results).linesIterator.size == results.size + 1)
  }
}
