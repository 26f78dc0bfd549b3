package lmspark.fuzz

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.Random
import scala.util.control.NonFatal

import org.apache.parquet.format.{ColumnChunk, ColumnMetaData, FileMetaData, PageHeader, RowGroup, Util}
import lmspark.testutil.TestLineApis

/** One mutant: its bytes and a description that, with its seed, says exactly what was changed. */
final case class Mutant(bytes: Array[Byte], description: String)

/** A page header in a file: where it starts, its length in bytes, and the parsed header. */
final case class HeaderAt(start: Int, length: Int, header: PageHeader)

/** Where the structures of a valid Parquet file lie: the footer (thrift `FileMetaData`) and every
  * page header of every column chunk (found from the footer's chunk offsets and parsed with
  * parquet-java's thrift reader). Built from the unmutated seed. */
final class FileLayout(val bytes: Array[Byte]) {
  val footerLength: Int = {
    val n = bytes.length
    (bytes(n - 8) & 0xff) | ((bytes(n - 7) & 0xff) << 8) | ((bytes(n - 6) & 0xff) << 16) | ((bytes(n - 5) & 0xff) << 24)
  }
  val footerStart: Int = bytes.length - 8 - footerLength
  require(footerStart >= 4 && new String(bytes, bytes.length - 4, 4, StandardCharsets.US_ASCII) == "PAR1",
    "not a plain Parquet file")

  def readFooter(): FileMetaData = Util.readFileMetaData(new ByteArrayInputStream(bytes, footerStart, footerLength))

  val headers: IndexedSeq[HeaderAt] = {
    val out = IndexedSeq.newBuilder[HeaderAt]
    for (rg <- readFooter().getRow_groups.asScala; cc <- rg.getColumns.asScala if cc.isSetMeta_data) {
      val md = cc.getMeta_data
      val start =
        if (md.isSetDictionary_page_offset && md.getDictionary_page_offset > 0 &&
          md.getDictionary_page_offset < md.getData_page_offset) md.getDictionary_page_offset
        else md.getData_page_offset
      val end = start + md.getTotal_compressed_size
      var pos = start
      try while (pos < end) {
        val in = new ByteArrayInputStream(bytes, pos.toInt, (end - pos).toInt)
        val h = Util.readPageHeader(in)
        val dataStart = end - in.available()
        out += HeaderAt(pos.toInt, (dataStart - pos).toInt, h)
        pos = dataStart + h.getCompressed_page_size
      } catch { case NonFatal(_) => () } // a seed file parquet-java cannot walk: fewer headers to mutate
    }
    out.result()
  }
}

/**
 * Seeded byte-level mutations of a valid Parquet file: bit flips, truncation (anywhere, just before
 * or inside the footer), random overwrites (anywhere, inside a page header, inside the footer), and
 * "length" mutations that set one integer field of a page header or of the footer (page sizes, value
 * counts, row counts, chunk offsets and sizes, index offsets, type lengths, the footer length itself)
 * to a huge, negative, zero or off-by-some value, re-serialising the thrift struct and splicing it
 * back. `mutate(layout, seed)` is a pure function of its arguments.
 */
object Mutator {

  def mutate(layout: FileLayout, seed: Long): Mutant = {
    val r = new Random(seed)
    r.nextInt(100) match {
      case k if k < 18 => bitFlips(layout, r)
      case k if k < 28 => truncate(layout, r)
      case k if k < 38 => overwrite(layout, r, 0, layout.bytes.length, "anywhere")
      case k if k < 55 && layout.headers.nonEmpty =>
        val h = layout.headers(r.nextInt(layout.headers.size))
        overwrite(layout, r, h.start, h.start + h.length, s"in the page header at ${h.start}")
      case k if k < 62 => overwrite(layout, r, layout.footerStart, layout.footerStart + layout.footerLength, "in the footer")
      case k if k < 82 && layout.headers.nonEmpty => pageHeaderField(layout, r)
      case k if k < 96 => footerField(layout, r)
      case _ => footerLengthField(layout, r)
    }
  }

  private def bitFlips(layout: FileLayout, r: Random): Mutant = {
    val b = layout.bytes.clone()
    val n = 1 + r.nextInt(8)
    val where = (0 until n).map { _ =>
      val pos = r.nextInt(b.length)
      val bit = r.nextInt(8)
      b(pos) = (b(pos) ^ (1 << bit)).toByte
      s"$pos.$bit"
    }
    Mutant(b, s"bit flips at ${where.mkString(", ")}")
  }

  private def truncate(layout: FileLayout, r: Random): Mutant = {
    val n = layout.bytes.length
    val (len, what) = r.nextInt(3) match {
      case 0 => (r.nextInt(n), "random length")
      case 1 => (math.max(0, layout.footerStart - 1 - r.nextInt(16)), "just before the footer")
      case _ => (layout.footerStart + r.nextInt(layout.footerLength + 8), "inside the footer or its tail")
    }
    Mutant(java.util.Arrays.copyOf(layout.bytes, len), s"truncated to $len of $n bytes ($what)")
  }

  private def overwrite(layout: FileLayout, r: Random, from: Int, until: Int, what: String): Mutant = {
    val b = layout.bytes.clone()
    val start = from + r.nextInt(math.max(1, until - from))
    val len = math.min(b.length - start, 1 + r.nextInt(if (r.nextBoolean()) 4 else 48))
    val fill = Array.fill[Byte](len)(r.nextInt(256).toByte)
    System.arraycopy(fill, 0, b, start, len)
    Mutant(b, s"overwrote $len bytes at $start $what")
  }

  private def i32Value(r: Random, orig: Int): (Int, String) = r.nextInt(7) match {
    case 0 => (Int.MaxValue, "Int.MaxValue")
    case 1 => (1 << (20 + r.nextInt(11)), "huge")
    case 2 => (if (r.nextBoolean()) -1 else Int.MinValue, "negative")
    case 3 => (0, "zero")
    case _ =>
      val d = (1 + r.nextInt(16)) * (if (r.nextBoolean()) 1 else -1)
      (orig + d, s"off by $d")
  }

  private def i64Value(r: Random, orig: Long): (Long, String) = r.nextInt(7) match {
    case 0 => (Long.MaxValue, "Long.MaxValue")
    case 1 => (1L << (31 + r.nextInt(32)), "huge")
    case 2 => (if (r.nextBoolean()) -1L else Long.MinValue, "negative")
    case 3 => (0L, "zero")
    case _ =>
      val d = (1 + r.nextInt(16)) * (if (r.nextBoolean()) 1 else -1)
      (orig + d, s"off by $d")
  }

  /** An integer field of a thrift struct: its name, whether it is set, getter and setter. */
  private final case class IntField(name: String, isSet: () => Boolean, get: () => Long, set: Long => Unit, wide: Boolean)

  private def pageHeaderFields(h: PageHeader): Seq[IntField] = {
    def i32(name: String, isSet: => Boolean, get: => Int, set: Int => Unit) =
      IntField(name, () => isSet, () => get.toLong, v => set(v.toInt), wide = false)
    Seq(
      i32("compressed_page_size", true, h.getCompressed_page_size, h.setCompressed_page_size),
      i32("uncompressed_page_size", true, h.getUncompressed_page_size, h.setUncompressed_page_size),
      i32("data_page_header.num_values", h.isSetData_page_header, h.getData_page_header.getNum_values,
        h.getData_page_header.setNum_values),
      i32("dictionary_page_header.num_values", h.isSetDictionary_page_header, h.getDictionary_page_header.getNum_values,
        h.getDictionary_page_header.setNum_values),
      i32("data_page_header_v2.num_values", h.isSetData_page_header_v2, h.getData_page_header_v2.getNum_values,
        h.getData_page_header_v2.setNum_values),
      i32("data_page_header_v2.num_nulls", h.isSetData_page_header_v2, h.getData_page_header_v2.getNum_nulls,
        h.getData_page_header_v2.setNum_nulls),
      i32("data_page_header_v2.num_rows", h.isSetData_page_header_v2, h.getData_page_header_v2.getNum_rows,
        h.getData_page_header_v2.setNum_rows),
      i32("data_page_header_v2.definition_levels_byte_length", h.isSetData_page_header_v2,
        h.getData_page_header_v2.getDefinition_levels_byte_length, h.getData_page_header_v2.setDefinition_levels_byte_length),
      i32("data_page_header_v2.repetition_levels_byte_length", h.isSetData_page_header_v2,
        h.getData_page_header_v2.getRepetition_levels_byte_length, h.getData_page_header_v2.setRepetition_levels_byte_length)
    ).filter(_.isSet())
  }

  private def pageHeaderField(layout: FileLayout, r: Random): Mutant = {
    val at = layout.headers(r.nextInt(layout.headers.size))
    val h = at.header.deepCopy()
    val fields = pageHeaderFields(h)
    val f = fields(r.nextInt(fields.size))
    val before = f.get()
    val (v, what) = i32Value(r, before.toInt)
    f.set(v.toLong)
    val out = new ByteArrayOutputStream()
    Util.writePageHeader(h, out)
    val nh = out.toByteArray
    val b = new ByteArrayOutputStream()
    b.write(layout.bytes, 0, at.start)
    b.write(nh)
    b.write(layout.bytes, at.start + at.length, layout.bytes.length - at.start - at.length)
    val grew = nh.length - at.length
    Mutant(b.toByteArray, s"page header at ${at.start}: ${f.name} $before -> $v ($what)" +
      (if (grew != 0) s", header ${if (grew > 0) "grew" else "shrank"} by ${math.abs(grew)} bytes" else ""))
  }

  private def footerFields(m: FileMetaData): Seq[IntField] = {
    def i64(name: String, isSet: => Boolean, get: => Long, set: Long => Unit) =
      IntField(name, () => isSet, () => get, set, wide = true)
    def i32(name: String, isSet: => Boolean, get: => Int, set: Int => Unit) =
      IntField(name, () => isSet, () => get.toLong, v => set(v.toInt), wide = false)
    val file = Seq(i64("num_rows", true, m.getNum_rows, m.setNum_rows))
    val schema = m.getSchema.asScala.zipWithIndex.flatMap { case (s, i) =>
      Seq(i32(s"schema[$i].type_length", s.isSetType_length, s.getType_length, s.setType_length),
        i32(s"schema[$i].num_children", s.isSetNum_children, s.getNum_children, s.setNum_children))
    }
    val groups = m.getRow_groups.asScala.zipWithIndex.flatMap { case (rg: RowGroup, g) =>
      Seq(i64(s"row_groups[$g].num_rows", true, rg.getNum_rows, rg.setNum_rows),
        i64(s"row_groups[$g].total_byte_size", true, rg.getTotal_byte_size, rg.setTotal_byte_size),
        i64(s"row_groups[$g].file_offset", rg.isSetFile_offset, rg.getFile_offset, rg.setFile_offset),
        i64(s"row_groups[$g].total_compressed_size", rg.isSetTotal_compressed_size, rg.getTotal_compressed_size,
          rg.setTotal_compressed_size)) ++
        rg.getColumns.asScala.zipWithIndex.flatMap { case (cc: ColumnChunk, c) =>
          val p = s"row_groups[$g].columns[$c]"
          val md: ColumnMetaData = cc.getMeta_data
          Seq(i64(s"$p.file_offset", true, cc.getFile_offset, cc.setFile_offset),
            i64(s"$p.offset_index_offset", cc.isSetOffset_index_offset, cc.getOffset_index_offset, cc.setOffset_index_offset),
            i32(s"$p.offset_index_length", cc.isSetOffset_index_length, cc.getOffset_index_length, cc.setOffset_index_length),
            i64(s"$p.column_index_offset", cc.isSetColumn_index_offset, cc.getColumn_index_offset, cc.setColumn_index_offset),
            i32(s"$p.column_index_length", cc.isSetColumn_index_length, cc.getColumn_index_length, cc.setColumn_index_length)) ++
            (if (md == null) Nil else Seq(
              i64(s"$p.num_values", true, md.getNum_values, md.setNum_values),
              i64(s"$p.total_uncompressed_size", true, md.getTotal_uncompressed_size, md.setTotal_uncompressed_size),
              i64(s"$p.total_compressed_size", true, md.getTotal_compressed_size, md.setTotal_compressed_size),
              i64(s"$p.data_page_offset", true, md.getData_page_offset, md.setData_page_offset),
              i64(s"$p.index_page_offset", md.isSetIndex_page_offset, md.getIndex_page_offset, md.setIndex_page_offset),
              i64(s"$p.dictionary_page_offset", md.isSetDictionary_page_offset, md.getDictionary_page_offset,
                md.setDictionary_page_offset),
              i64(s"$p.bloom_filter_offset", md.isSetBloom_filter_offset, md.getBloom_filter_offset, md.setBloom_filter_offset)) ++
              TestLineApis.bloomFilterLengthField(md).map { case (isSet, get, set) =>
                i32(s"$p.bloom_filter_length", isSet(), get(), set) })
        }
    }
    (file ++ schema ++ groups).filter(_.isSet())
  }

  private def withFooter(layout: FileLayout, footer: Array[Byte], length: Int): Array[Byte] = {
    val b = new ByteArrayOutputStream()
    b.write(layout.bytes, 0, layout.footerStart)
    b.write(footer)
    b.write(Array[Byte](length.toByte, (length >>> 8).toByte, (length >>> 16).toByte, (length >>> 24).toByte))
    b.write("PAR1".getBytes(StandardCharsets.US_ASCII))
    b.toByteArray
  }

  private def footerField(layout: FileLayout, r: Random): Mutant = {
    val m = layout.readFooter()
    val fields = footerFields(m)
    val f = fields(r.nextInt(fields.size))
    val before = f.get()
    val (v, what) = if (f.wide) i64Value(r, before) else { val (x, w) = i32Value(r, before.toInt); (x.toLong, w) }
    f.set(v)
    val out = new ByteArrayOutputStream()
    Util.writeFileMetaData(m, out)
    val footer = out.toByteArray
    Mutant(withFooter(layout, footer, footer.length), s"footer: ${f.name} $before -> $v ($what)")
  }

  /** A seeded mutation of the footer's row-group table (the footer re-serialised, the data bytes
    * unchanged): one row group's column chunks moved past the end of the file, or made to overlap
    * the next row group; the `num_rows` of a row group or of the file changed; the row groups
    * reordered; a row group's `total_byte_size` or `total_compressed_size` zeroed or made huge.
    * The mutant's rows must be the seed's, or its read an error naming the file. */
  def mutateRowGroupTable(layout: FileLayout, seed: Long): Mutant = {
    val r = new Random(seed)
    val m = layout.readFooter()
    val groups = m.getRow_groups
    val g = r.nextInt(groups.size)
    val rg = groups.get(g)
    val chunks = rg.getColumns.asScala.filter(_.isSetMeta_data).toIndexedSeq
    def start(md: ColumnMetaData): Long =
      if (md.isSetDictionary_page_offset && md.getDictionary_page_offset > 0 && md.getDictionary_page_offset < md.getData_page_offset)
        md.getDictionary_page_offset
      else md.getData_page_offset
    def moveTo(md: ColumnMetaData, to: Long): Unit = {
      val delta = to - start(md)
      if (md.isSetDictionary_page_offset && md.getDictionary_page_offset > 0) md.setDictionary_page_offset(md.getDictionary_page_offset + delta)
      md.setData_page_offset(md.getData_page_offset + delta)
    }
    val what = r.nextInt(9) match {
      case 0 if chunks.nonEmpty =>
        val c = r.nextInt(chunks.size)
        val to = layout.footerStart.toLong + 1 + r.nextInt(1 << 20)
        moveTo(chunks(c).getMeta_data, to)
        s"row group $g column $c moved to $to (past the data)"
      case 1 =>
        val k = 2 + r.nextInt(1000)
        chunks.foreach(c => c.getMeta_data.setTotal_compressed_size(c.getMeta_data.getTotal_compressed_size * k))
        if (rg.isSetTotal_compressed_size) rg.setTotal_compressed_size(rg.getTotal_compressed_size * k)
        s"row group $g: every chunk's and the row group's total_compressed_size times $k"
      case 2 if chunks.nonEmpty && g + 1 < groups.size =>
        val next = groups.get(g + 1).getColumns.asScala.filter(_.isSetMeta_data).map(c => start(c.getMeta_data))
        val c = r.nextInt(chunks.size)
        if (r.nextBoolean() && next.nonEmpty) {
          moveTo(chunks(c).getMeta_data, next.head)
          s"row group $g column $c moved onto row group ${g + 1}'s first chunk"
        } else {
          val md = chunks(c).getMeta_data
          val grow = 1 + r.nextInt(4096)
          md.setTotal_compressed_size(md.getTotal_compressed_size + grow)
          s"row group $g column $c's total_compressed_size grown by $grow (into what follows)"
        }
      case 3 | 4 =>
        val before = rg.getNum_rows
        val (v, how) = i64Value(r, before)
        rg.setNum_rows(v)
        if (r.nextBoolean()) { m.setNum_rows(m.getNum_rows - before + v); s"row group $g num_rows $before -> $v ($how), file num_rows follows" }
        else s"row group $g num_rows $before -> $v ($how)"
      case 5 =>
        val before = m.getNum_rows
        val (v, how) = i64Value(r, before)
        m.setNum_rows(v)
        s"file num_rows $before -> $v ($how)"
      case 6 if groups.size > 1 =>
        val order = r.shuffle(groups.asScala.toIndexedSeq)
        m.setRow_groups(new java.util.ArrayList(order.asJava))
        s"row groups reordered"
      case 7 =>
        val (v, how) = if (r.nextBoolean()) (0L, "zero") else (1L << (31 + r.nextInt(32)), "huge")
        rg.setTotal_byte_size(v)
        s"row group $g total_byte_size -> $v ($how)"
      case _ =>
        val (v, how) = if (r.nextBoolean()) (0L, "zero") else (1L << (20 + r.nextInt(40)), "huge")
        val before = if (rg.isSetTotal_compressed_size) rg.getTotal_compressed_size.toString else "unset"
        rg.setTotal_compressed_size(v)
        s"row group $g total_compressed_size $before -> $v ($how)"
    }
    val out = new ByteArrayOutputStream()
    Util.writeFileMetaData(m, out)
    val footer = out.toByteArray
    Mutant(withFooter(layout, footer, footer.length), s"row-group table: $what")
  }

  private def footerLengthField(layout: FileLayout, r: Random): Mutant = {
    val (v, what) = i32Value(r, layout.footerLength)
    val footer = java.util.Arrays.copyOfRange(layout.bytes, layout.footerStart, layout.footerStart + layout.footerLength)
    Mutant(withFooter(layout, footer, v), s"footer length ${layout.footerLength} -> $v ($what)")
  }
}
