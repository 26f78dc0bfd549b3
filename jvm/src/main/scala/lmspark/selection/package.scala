package lmspark

/** Row selections: which rows of a row group are still alive during a scan, and how each column
  * reader walks them. Pure values and cursors over primitive arrays: nothing here knows decoders,
  * pages' bytes, files or Spark plans.
  *
  * Files:
  *  - `RowSelection.scala`: the immutable value (two hidden backings), its constructors
  *    (booleans, mask words, runs, selectors, row ranges) and operations; [[Backing]].
  *  - `Runs.scala`: the run-length backing [[RunsSelection]] and [[RunsBuilder]].
  *  - `Mask.scala`: the long-word bitmask backing [[MaskSelection]].
  *  - `Bits.scala`: word-at-a-time bit helpers (popcount, next set / clear bit, extract, deposit).
  *  - `Algebra.scala`: `andThen`, `intersection`, `union` for each backing.
  *  - `RowRanges.scala`: sorted disjoint row ranges (page-index output, pruned regions).
  *  - `ScanRanges.scala`: [[PageLocations]] (a chunk's offset index) -> pages with selected rows ->
  *    coalesced [[ByteRanges]].
  *  - `SelectionCursor.scala`: one reader's walk over a selection: read n / skip n / mask chunks,
  *    with pruned pages always skipped.
  *  - `SelectionPolicy.scala`: `auto | selectors | mask` (+ threshold) resolved once into a
  *    [[SelectionStrategy]].
  */
package object selection
