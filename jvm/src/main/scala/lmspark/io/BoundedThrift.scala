package lmspark.io

import java.io.InputStream

import shaded.parquet.org.apache.thrift.TConfiguration
import shaded.parquet.org.apache.thrift.protocol.TCompactProtocol
import shaded.parquet.org.apache.thrift.transport.TIOStreamTransport

import org.apache.parquet.format.{FileMetaData, PageHeader}

/** Parses parquet-format thrift structures (compact protocol) from a stream of which at most
  * `available` bytes belong to the structure: thrift's message size limit is set to them, so a
  * corrupt length inside the structure (a string, a list) fails before thrift allocates for it.
  * parquet-java's `Util.read*` bound them only by thrift's default 100 MiB. */
object BoundedThrift {

  private def protocol(in: InputStream, available: Int): TCompactProtocol = {
    val limit = math.max(available, 0)
    val config = new TConfiguration(limit, limit, TConfiguration.DEFAULT_RECURSION_DEPTH)
    new TCompactProtocol(new TIOStreamTransport(config, in), limit.toLong, limit.toLong)
  }

  def pageHeader(in: InputStream, available: Int): PageHeader = {
    val h = new PageHeader()
    h.read(protocol(in, available))
    h
  }

  def fileMetaData(in: InputStream, available: Int): FileMetaData = {
    val m = new FileMetaData()
    m.read(protocol(in, available))
    m
  }
}
