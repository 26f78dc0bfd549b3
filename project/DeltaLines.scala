import java.io.File

import scala.io.Source

/**
 * The Delta Lake release of each Spark line that has one, read from `project/delta-lines.txt`.
 * Its jar is a provided dependency (users bring Delta themselves) on the compile and test
 * classpaths, and the line compiles its Delta shim folders; a line without one compiles `no-delta`.
 */
object DeltaLines {
  final case class Delta(group: String, artifact: String, version: String, shims: Seq[String])

  /** The shim folders of a line without Delta. */
  val NoDeltaShims: Seq[String] = Seq("no-delta")

  def of(base: File, line: String): Option[Delta] = {
    val src = Source.fromFile(new File(base, "project/delta-lines.txt"), "UTF-8")
    try src.getLines().map(_.trim).filter(l => l.nonEmpty && !l.startsWith("#")).map { l =>
      l.split("\\s+") match {
        case Array(sparkLine, coords, shims) => coords.split(':') match {
          case Array(g, a, v) => sparkLine -> Delta(g, a, v, shims.split(',').toSeq)
          case _ => sys.error(s"project/delta-lines.txt: cannot read coordinates '$coords'")
        }
        case _ => sys.error(s"project/delta-lines.txt: cannot read '$l'")
      }
    }.toList.collectFirst { case (`line`, d) => d }
    finally src.close()
  }
}
