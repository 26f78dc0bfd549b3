package lmspark.meta

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.parquet.format.{ColumnChunk, ColumnMetaData, CompressionCodec, Encoding, FieldRepetitionType,
  FileMetaData, RowGroup, SchemaElement, Type, Util}
import org.apache.hadoop.conf.Configuration
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.ParquetDecodeException

/** [[RowGroupTable]] against parquet-java's own split assignment, on seeded random row-group tables:
  * every row group that has column chunks is read by exactly one split of any cut of the file into
  * splits, the same one parquet-java's midpoint filter gives it; and every way a table can lose rows
  * in silence (a row group outside the file's data, a negative count, a file count its row groups do
  * not add up to, rows without chunks) is an error naming the file and the row group. */
class RowGroupTableSuite extends AnyFunSuite {

  private val path = "/data/t.parquet"
  private val FooterBytes = 300L

  private def schema(columns: Int): java.util.List[SchemaElement] = {
    val root = new SchemaElement("root")
    root.setNum_children(columns)
    (root +: (0 until columns).map { c =>
      val e = new SchemaElement(s"c$c")
      e.setType(Type.INT64)
      e.setRepetition_type(FieldRepetitionType.OPTIONAL)
      e
    }).asJava
  }

  private def chunk(c: Int, start: Long, size: Long, rows: Long, dictionary: Boolean): ColumnChunk = {
    val dataOffset = if (dictionary) start + math.min(size, 7L) else start
    val md = new ColumnMetaData(Type.INT64, List(Encoding.PLAIN).asJava, List(s"c$c").asJava,
      CompressionCodec.UNCOMPRESSED, rows, size, size, dataOffset)
    if (dictionary) md.setDictionary_page_offset(start)
    val cc = new ColumnChunk(start)
    cc.setMeta_data(md)
    cc
  }

  /** A random valid layout: row groups one after the other from byte 4 (with padding between some),
    * chunks contiguous inside each; some row groups without rows, some with total_compressed_size
    * unset. `total_byte_size` holds the row group's index, so parquet-java's selection can be named. */
  private def randomTable(r: Random): (FileMetaData, Long) = {
    val columns = 1 + r.nextInt(4)
    var at = 4L
    var rowsInFile = 0L
    val groups = (0 until 1 + r.nextInt(12)).map { g =>
      at += (if (r.nextInt(4) == 0) r.nextInt(500) else 0)
      val rows = if (r.nextInt(6) == 0) 0L else 1L + r.nextInt(1000)
      val start = at
      val chunks = (0 until columns).map { c =>
        val size = if (rows == 0) r.nextInt(3).toLong else 1L + r.nextInt(5000)
        val cc = chunk(c, at, size, rows, r.nextBoolean())
        // Writers that set the dictionary page offset to 0 without a dictionary (the corpus's
        // dict-page-offset-zero.parquet): the midpoint rule then starts the chunk at 0.
        if (!cc.getMeta_data.isSetDictionary_page_offset && r.nextInt(5) == 0) cc.getMeta_data.setDictionary_page_offset(0)
        at += size
        cc
      }
      val rg = new RowGroup(chunks.asJava, g.toLong, rows)
      if (r.nextBoolean()) rg.setTotal_compressed_size(at - start)
      rg.setFile_offset(start)
      rowsInFile += rows
      rg
    }
    val meta = new FileMetaData(1, schema(columns), rowsInFile, groups.asJava)
    (meta, at)
  }

  /** The row groups (by their index) parquet-java's range filter gives split `[from, until)`. */
  private def parquetJavaSplit(meta: FileMetaData, from: Long, until: Long): Seq[Int] = {
    val out = new ByteArrayOutputStream()
    Util.writeFileMetaData(meta, out)
    val read = new ParquetMetadataConverter(HadoopReadOptions.builder(new Configuration()).build()).readParquetMetadata(new ByteArrayInputStream(out.toByteArray),
      ParquetMetadataConverter.range(from, until))
    read.getBlocks.asScala.map(_.getTotalByteSize.toInt).toSeq
  }

  test("every row group is read by exactly one split, the one parquet-java's midpoint filter gives it") {
    val r = new Random(20261124L)
    for (trial <- 0 until 300) {
      val (meta, dataEnd) = randomTable(r)
      val fileSize = dataEnd + FooterBytes + 8
      val extents = RowGroupTable.check(meta.deepCopy(), path, fileSize, dataEnd)
      val splitSize = 1L + r.nextInt(fileSize.toInt)
      val splits = (0L until fileSize by splitSize).map(s => (s, math.min(s + splitSize, fileSize)))
      val assigned = splits.map { case (a, b) => RowGroupTable.inSplit(extents, a, b).toSeq }
      withClue(s"trial $trial, split size $splitSize, file $fileSize: ") {
        splits.zip(assigned).foreach { case ((a, b), mine) => assert(mine == parquetJavaSplit(meta.deepCopy(), a, b)) }
        val groups = meta.getRow_groups.asScala
        assert(assigned.flatten.sorted == groups.indices.filter(groups(_).getColumnsSize > 0))
      }
    }
  }

  private def expectError(meta: FileMetaData, dataEnd: Long, words: String*): ParquetDecodeException = {
    val e = intercept[ParquetDecodeException](RowGroupTable.check(meta, path, dataEnd + FooterBytes + 8, dataEnd))
    (path +: words).foreach(w => assert(e.getMessage.contains(w), s"'$w' not in: ${e.getMessage}"))
    e
  }

  /** A valid table of 3 row groups to break: 100 rows each, one column of 1000 bytes each. */
  private def three(): (FileMetaData, Long) = {
    val groups = (0 until 3).map { g =>
      val rg = new RowGroup(List(chunk(0, 4L + g * 1000, 1000, 100, dictionary = false)).asJava, g.toLong, 100)
      rg.setTotal_compressed_size(1000)
      rg
    }
    (new FileMetaData(1, schema(1), 300, new java.util.ArrayList(groups.asJava)), 3004L)
  }

  test("a row group whose declared range reaches past the data is an error naming it, its range and the file length") {
    for ((what, edit) <- Seq[(String, RowGroup => Unit)](
        "row group size past the footer" -> (_.setTotal_compressed_size(5000)),
        "row group size huge" -> (_.setTotal_compressed_size(Long.MaxValue / 2)),
        "row group size negative" -> (_.setTotal_compressed_size(-1)),
        "first chunk past the end" -> (_.getColumns.get(0).getMeta_data.setData_page_offset(10000)),
        "first chunk before the file" -> (_.getColumns.get(0).getMeta_data.setData_page_offset(-5)),
        "chunk sizes past the end, row group size unset" -> { rg =>
          rg.unsetTotal_compressed_size(); rg.getColumns.get(0).getMeta_data.setTotal_compressed_size(1L << 40)
        })) {
      val (meta, dataEnd) = three()
      edit(meta.getRow_groups.get(2))
      withClue(what) {
        val e = expectError(meta, dataEnd, "row group 2", "does not lie inside the file's data", "file length 3312 bytes")
        assert(e.getMessage.contains("[0, 3004)"), e.getMessage)
      }
    }
  }

  test("the file's num_rows must be the sum of its row groups'; rows need chunks; counts are not negative") {
    val (more, dataEnd) = three()
    more.setNum_rows(325)
    expectError(more, dataEnd, "num_rows is 325", "3 row groups hold 300 rows")
    val (fewer, _) = three()
    fewer.setNum_rows(200)
    expectError(fewer, dataEnd, "num_rows is 200", "hold 300 rows")
    val (lost, _) = three()
    lost.setRow_groups(lost.getRow_groups.subList(0, 2))
    expectError(lost, dataEnd, "num_rows is 300", "2 row groups hold 200 rows")
    val (none, _) = three()
    none.setRow_groups(new java.util.ArrayList[RowGroup]())
    expectError(none, dataEnd, "num_rows is 300", "0 row groups hold 0 rows")
    // 0 is an unset count (parquet-rs 0.3 wrote it): nothing is declared, nothing can be lost.
    val (unset, _) = three()
    unset.setNum_rows(0)
    assert(RowGroupTable.check(unset, path, dataEnd + FooterBytes + 8, dataEnd).length == 3)
    val (negative, _) = three()
    negative.getRow_groups.get(1).setNum_rows(-5)
    negative.setNum_rows(195)
    expectError(negative, dataEnd, "row group 1", "negative num_rows")
    val (noChunks, _) = three()
    noChunks.getRow_groups.get(1).setColumns(new java.util.ArrayList[ColumnChunk]())
    expectError(noChunks, dataEnd, "row group 1", "no column chunks")
    val (emptied, _) = three()
    emptied.getRow_groups.get(1).setNum_rows(0)
    emptied.setNum_rows(200)
    expectError(emptied, dataEnd, "row group 1", "declares no rows", "holds 100 values")
    val (overflow, _) = three()
    overflow.getRow_groups.get(1).setNum_rows(Long.MaxValue)
    expectError(overflow, dataEnd, "row group 1", "overflow")
  }

  test("a row group without rows is not checked (writers leave its offsets at 0) and is read by no split when it has no chunks") {
    val (meta, dataEnd) = three()
    val empty = new RowGroup(List(chunk(0, 0L, 0L, 0L, dictionary = false)).asJava, 3L, 0L)
    meta.getRow_groups.add(empty)
    meta.getRow_groups.add(new RowGroup(new java.util.ArrayList[ColumnChunk](), 4L, 0L))
    val extents = RowGroupTable.check(meta, path, dataEnd + FooterBytes + 8, dataEnd)
    assert(extents.length == 5 && extents(4) == null)
    assert(RowGroupTable.inSplit(extents, 0, dataEnd + FooterBytes + 8).toSeq == Seq(0, 1, 2, 3))
  }
}
