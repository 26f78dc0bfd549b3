package lmspark

/**
 * Everything that differs between Spark versions, and every Spark-private API we cannot avoid.
 * The rest of lmspark calls Spark only through public APIs and these objects, so supporting
 * another Spark version means another copy of this folder.
 *
 * Files:
 *  - `SparkScanShim.scala`: the shape of `FileSourceScanExec` (its constructor fields).
 *  - `SparkInternals.scala`: Spark-internal helpers used by the reader (datetime rebase checks,
 *    constant-vector population).
 */
package object shim
