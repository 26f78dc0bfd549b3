package lmspark.testutil

import java.nio.file.{Files, Path}
import java.util.Comparator

import scala.collection.concurrent.TrieMap

import org.apache.parquet.column.page.{DataPageV1, DataPageV2}
import org.apache.parquet.hadoop.metadata.CompressionCodecName

/** A written matrix file with the values it was written with. */
final case class WrittenFile(path: Path, config: FileConfig, columns: IndexedSeq[TestColumn])

/** The pages of one column chunk as parquet-java's page reader sees them: whether there is a
  * dictionary page, the row count of each data page in order, and whether each data page is
  * dictionary-encoded (a chunk that falls back mid-chunk has plain pages after dictionary ones). */
final case class ChunkLayout(hasDictionary: Boolean, pageRows: IndexedSeq[Int], dictionaryEncoded: IndexedSeq[Boolean]) {
  require(dictionaryEncoded.size == pageRows.size, "one encoding flag per data page")
  /** Pages including the dictionary page. */
  def pages: Int = pageRows.size + (if (hasDictionary) 1 else 0)
  /** Pages a reader decompresses when it loads the data pages `loaded` (by index): those, and the
    * dictionary page when one of them is dictionary-encoded (readers decode it only then). */
  def pagesDecompressed(loaded: Iterable[Int]): Int =
    loaded.size + (if (hasDictionary && loaded.exists(dictionaryEncoded)) 1 else 0)
  /** First row of each data page, then the chunk's row count. */
  val pageStarts: IndexedSeq[Long] = pageRows.scanLeft(0L)(_ + _)
  def rows: Long = pageStarts.last
}

/** Writes each matrix file once per test JVM into a temp dir that is removed at exit, and keeps
  * what the suites need about it: the written values (shared per encoding mode, since they do not
  * depend on codec or page version), parquet-java's values (for the last file asked, as suites go
  * file by file) and the page layouts. */
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

  private val columnCache = TrieMap.empty[EncMode, IndexedSeq[TestColumn]]
  private val cache = TrieMap.empty[FileConfig, WrittenFile]
  private val layouts = TrieMap.empty[FileConfig, IndexedSeq[IndexedSeq[ChunkLayout]]]

  /** Every type x nullability, generated for `mode`. */
  def matrixColumns(mode: EncMode): IndexedSeq[TestColumn] = columnCache.getOrElseUpdate(mode,
    for {
      (spec, ti) <- TestTypes.all.zipWithIndex.toIndexedSeq
      (nulls, ni) <- Nulls.all.zipWithIndex
    } yield TestColumn(spec, nulls, TestFileWriter.generate(spec, nulls, mode, seed = 1000L * ti + ni)))

  def matrixFile(config: FileConfig): WrittenFile = cache.getOrElseUpdate(config, {
    val columns = matrixColumns(config.mode)
    val path = dir.resolve(s"matrix-${config.codec}-${if (config.v2) "v2" else "v1"}-${config.mode}.parquet")
    TestFileWriter.write(path, config, columns)
    WrittenFile(path, config, columns)
  })

  private var oracleOf: Path = _
  private var oracleValues: IndexedSeq[IndexedSeq[IndexedSeq[Any]]] = _

  /** parquet-java's values of `f`, [column][row group][row] (see [[ParquetOracle.readAll]]). */
  def oracle(f: WrittenFile): IndexedSeq[IndexedSeq[IndexedSeq[Any]]] = synchronized {
    if (oracleOf != f.path) {
      oracleValues = ParquetOracle.readAll(f.path)
      oracleOf = f.path
    }
    oracleValues
  }

  /** Page layouts of `f` per [row group][column]. */
  def layout(f: WrittenFile): IndexedSeq[IndexedSeq[ChunkLayout]] = layouts.getOrElseUpdate(f.config,
    ParquetOracle.perChunk(f.path) { pr =>
      val dict = pr.readDictionaryPage() != null
      val rows = IndexedSeq.newBuilder[Int]
      val dictEncoded = IndexedSeq.newBuilder[Boolean]
      var p = pr.readPage()
      while (p != null) {
        rows += p.getValueCount // flat columns: values == rows
        dictEncoded += (p match {
          case v1: DataPageV1 => v1.getValueEncoding.usesDictionary
          case v2: DataPageV2 => v2.getDataEncoding.usesDictionary
        })
        p = pr.readPage()
      }
      ChunkLayout(dict, rows.result(), dictEncoded.result())
    })
}
