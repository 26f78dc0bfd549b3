package lmspark.io

import java.io.File
import java.net.URLClassLoader
import java.util.jar.JarFile

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/** The packaged jar `target/lmspark-<version>.jar` (built before the tests; its path comes from the
  * `lmspark.packagedJar` system property set in build.sbt) carries the Brotli decoder, which Spark
  * does not ship, with its license, and the decoder loads from our jar alone. */
class BundledBrotliSuite extends AnyFunSuite {

  private lazy val jar: File = {
    val p = System.getProperty("lmspark.packagedJar")
    assert(p != null, "lmspark.packagedJar is not set (build.sbt sets it for forked tests)")
    val f = new File(p)
    assert(f.isFile, s"$f does not exist")
    f
  }

  test("the packaged jar contains org/brotli/dec/ and its license") {
    val entries = {
      val j = new JarFile(jar)
      try j.entries().asScala.map(_.getName).toSet finally j.close()
    }
    val brotli = entries.filter(_.startsWith("org/brotli/dec/"))
    for (c <- Seq("BrotliInputStream", "Decode", "BitReader", "Dictionary", "State"))
      assert(brotli.contains(s"org/brotli/dec/$c.class"), s"org/brotli/dec/$c.class missing from $jar")
    assert(entries.contains("META-INF/LICENSE-brotli-dec.txt"))
    assert(entries.contains("lmspark/io/Decompressors$.class"))
    // Only our own manifest.
    assert(entries.count(_.equalsIgnoreCase("META-INF/MANIFEST.MF")) == 1)
  }

  test("the Brotli decoder loads and decodes from the packaged jar alone") {
    val loader = new URLClassLoader(Array(jar.toURI.toURL), ClassLoader.getPlatformClassLoader)
    try {
      val cls = loader.loadClass("org.brotli.dec.BrotliInputStream")
      assert(cls.getClassLoader eq loader)
      // The smallest Brotli stream: an empty last meta-block (one byte, 0x06).
      val in = cls.getConstructor(classOf[java.io.InputStream])
        .newInstance(new java.io.ByteArrayInputStream(Array[Byte](6))).asInstanceOf[java.io.InputStream]
      assert(in.read() == -1)
    } finally loader.close()
  }
}
