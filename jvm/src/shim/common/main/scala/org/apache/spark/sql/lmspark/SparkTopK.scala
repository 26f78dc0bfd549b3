package org.apache.spark.sql.lmspark

/**
 * Spark's own per-task top-k, private to Spark (hence this package): `Utils.takeOrdered`, which
 * `TakeOrderedAndProjectExec` and `RDD.takeOrdered` run on each partition. Which rows it keeps
 * among ties depends on every row offered and its position, so a scan that must hand
 * `TakeOrderedAndProject` exactly the rows Spark's scan would have left runs this same function.
 */
object SparkTopK {
  def takeOrdered[T](input: Iterator[T], num: Int, ord: Ordering[T]): Iterator[T] =
    org.apache.spark.util.collection.Utils.takeOrdered(input, num)(ord)
}
