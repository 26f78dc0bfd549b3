package lmspark.column

import org.apache.spark.sql.types.DataType

/** The shape of one nested requested column as one file holds it: Spark's type tree, each node
  * annotated with the Parquet levels that place it (Spark's `ParquetColumn` levels, under the same
  * rules: a list or map node's levels are its annotated group's, its element, key and value sit one
  * repetition and one definition level deeper).
  *
  * Every node has slots: its entries in its vector. A leaf's level entry is a slot of node N when
  * its repetition level is at most `slotRep` and its definition level at least `slotDef` (the top
  * node: one slot per record; a list's element: one per element of its innermost list). The value
  * at a slot is non-null when the definition level is at least `definedAt`.
  *
  * Invariants: `slotDef <= definedAt`; children of a struct share its `slotRep` and `slotDef`; the
  * children of a list or map have `slotRep = elementRep` and `slotDef = elementDef`. */
sealed abstract class NestedShape {
  def sparkType: DataType
  def definedAt: Int
  def slotRep: Int
  def slotDef: Int
}

object NestedShape {

  /** A leaf read from plan column `column` (a leaf chunk of the file); `repDefs(r)` is the definition
    * level of its r-th repeated ancestor (see [[NestedLeafReader]]). */
  final case class Leaf(sparkType: DataType, column: Int, definedAt: Int, slotRep: Int, slotDef: Int,
      repDefs: Array[Int]) extends NestedShape

  /** A node the file lacks (a requested struct field it does not have, or a group none of whose
    * requested leaves it has): null at every slot, as in Spark. */
  final case class Absent(sparkType: DataType, slotRep: Int, slotDef: Int) extends NestedShape {
    def definedAt: Int = slotDef
  }

  /** A struct: `fields` in the order of its Spark type; `carriers`, fields read only for the
    * struct's null bits (Spark 4.1+ reads one when every requested field is missing from the file). */
  final case class Struct(sparkType: DataType, fields: IndexedSeq[NestedShape], carriers: IndexedSeq[NestedShape],
      definedAt: Int, slotRep: Int, slotDef: Int) extends NestedShape

  /** A list (one child: the element) or a map (two: key and value). An entry with repetition level
    * at most `elementRep` and definition level at least `elementDef` is one of its elements. */
  final case class Repeated(sparkType: DataType, children: IndexedSeq[NestedShape], definedAt: Int,
      slotRep: Int, slotDef: Int) extends NestedShape {
    def elementRep: Int = children.head.slotRep
    def elementDef: Int = children.head.slotDef
  }

  /** The leaves of `s` that are read, depth first (fields before carriers). */
  def leaves(s: NestedShape): IndexedSeq[Leaf] = s match {
    case l: Leaf => IndexedSeq(l)
    case _: Absent => IndexedSeq.empty
    case st: Struct => (st.fields ++ st.carriers).flatMap(leaves)
    case r: Repeated => r.children.flatMap(leaves)
  }
}
