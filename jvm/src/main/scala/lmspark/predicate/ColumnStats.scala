package lmspark.predicate

/** What metadata says about one column over some rows (a row group, or one page): bounds as
  * Catalyst values of the column's Spark type, already converted from Parquet (rebased,
  * unsigned-widened, rescaled) and already checked (a [[ColumnStats]] is only built from metadata
  * that passed lmspark's sanity checks).
  *
  * @param min a lower bound of the non-null values, if known (`minExact`: it is one of them)
  * @param max an upper bound of the non-null values, if known (`maxExact`: it is one of them)
  * @param nullCount the number of NULLs, if known
  * @param rowCount the number of rows
  * @param mayHaveNaN for FLOAT / DOUBLE: NaN values may be present even though the bounds exclude
  *        them (Parquet writers leave NaN out of min/max); always true for floating types unless
  *        proven otherwise
  * Invariant: `min <= max` in Spark's ordering when both are set; `nullCount <= rowCount`;
  * `nullCount == rowCount` means every value is NULL (and then bounds are unset). */
final case class ColumnStats(
    min: Option[Any],
    max: Option[Any],
    nullCount: Option[Long],
    rowCount: Long,
    minExact: Boolean = false,
    maxExact: Boolean = false,
    mayHaveNaN: Boolean = false) {
  def allNull: Boolean = nullCount.contains(rowCount)
}
