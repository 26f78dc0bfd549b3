package lmspark.column

import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}

/** Turns the levels of one nested column's leaves into Spark's nested vectors: struct null bits,
  * list and map offsets and lengths, and null bits at every level (the leaves' values are already
  * at their slots, written by their [[NestedLeafReader]]s). It works on the entries each leaf read
  * since [[start]], call by call, so that a batch may be built by several reads (appends); it
  * allocates nothing per value.
  *
  * Every node is assembled from one representative leaf (the first leaf below it that is read):
  * its entries that are slots of the node ([[NestedShape]]) give the node's null bits and, for a
  * list or map, each element count. Before a node's children are assembled from their own
  * representative leaves, each is checked to describe the same structure as the node's, down to
  * the node's level; leaves that disagree (a malformed file) are an error, never misplaced values.
  *
  * Invariants: `leaf(k)` is the k-th leaf of [[NestedShape.leaves]]; a node's `next` is its next
  * slot in its vector, `elemNext` a list's or map's next element; carrier fields (read only for a
  * struct's null bits) write into vectors of their own. */
private[column] final class NestedAssembler(shape: NestedShape, capacity: Int) {
  import NestedAssembler.Node

  private[this] var leafCount = 0
  private[this] val root: Node = build(shape, -1, carrier = false)

  /** Leaf vectors, per leaf index, resolved by [[resolve]]. */
  val leafVectors = new Array[WritableColumnVector](leafCount)

  private def build(s: NestedShape, parentRep: Int, carrier: Boolean): Node = s match {
    case _: NestedShape.Leaf =>
      val k = leafCount; leafCount += 1
      new Node(s, Array.empty, 0, k, k, if (carrier) scratch(s) else null)
    case _: NestedShape.Absent => new Node(s, Array.empty, 0, -1, parentRep, if (carrier) scratch(s) else null)
    case st: NestedShape.Struct =>
      val first = leafCount
      val hasLeaves = NestedShape.leaves(st).nonEmpty
      val rep = if (hasLeaves) first else parentRep
      val kids = st.fields.map(build(_, rep, carrier = false)) ++ st.carriers.map(build(_, rep, carrier = true))
      new Node(if (hasLeaves) s else NestedShape.Absent(s.sparkType, s.slotRep, s.slotDef), kids.toArray,
        st.fields.length, -1, rep, if (carrier) scratch(s) else null)
    case r: NestedShape.Repeated =>
      val first = leafCount
      val hasLeaves = NestedShape.leaves(r).nonEmpty
      val rep = if (hasLeaves) first else parentRep
      val kids = r.children.map(build(_, rep, carrier = false))
      new Node(if (hasLeaves) s else NestedShape.Absent(s.sparkType, s.slotRep, s.slotDef), kids.toArray,
        kids.length, -1, rep, if (carrier) scratch(s) else null)
  }

  private def scratch(s: NestedShape): WritableColumnVector = new OnHeapColumnVector(capacity, s.sparkType)

  /** Starts a batch (`rowId == 0`: every count restarts, carriers' vectors are reset) or checks that
    * an append continues it at `rowId`. */
  def start(rowId: Int): Unit =
    if (rowId == 0) restart(root)
    else if (root.next != rowId)
      throw new IllegalStateException(s"internal error: nested append at row $rowId after ${root.next} rows")

  private def restart(n: Node): Unit = {
    n.next = 0; n.elemNext = 0
    if (n.own != null) n.own.reset()
    n.kids.foreach(restart)
  }

  /** Fills [[leafVectors]] from `top`, the column's vector. */
  def resolve(top: WritableColumnVector): Unit = resolve(root, top)

  private def resolve(n: Node, v: WritableColumnVector): Unit = {
    if (n.leaf >= 0) leafVectors(n.leaf) = v
    var k = 0
    while (k < n.kids.length) { resolve(n.kids(k), childVector(n, k, v)); k += 1 }
  }

  private def childVector(n: Node, k: Int, v: WritableColumnVector): WritableColumnVector =
    if (n.kids(k).own != null) n.kids(k).own else v.getChild(k)

  /** Assembles `top` from the entries of `levels(k)` from `from(k)` on; `fail(k, message)` is the
    * error for leaf k's input. */
  def assemble(top: WritableColumnVector, levels: Array[NestedLevels], from: Array[Int],
      fail: (Int, String) => Exception): Unit =
    assemble(root, top, levels, from, fail)

  private def assemble(n: Node, v: WritableColumnVector, levels: Array[NestedLevels], from: Array[Int],
      fail: (Int, String) => Exception): Unit = n.shape match {
    case _: NestedShape.Leaf => ()
    case _: NestedShape.Absent =>
      val c = slots(n, levels, from)
      v.reserve(n.next + c)
      v.putNulls(n.next, c)
      n.next += c
    case s: NestedShape.Struct =>
      val lv = levels(n.rep)
      val rep = lv.rep; val defs = lv.defs
      val sr = s.slotRep; val sd = s.slotDef; val da = s.definedAt
      v.reserve(n.next + slots(n, levels, from))
      var slot = n.next
      var i = from(n.rep)
      val end = lv.size
      while (i < end) {
        if (rep(i) <= sr && defs(i) >= sd) { if (defs(i) < da) v.putNull(slot); slot += 1 }
        i += 1
      }
      n.next = slot
      children(n, v, sr, da, levels, from, fail)
    case r: NestedShape.Repeated =>
      val lv = levels(n.rep)
      val rep = lv.rep; val defs = lv.defs
      val sr = r.slotRep; val sd = r.slotDef; val da = r.definedAt
      val er = r.elementRep; val ed = r.elementDef
      v.reserve(n.next + slots(n, levels, from))
      var slot = n.next
      var elem = n.elemNext
      var i = from(n.rep)
      val end = lv.size
      while (i < end) {
        if (rep(i) <= sr && defs(i) >= sd) {
          if (defs(i) < da) { v.putNull(slot); i += 1 }
          else {
            var len = 0
            var j = i
            while ({ if (rep(j) <= er && defs(j) >= ed) len += 1; j += 1; j < end && rep(j) > sr }) ()
            if (elem.toLong + len > Int.MaxValue) throw fail(n.rep, "list or map elements overflow a batch's offsets")
            v.putArray(slot, elem, len)
            elem += len
            i = j
          }
          slot += 1
        } else i += 1
      }
      n.next = slot
      n.elemNext = elem
      children(n, v, er, ed, levels, from, fail)
  }

  /** Checks each child's representative leaf against the node's (down to repetition level `fr`,
    * definition levels clamped at `cd`), then assembles the child. */
  private def children(n: Node, v: WritableColumnVector, fr: Int, cd: Int, levels: Array[NestedLevels],
      from: Array[Int], fail: (Int, String) => Exception): Unit = {
    var k = 0
    while (k < n.kids.length) {
      val c = n.kids(k)
      if (c.rep != n.rep) sameStructure(n.rep, c.rep, n.shape.slotDef, fr, cd, levels, from, fail)
      assemble(c, childVector(n, k, v), levels, from, fail)
      k += 1
    }
  }

  /** Whether leaves `a` and `b` agree on the entries with repetition level at most `fr` and
    * definition level at least `sd`: the same repetition levels, and definition levels clamped at `cd`. */
  private def sameStructure(a: Int, b: Int, sd: Int, fr: Int, cd: Int, levels: Array[NestedLevels],
      from: Array[Int], fail: (Int, String) => Exception): Unit = {
    val la = levels(a); val lb = levels(b)
    var i = from(a); var j = from(b)
    var more = true
    while (more) {
      while (i < la.size && !(la.rep(i) <= fr && la.defs(i) >= sd)) i += 1
      while (j < lb.size && !(lb.rep(j) <= fr && lb.defs(j) >= sd)) j += 1
      if (i == la.size || j == lb.size) {
        if (i != la.size || j != lb.size)
          throw fail(b, "the column's leaves disagree on its structure (one holds more entries than its sibling)")
        more = false
      } else {
        if (la.rep(i) != lb.rep(j) || math.min(la.defs(i), cd) != math.min(lb.defs(j), cd))
          throw fail(b, s"the column's leaves disagree on its structure (level entry $j: repetition/definition " +
            s"${lb.rep(j)}/${lb.defs(j)}, its sibling ${la.rep(i)}/${la.defs(i)})")
        i += 1; j += 1
      }
    }
  }

  /** The slots of node `n` among the entries read since the last call. */
  private def slots(n: Node, levels: Array[NestedLevels], from: Array[Int]): Int = {
    val lv = levels(n.rep)
    val sr = n.shape.slotRep; val sd = n.shape.slotDef
    var c = 0
    var i = from(n.rep)
    while (i < lv.size) { if (lv.rep(i) <= sr && lv.defs(i) >= sd) c += 1; i += 1 }
    c
  }

  /** The number of leaves. */
  def leaves: Int = leafCount
}

private object NestedAssembler {
  /** One node: its shape, children (a struct's carriers after its `outputs` fields), its leaf index
    * (leaves) or -1, the leaf it is assembled from (`rep`), and its own vector when it is a carrier. */
  final class Node(val shape: NestedShape, val kids: Array[Node], val outputs: Int, val leaf: Int, val rep: Int,
      val own: WritableColumnVector) {
    var next = 0
    var elemNext = 0
  }
}
