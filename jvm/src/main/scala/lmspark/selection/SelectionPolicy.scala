package lmspark.selection

/** How a scan decides between the two backings, as set by `spark.lmspark.selection.policy` and
  * `spark.lmspark.selection.threshold`. It is resolved once per selection (per row group) into a
  * [[SelectionStrategy]], which every column reader's [[SelectionCursor]] then follows. */
sealed trait SelectionPolicy {
  def resolve(selection: RowSelection): SelectionStrategy
}

object SelectionPolicy {

  /** Always runs: `skip(n)` / `read(n)` calls. */
  case object Selectors extends SelectionPolicy {
    def resolve(selection: RowSelection): SelectionStrategy = SelectionStrategy.Selectors
  }

  /** Always a mask: decode covered rows, then keep the selected ones. */
  case object Mask extends SelectionPolicy {
    def resolve(selection: RowSelection): SelectionStrategy = SelectionStrategy.Mask
  }

  /** A mask when the mean run length is below `threshold` rows, runs otherwise. */
  final case class Auto(threshold: Int) extends SelectionPolicy {
    require(threshold >= 0, s"negative selection threshold $threshold")
    def resolve(selection: RowSelection): SelectionStrategy =
      if (selection.runCount > 0 && selection.meanRunLength < threshold) SelectionStrategy.Mask
      else SelectionStrategy.Selectors
  }

  val Names: Seq[String] = Seq("auto", "selectors", "mask")

  /** From the config values (`name` one of [[Names]], case-insensitive). */
  def apply(name: String, threshold: Int): SelectionPolicy = name.toLowerCase(java.util.Locale.ROOT) match {
    case "auto" => Auto(threshold)
    case "selectors" => Selectors
    case "mask" => Mask
    case other => throw new IllegalArgumentException(s"unknown selection policy '$other', expected one of ${Names.mkString(", ")}")
  }
}

/** The internal, resolved choice: which backing a cursor walks and which instructions it yields. */
sealed abstract class SelectionStrategy(val backing: Backing)

object SelectionStrategy {

  /** Yield "read n" / "skip n" ([[SelectionCursor.Read]], [[SelectionCursor.Skip]]). */
  case object Selectors extends SelectionStrategy(Backing.Runs)

  /** Yield mask chunks ([[SelectionCursor.Mask]]) over selected stretches, and skips elsewhere. */
  case object Mask extends SelectionStrategy(Backing.Mask)
}
