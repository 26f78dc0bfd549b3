// lmspark: one JVM module under jvm/, the Python package under python/.
// The version comes from python/lmspark/VERSION, the single version source shared with Python.
//
// One source tree, one jar per Spark line (project/spark-lines.txt, project/SparkLines.scala):
// `-Dlmspark.line=3.5` (or LMSPARK_LINE) picks the line; its Spark, parquet-java, Hadoop and Scala
// come from that line's pip pyspark, all provided. What differs between lines lives in the shim
// folders jvm/src/shim/<name>/{main,test}/scala that the line lists.

val line = SparkLines.selected(file("."))
// The line's Delta Lake release (project/delta-lines.txt), if it has one: provided, like Spark.
val delta = DeltaLines.of(file("."), line.line)
val shims = line.shims ++ delta.map(_.shims).getOrElse(DeltaLines.NoDeltaShims)

// Compile dependencies Spark does not ship. The Python package ships only our jar, so their classes
// are copied into it (see `Compile / packageBin / mappings` below); no shading plugin is needed.
val bundledDependencies = Seq(
  "org.brotli" % "dec" % "0.1.2" // Google's pure-Java Brotli decoder (MIT), for BROTLI pages
)

// What Spark's own jars already hold, left out of Delta's dependencies (Spark's versions win).
val SparkProvidedGroups = Seq("org.scala-lang", "org.apache.spark", "org.apache.hadoop", "org.apache.parquet",
  "com.fasterxml.jackson.core", "com.fasterxml.jackson.datatype", "com.fasterxml.jackson.module", "org.slf4j",
  "org.roaringbitmap", "com.google.code.findbugs", "org.antlr", "org.apache.logging.log4j")

ThisBuild / organization := "io.lmspark"
ThisBuild / version := IO.read(file("python/lmspark/VERSION")).trim
ThisBuild / scalaVersion := line.scala // the scala-library that the line's Spark ships

/** The line's Delta release and the dependencies it brings beyond Spark's, for a PySpark session. */
lazy val deltaJars = taskKey[Seq[File]]("Copies the line's Delta jars (project/delta-lines.txt) into .cache/delta/<line>")

lazy val root = (project in file("."))
  .settings(
    name := "lmspark",
    Compile / scalaSource := baseDirectory.value / "jvm" / "src" / "main" / "scala",
    Compile / javaSource := baseDirectory.value / "jvm" / "src" / "main" / "java",
    Compile / resourceDirectory := baseDirectory.value / "jvm" / "src" / "main" / "resources",
    Test / scalaSource := baseDirectory.value / "jvm" / "src" / "test" / "scala",
    Test / javaSource := baseDirectory.value / "jvm" / "src" / "test" / "java",
    Test / resourceDirectory := baseDirectory.value / "jvm" / "src" / "test" / "resources",
    Compile / unmanagedSourceDirectories ++= shims.map(s => baseDirectory.value / "jvm" / "src" / "shim" / s / "main" / "scala"),
    Compile / unmanagedSourceDirectories ++= shims.map(s => baseDirectory.value / "jvm" / "src" / "shim" / s / "main" / "java"),
    Test / unmanagedSourceDirectories ++= shims.map(s => baseDirectory.value / "jvm" / "src" / "shim" / s / "test" / "scala"),
    // Spark and everything it ships, from the line's pyspark: on the compile and test classpaths,
    // never in our jar.
    Compile / unmanagedJars ++= SparkLines.sparkJars(baseDirectory.value, line).map(Attributed.blank),
    // Per-line outputs, so that switching lines does not recompile the others' classes.
    target := baseDirectory.value / "target" / s"spark${line.line}",
    javacOptions ++= Seq("--release", "17"),
    scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-Xlint:-unused,_", "-Wconf:cat=deprecation:s"),
    libraryDependencies ++= Seq(
      "org.scalatest" %% "scalatest" % "3.2.19" % Test
    ) ++ bundledDependencies ++ delta.map(d => (d.group % d.artifact % d.version % Provided)
      .excludeAll(SparkProvidedGroups.map(g => ExclusionRule(organization = g)): _*)).toSeq,
    Test / fork := true,
    Test / parallelExecution := false,
    Test / javaOptions ++= Seq(
      "-Xmx4g",
      "-XX:+IgnoreUnrecognizedVMOptions",
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
      "--add-opens=java.base/java.io=ALL-UNNAMED",
      "--add-opens=java.base/java.net=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
      "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
      "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
      "-Djdk.reflect.useDirectMethodHandle=false",
      "-Dio.netty.tryReflectionSetAccessible=true"
    ),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    Compile / packageBin / artifactPath := baseDirectory.value / "target" / "jars" / line.jarName(version.value),
    // The test classes (the simulated object store the benchmark's store mode reads through).
    Test / packageBin / artifactPath := baseDirectory.value / "target" / "jars" / s"lmspark-tests-spark${line.line}_${line.scalaBinary}.jar",
    // The line a jar was built for, checked at injection (lmspark.SparkLineGate).
    Compile / resourceGenerators += Def.task {
      val f = (Compile / resourceManaged).value / "lmspark-build.properties"
      val lines = SparkLines.all(baseDirectory.value).map(_.line).mkString(",")
      IO.write(f, s"line=${line.line}\nspark=${line.spark}\nscala=${line.scalaBinary}\nversion=${version.value}\nlines=$lines\n")
      Seq(f)
    }.taskValue,
    // The bundled dependencies' classes (and their Maven metadata) go into our jar; their own
    // manifests and signatures do not.
    Compile / packageBin / mappings ++= {
      val wanted = bundledDependencies.map(m => (m.organization, m.name)).toSet
      val jars = (Compile / update).value.configuration(Compile).toSeq
        .flatMap(_.modules)
        .filter(m => wanted((m.module.organization, m.module.name)))
        .flatMap(_.artifacts.collect { case (a, f) if a.`type` == "jar" => f })
      val root = target.value / "bundled"
      jars.flatMap { jar =>
        val dir = root / jar.getName.stripSuffix(".jar")
        IO.delete(dir)
        val keep = new SimpleFilter(n => !n.startsWith("META-INF/") || n.startsWith("META-INF/maven/"))
        IO.unzip(jar, dir, keep).toSeq.sorted.map(f => f -> IO.relativize(dir, f).get)
      }
    },
    // Delta and its dependencies as this build resolved them (provided, Spark's groups excluded), for
    // `make delta-jars`: the jars a PySpark session of this line needs besides lmspark's.
    deltaJars := {
      val out = baseDirectory.value / ".cache" / "delta" / line.line
      val jars = update.value.configuration(Provided).toSeq.flatMap(_.modules)
        .flatMap(_.artifacts.collect { case (a, f) if a.`type` == "jar" || a.`type` == "bundle" => f })
      if (delta.isEmpty || jars.isEmpty) sys.error(s"no Delta release for Spark ${line.line} in project/delta-lines.txt")
      IO.delete(out)
      IO.createDirectory(out)
      jars.map { j => val to = out / j.getName; IO.copyFile(j, to); to }
    },
    // The packaged jar, for the test that checks the bundled classes are inside it.
    Test / javaOptions += s"-Dlmspark.packagedJar=${(Compile / packageBin).value.getAbsolutePath}"
  )
