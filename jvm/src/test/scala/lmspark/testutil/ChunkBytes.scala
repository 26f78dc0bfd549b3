package lmspark.testutil

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.nio.file.{Files, Path}

import org.apache.parquet.format.{PageHeader, Util}
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData

/** Raw column chunk bytes and page splitting, for tests that corrupt chunks on purpose. */
object ChunkBytes {

  /** One page inside chunk bytes: header at `start`, data at `dataStart` of `header.compressed_page_size`. */
  final case class RawPage(start: Int, header: PageHeader, dataStart: Int)

  def read(path: Path, chunk: ColumnChunkMetaData): Array[Byte] = {
    val all = Files.readAllBytes(path)
    java.util.Arrays.copyOfRange(all, chunk.getStartingPos.toInt, (chunk.getStartingPos + chunk.getTotalSize).toInt)
  }

  def pages(bytes: Array[Byte]): IndexedSeq[RawPage] = {
    val out = IndexedSeq.newBuilder[RawPage]
    var pos = 0
    while (pos < bytes.length) {
      val in = new ByteArrayInputStream(bytes, pos, bytes.length - pos)
      val h = Util.readPageHeader(in)
      val dataStart = bytes.length - in.available()
      out += RawPage(pos, h, dataStart)
      pos = dataStart + h.compressed_page_size
    }
    out.result()
  }

  /** `bytes` with the header of `page` replaced by `newHeader` (data unchanged). */
  def replaceHeader(bytes: Array[Byte], page: RawPage, newHeader: PageHeader): Array[Byte] = {
    val h = new ByteArrayOutputStream()
    Util.writePageHeader(newHeader, h)
    val out = new ByteArrayOutputStream()
    out.write(bytes, 0, page.start)
    out.write(h.toByteArray)
    out.write(bytes, page.dataStart, bytes.length - page.dataStart)
    out.toByteArray
  }
}
