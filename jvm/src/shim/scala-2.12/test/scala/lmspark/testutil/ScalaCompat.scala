package lmspark.testutil

/** Collection types the tests name that differ between Scala 2.12 and 2.13; here 2.12's, from
  * scala-collection-compat (which Spark 3.5 ships). */
object ScalaCompat {
  type ArraySeq[A] = scala.collection.compat.immutable.ArraySeq[A]
  val ArraySeq: scala.collection.compat.immutable.ArraySeq.type = scala.collection.compat.immutable.ArraySeq
}
