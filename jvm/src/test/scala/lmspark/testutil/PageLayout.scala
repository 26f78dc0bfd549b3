package lmspark.testutil

import java.nio.file.Path


import org.apache.parquet.column.page.{DataPageV1, DataPageV2}

/** One data page of a chunk as parquet-java sees it: its rows and whether its values are
  * dictionary ids. */
final case class PageInfo(rows: Int, dictionaryEncoded: Boolean)

/** The data pages of every chunk, from parquet-java's own page readers: the oracle for which
  * rows of a chunk are dictionary-encoded. */
object PageLayout {

  /** Data pages per [row group][column], in file order. */
  def of(path: Path): IndexedSeq[IndexedSeq[IndexedSeq[PageInfo]]] = ParquetOracle.perChunk(path) { pr =>
    Iterator.continually(pr.readPage()).takeWhile(_ != null).map {
      case p: DataPageV1 => PageInfo(p.getValueCount, p.getValueEncoding.usesDictionary)
      case p: DataPageV2 => PageInfo(p.getRowCount, p.getDataEncoding.usesDictionary)
    }.toIndexedSeq
  }

  /** Whether every row of `[from, until)` lies on a dictionary-encoded page of `pages`. */
  def allDictionary(pages: Seq[PageInfo], from: Int, until: Int): Boolean =
    overlapping(pages, from, until).forall(_.dictionaryEncoded)

  /** Whether no row of `[from, until)` lies on a dictionary-encoded page of `pages`. */
  def noDictionary(pages: Seq[PageInfo], from: Int, until: Int): Boolean =
    !overlapping(pages, from, until).exists(_.dictionaryEncoded)

  /** The pages holding at least one row of `[from, until)`. */
  def overlapping(pages: Seq[PageInfo], from: Int, until: Int): Seq[PageInfo] = {
    val firstRows = pages.scanLeft(0)(_ + _.rows)
    pages.indices.filter(i => firstRows(i) < until && from < firstRows(i + 1)).map(pages)
  }
}
