import java.io.File

import scala.io.Source

/**
 * The Spark lines lmspark is built for, read from `project/spark-lines.txt`, and the one this
 * build compiles against: `-Dlmspark.line=<line>` or `LMSPARK_LINE`, else [[Default]].
 *
 * Each line compiles against the jars of its own pip `pyspark` (Spark, its parquet-java, Hadoop
 * and Scala library, all provided): `.cache/venv-spark<line>`, made by `make venv LINE=<line>`,
 * or the folder in `LMSPARK_SPARK_JARS`. Maven Central here lacks several newest patch releases,
 * and pip's pyspark is what users run.
 */
object SparkLines {
  val Default = "4.3"

  final case class Line(line: String, spark: String, scala: String, shims: Seq[String]) {
    def scalaBinary: String = scala.split('.').take(2).mkString(".")
    /** The jar's file name, e.g. `lmspark-spark4.3_2.13-0.1.0.jar`. */
    def jarName(version: String): String = s"lmspark-spark${line}_$scalaBinary-$version.jar"
  }

  def all(base: File): Seq[Line] = {
    val src = Source.fromFile(new File(base, "project/spark-lines.txt"), "UTF-8")
    try src.getLines().map(_.trim).filter(l => l.nonEmpty && !l.startsWith("#")).map { l =>
      l.split("\\s+") match {
        case Array(line, spark, scala, shims) => Line(line, spark, scala, shims.split(',').toSeq)
        case _ => sys.error(s"project/spark-lines.txt: cannot read '$l'")
      }
    }.toList
    finally src.close()
  }

  def selected(base: File): Line = {
    val name = sys.props.get("lmspark.line").orElse(sys.env.get("LMSPARK_LINE")).filter(_.nonEmpty).getOrElse(Default)
    all(base).find(_.line == name).getOrElse(
      sys.error(s"unknown Spark line '$name'; project/spark-lines.txt has ${all(base).map(_.line).mkString(", ")}"))
  }

  /** The provided jars of a line: its pyspark's `jars/` folder, minus the Scala compiler's own. */
  def sparkJars(base: File, line: Line): Seq[File] = {
    val dir = sys.env.get("LMSPARK_SPARK_JARS").map(new File(_)).getOrElse {
      val lib = new File(base, s".cache/venv-spark${line.line}/lib")
      val py = Option(lib.listFiles()).toSeq.flatten.filter(_.getName.startsWith("python")).sortBy(_.getName)
      py.lastOption.map(p => new File(p, "site-packages/pyspark/jars")).getOrElse(new File(lib, "missing"))
    }
    val jars = Option(dir.listFiles()).toSeq.flatten.filter(_.getName.endsWith(".jar"))
    if (jars.isEmpty)
      sys.error(s"no Spark jars for line ${line.line} in $dir: run `make venv LINE=${line.line}` (or set LMSPARK_SPARK_JARS)")
    if (!jars.exists(_.getName == s"spark-sql_${line.scalaBinary}-${line.spark}.jar"))
      sys.error(s"$dir does not hold spark-sql ${line.spark}: rebuild it with `make venv LINE=${line.line}`")
    jars.filterNot(j => Seq("scala-library-", "scala-reflect-", "scala-compiler-").exists(j.getName.startsWith)).sortBy(_.getName)
  }
}
