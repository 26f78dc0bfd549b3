package lmspark

/** Predicates over a scan's columns, and what metadata proves about them: Spark's `dataFilters`
  * translated into a small tree with exact Spark semantics, simplified under statistics
  * (row groups, pages), dictionaries and bloom filters.
  *
  * Files:
  *  - `Predicate.scala`: the tree ([[Predicate]], [[Term]], [[ColumnRef]], [[CompareOp]]), its folding
  *    constructors, negation normal form, and EXPLAIN `toString`s.
  *  - `Values.scala`: supported types, Spark's ordering / NaN, the order-preserving term casts and
  *    their evaluation, value formatting.
  *  - `Evaluator.scala`: three-valued evaluation on concrete values ([[Kleene]] outcome bits).
  *  - `ColumnStats.scala`: what metadata says about one column over some rows.
  *  - `StatsEval.scala`: a term's [[Domain]] under [[ColumnStats]] and a leaf's possible outcomes there.
  *  - `Guarantees.scala`: simplification under statistics, dictionary matching, bloom-filter absence.
  *  - `PageFilter.scala`: page-index filtering into [[lmspark.selection.RowRanges]].
  *  - `CatalystTranslator.scala`: Catalyst `dataFilters` -> [[Predicate]] (conjunct by conjunct).
  */
package object predicate
