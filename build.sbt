// lmspark: one JVM module under jvm/, the Python package under python/.
// The version comes from python/lmspark/VERSION, the single version source shared with Python.

val sparkVersion = "4.1.3"
val parquetVersion = "1.16.0" // the parquet-java that Spark 4.1.3 ships

// Compile dependencies Spark does not ship. The Python package ships only our jar, so their classes
// are copied into it (see `Compile / packageBin / mappings` below); no shading plugin is needed.
val bundledDependencies = Seq(
  "org.brotli" % "dec" % "0.1.2" // Google's pure-Java Brotli decoder (MIT), for BROTLI pages
)

ThisBuild / organization := "io.lmspark"
ThisBuild / version := IO.read(file("python/lmspark/VERSION")).trim
ThisBuild / scalaVersion := "2.13.17" // the scala-library that Spark 4.1.3 ships

lazy val root = (project in file("."))
  .settings(
    name := "lmspark",
    Compile / scalaSource := baseDirectory.value / "jvm" / "src" / "main" / "scala",
    Compile / javaSource := baseDirectory.value / "jvm" / "src" / "main" / "java",
    Compile / resourceDirectory := baseDirectory.value / "jvm" / "src" / "main" / "resources",
    Test / scalaSource := baseDirectory.value / "jvm" / "src" / "test" / "scala",
    Test / javaSource := baseDirectory.value / "jvm" / "src" / "test" / "java",
    Test / resourceDirectory := baseDirectory.value / "jvm" / "src" / "test" / "resources",
    javacOptions ++= Seq("--release", "17"),
    scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-Xlint:-unused,_", "-Wconf:cat=deprecation:s"),
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion % Provided,
      "org.apache.parquet" % "parquet-hadoop" % parquetVersion % Provided,
      "org.scalatest" %% "scalatest" % "3.2.19" % Test
    ) ++ bundledDependencies,
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
    Compile / packageBin / artifactPath := target.value / s"lmspark-${version.value}.jar",
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
    // The packaged jar, for the test that checks the bundled classes are inside it.
    Test / javaOptions += s"-Dlmspark.packagedJar=${(Compile / packageBin).value.getAbsolutePath}"
  )
