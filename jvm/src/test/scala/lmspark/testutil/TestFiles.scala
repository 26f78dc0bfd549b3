package lmspark.testutil

import java.nio.file.{Files, Path}
import java.util.Comparator

import scala.collection.concurrent.TrieMap

import org.apache.parquet.hadoop.metadata.CompressionCodecName

/** A written matrix file with the values it was written with. */
final case class WrittenFile(path: Path, config: FileConfig, columns: IndexedSeq[TestColumn])

/** Writes each matrix file once per test JVM into a temp dir that is removed at exit. */
object TestFiles {

  val codecs: Seq[CompressionCodecName] = Seq(
    CompressionCodecName.UNCOMPRESSED, CompressionCodecName.SNAPPY, CompressionCodecName.GZIP, CompressionCodecName.ZSTD,
    CompressionCodecName.LZ4_RAW)

  val configs: Seq[FileConfig] =
    for (codec <- codecs; v2 <- Seq(false, true); mode <- EncMode.all) yield FileConfig(codec, v2, mode)

  lazy val dir: Path = {
    val d = Files.createTempDirectory("lmspark-decode-test")
    Runtime.getRuntime.addShutdownHook(new Thread(() => deleteRecursively(d)))
    d
  }

  def deleteRecursively(p: Path): Unit =
    if (Files.exists(p)) Files.walk(p).sorted(Comparator.reverseOrder[Path]()).forEach(f => Files.deleteIfExists(f))

  private val cache = TrieMap.empty[FileConfig, WrittenFile]

  def matrixFile(config: FileConfig): WrittenFile = cache.getOrElseUpdate(config, {
    val columns = for {
      (spec, ti) <- TestTypes.all.zipWithIndex.toIndexedSeq
      (nulls, ni) <- Nulls.all.zipWithIndex
    } yield TestColumn(spec, nulls, TestFileWriter.generate(spec, nulls, config.mode, seed = 1000L * ti + ni))
    val path = dir.resolve(s"matrix-${config.codec}-${if (config.v2) "v2" else "v1"}-${config.mode}.parquet")
    TestFileWriter.write(path, config, columns)
    WrittenFile(path, config, columns)
  })
}
