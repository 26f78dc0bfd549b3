package lmspark.shim

/** Whether Spark's vectorized reader reads a column as NullType: from Spark 4.1 on, any leaf read as
  * NullType is all nulls (its `NullTypeUpdater`), whatever its physical type. */
object NullTypeReads {
  val supported: Boolean = true
}
