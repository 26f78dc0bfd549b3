package lmspark.predicate

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.StructType

/** The scan's `dataFilters` split into conjuncts, each translated or left to Spark.
  * @param predicate the AND of the translated conjuncts (`True` when none)
  * @param translated the conjuncts that were translated (Catalyst form, for EXPLAIN)
  * @param untranslated the conjuncts that stay only in Spark's `Filter` above the scan */
final case class Translation(predicate: Predicate, translated: Seq[Expression], untranslated: Seq[Expression])

/** Translates Catalyst filter expressions into [[Predicate]]s over the requested schema. */
object CatalystTranslator {
  def translate(dataFilters: Seq[Expression], requiredSchema: StructType, caseSensitive: Boolean): Translation =
    Translation(Predicate.True, Nil, dataFilters) // TODO(predicate helper)
}
