package lmspark.shim

/** Whether Spark's vectorized reader reads a column as NullType (Spark 4.1 added its NullTypeUpdater;
  * 3.5 and 4.0 do not, so lmspark leaves such columns to Spark's reader there). */
object NullTypeReads {
  val supported: Boolean = false
}
