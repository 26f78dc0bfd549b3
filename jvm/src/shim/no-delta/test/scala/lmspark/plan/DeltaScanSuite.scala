package lmspark.plan

import org.scalatest.funsuite.AnyFunSuite

import lmspark.shim.DeltaTables

/** On a line without a Delta Lake release (project/delta-lines.txt), Delta's tests cannot run:
  * canceled with the reason, never skipped silently. */
class DeltaScanSuite extends AnyFunSuite {
  test("Delta Lake tables through lmspark") {
    assert(!DeltaTables.available)
    cancel(s"no Delta Lake release is built for Spark ${org.apache.spark.SPARK_VERSION} (project/delta-lines.txt); " +
      "the Delta tests run on the lines that have one (make test-matrix)")
  }
}
