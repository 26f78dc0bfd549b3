package lmspark.predicate

/** A predicate simplified under a guarantee: `predicate` agrees with the original on every row the
  * guarantee covers; `conjunctsRemoved` top-level conjuncts of the original were proven TRUE for
  * all those rows and dropped. `False` means no covered row can pass. */
final case class Simplified(predicate: Predicate, conjunctsRemoved: Int)

/** Simplification with a guarantee (after Arrow's `SimplifyWithGuarantee`): the guarantee is what
  * [[ColumnStats]] say of each column (`min <= c <= max`, null counts, NaN), over some rows. */
object Guarantees {

  /** Simplifies `p` for rows where `stats(column.index)` holds (None: nothing known). */
  def simplify(p: Predicate, stats: Int => Option[ColumnStats]): Simplified =
    Simplified(p, 0) // TODO(predicate helper)

  /** True iff some row whose value of column `column` is one of `values` (or NULL, when
    * `mayBeNull`) could pass `p`, other columns being unknown. Used with a chunk's whole
    * dictionary. */
  def canMatchValues(p: Predicate, column: Int, values: IndexedSeq[Any], mayBeNull: Boolean): Boolean =
    true // TODO(predicate helper)

  /** `p` with every `=` / `IN` / `<=>` leaf on `column` whose values are all proven absent
    * (`absent(value)`, e.g. by a bloom filter) replaced by `False`, then simplified. */
  def withAbsentValues(p: Predicate, column: Int, absent: Any => Boolean): Predicate =
    p // TODO(predicate helper)

  /** The columns (`ColumnRef.index`) `p` reads. */
  def columns(p: Predicate): Set[Int] = Set.empty // TODO(predicate helper)
}
