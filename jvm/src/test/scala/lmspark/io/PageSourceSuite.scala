package lmspark.io

import scala.collection.mutable

import org.apache.parquet.format.PageType
import org.scalatest.funsuite.AnyFunSuite

import lmspark.testutil._

/** Page iteration over real chunks: page kinds per page version, row totals, skips without
  * decompression, and the bytes-read accounting. */
class PageSourceSuite extends AnyFunSuite {

  for (config <- TestFiles.configs.filter(c => c.mode == EncMode.Dict && c.codec.name != "LZ4_RAW")) {
    test(s"pages of $config") {
      val f = TestFiles.matrixFile(config)
      val lm = new LmFile(f.path)
      try {
        for (col <- f.columns.indices; rg <- 0 until lm.rowGroups) {
          val chunk = lm.chunk(rg, col)
          val pages = lm.pages(rg, col)
          assert(pages.bytesRead == chunk.getTotalSize)
          val kinds = mutable.ArrayBuffer.empty[PageType]
          var rows = 0L
          var skipped = 0
          while (pages.nextPage()) {
            val t = pages.currentPageType
            kinds += t
            t match {
              case PageType.DICTIONARY_PAGE =>
                val d = pages.readDictionaryPage()
                assert(d.numValues >= 0)
              case _ =>
                rows += pages.currentPageRows
                if (kinds.size % 2 == 0) { pages.skipPage(); skipped += 1 }
                else {
                  val p = pages.readDataPage()
                  assert(p.numRows == p.numValues)
                }
            }
          }
          assert(rows == lm.rowCount(rg), f.columns(col).name)
          assert(pages.pagesRead == kinds.size - skipped)
          val dataKind = if (config.v2) PageType.DATA_PAGE_V2 else PageType.DATA_PAGE
          assert(kinds.filter(_ != PageType.DICTIONARY_PAGE).forall(_ == dataKind))
          assert(kinds.count(_ == PageType.DICTIONARY_PAGE) == (if (chunk.hasDictionaryPage) 1 else 0))
          assert(!pages.nextPage())
        }
      } finally lm.close()
    }
  }
}
