package lmspark.testutil

/** Collection types the tests name that differ between Scala 2.12 and 2.13; here 2.13's. */
object ScalaCompat {
  type ArraySeq[A] = scala.collection.immutable.ArraySeq[A]
  val ArraySeq: scala.collection.immutable.ArraySeq.type = scala.collection.immutable.ArraySeq
}
