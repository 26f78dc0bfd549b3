package lmspark.shim

/**
 * A file format lmspark declined to replace: it reads exactly as the format it stands in for, and
 * carries why, so that `EXPLAIN` prints it in the scan's `Format` field. Implemented by
 * `lmspark.plan.DeclinedParquetFileFormat` (Spark's Parquet) and by the Delta shims' subclass of
 * Delta's `DeltaParquetFileFormat`.
 *
 * Invariant: `reasons` is never empty.
 */
trait DeclinedFormat {
  def reasons: Seq[String]
}

object DeclinedFormat {
  /** The `Format` text of a declined Parquet scan. */
  def describe(reasons: Seq[String]): String = s"Parquet [lmspark fallback: ${reasons.mkString("; ")}]"
}
