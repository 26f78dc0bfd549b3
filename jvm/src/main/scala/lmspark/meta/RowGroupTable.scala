package lmspark.meta

import scala.jdk.CollectionConverters._

import org.apache.parquet.format.{ColumnChunk, FileMetaData, RowGroup}

import lmspark.column.ParquetDecodeException

/** The footer's row-group table as every split of a file sees it, checked so that each row group
  * holding rows is read by exactly one split, or the read fails.
  *
  * Spark's splits of a file cover `[0, file length)` without overlap, and a split reads the row
  * groups whose midpoint lies inside it (parquet-java's `filterFileMetaDataByMidpoint`, whose rule
  * [[midpoints]] computes the same way: the first column chunk's offset, or the row group's
  * `file_offset` when the first chunk carries no metadata, plus half of `total_compressed_size`, or
  * of the chunks' sizes when that is unset). So a row group whose declared range lies inside the
  * file's data is read by exactly one split; one whose range reaches past the data would be read by
  * none, its rows lost in silence. [[check]] rejects that, for every row group of the file whichever
  * split asks: each row group's `num_rows` is not negative; one without rows has no chunk holding
  * values (every row has a value or null in every leaf); one holding rows has column chunks, and
  * its range `[start, start + size)` lies in `[0, dataEnd)` (inside the file, before the footer;
  * not after the leading magic: writers that set the dictionary page offset to 0 make the rule
  * start a row group at 0, and Spark reads such files); and the file's `num_rows` equals the sum
  * of its row groups' (a file that declares rows no row group holds has lost some), unless it is 0,
  * which early writers left unset. Violations are [[ParquetDecodeException]]s naming the file,
  * the row group (its index in the footer's list, the numbering of every lmspark message), its
  * declared range and the file's length. Pure: reads nothing. */
object RowGroupTable {

  /** Bytes of the leading `PAR1`: where parquet-java's rule starts a first row group whose
    * `file_offset` it does not trust. */
  private val Magic = 4L

  /** Where one row group says it lies: `start` and `size` as the midpoint rule reads them. */
  final case class Extent(start: Long, size: Long) {
    def end: Long = start + size
    def midpoint: Long = start + size / 2
  }

  /** Checks the table (see the object's doc) and returns each row group's extent, in footer order;
    * a row group without column chunks (and so without rows) has none (`null`). */
  def check(meta: FileMetaData, path: String, fileSize: Long, dataEnd: Long): Array[Extent] = {
    val groups = Option(meta.getRow_groups).map(_.asScala.toIndexedSeq).getOrElse(IndexedSeq.empty)
    val extents = midpoints(groups)
    var sum = 0L
    groups.indices.foreach { i =>
      val rg = groups(i)
      val rows = rg.getNum_rows
      def bad(what: String): Nothing =
        throw new ParquetDecodeException(s"malformed footer: row group $i $what (file $path, row group $i, " +
          s"file length $fileSize bytes)")
      if (rows < 0) bad(s"has a negative num_rows ($rows)")
      if (rows == 0) {
        // Every row has at least one value (or null) in every leaf, so a row group without rows has
        // none; one whose chunk holds values has lost its row count, and nobody would read them.
        val full = rg.getColumns.asScala.find(c => c.isSetMeta_data && c.getMeta_data.getNum_values > 0)
        full.foreach(c => bad(s"declares no rows but its chunk of ${c.getMeta_data.getPath_in_schema.asScala.mkString(".")} " +
          s"holds ${c.getMeta_data.getNum_values} values: no split would read them"))
      }
      if (rows > 0) {
        val e = extents(i)
        if (e == null) bad(s"declares $rows rows but has no column chunks")
        if (e.size < 0 || e.start < 0 || e.end > dataEnd || e.end < e.start)
          bad(s"declares the byte range [${e.start}, ${e.end}) (its first column chunk's offset and its " +
            s"total_compressed_size ${e.size}), which does not lie inside the file's data [0, $dataEnd): no split " +
            s"of the file would read its $rows rows")
      }
      sum =
        try Math.addExact(sum, rows)
        catch { case _: ArithmeticException => bad(s"makes the row groups' num_rows overflow") }
    }
    // 0 is how early writers left the field unset (parquet-rs 0.3: the corpus's
    // repeated_no_annotation.parquet declares 0 rows and holds 6); it declares no rows to lose.
    if (meta.getNum_rows != sum && meta.getNum_rows != 0)
      throw new ParquetDecodeException(s"malformed footer: the file's num_rows is ${meta.getNum_rows} but its " +
        s"${groups.size} row groups hold $sum rows (file $path, file length $fileSize bytes)")
    extents
  }

  /** The indexes of the row groups a split `[from, until)` reads: those whose midpoint lies in it
    * and that have column chunks. */
  def inSplit(extents: Array[Extent], from: Long, until: Long): Array[Int] =
    extents.indices.filter { i =>
      val e = extents(i)
      e != null && e.midpoint >= from && e.midpoint < until
    }.toArray

  /** Each row group's extent as parquet-java's midpoint rule reads it; `null` for one without
    * column chunks. */
  private def midpoints(groups: IndexedSeq[RowGroup]): Array[Extent] = {
    val firstWithMetadata = groups.headOption.forall(g => g.getColumnsSize == 0 || g.getColumns.get(0).isSetMeta_data)
    var previousStart = 0L
    var previousSize = 0L
    groups.map { rg =>
      if (rg.getColumnsSize == 0) null
      else {
        val start =
          if (firstWithMetadata) chunkOffset(rg)
          else {
            // As parquet-java (PARQUET-2078): only the first row group's file_offset is trusted
            // when it is 4; a later one must not start before the previous one ends.
            var s = rg.getFile_offset
            val invalid =
              if (previousStart == 0) s != Magic
              else s < previousStart + previousSize
            if (invalid) s = if (previousStart == 0) Magic else previousStart + previousSize
            previousStart = s
            previousSize = rg.getTotal_compressed_size
            s
          }
        val size =
          if (rg.isSetTotal_compressed_size) rg.getTotal_compressed_size
          else rg.getColumns.asScala.iterator.filter(_.isSetMeta_data).map(_.getMeta_data.getTotal_compressed_size).sum
        Extent(start, size)
      }
    }.toArray
  }

  /** The first chunk's first byte as parquet-java's midpoint rule takes it (the row group's
    * `file_offset` when that chunk has no metadata, where parquet-java would fail). */
  private def chunkOffset(rg: RowGroup): Long = {
    val c: ColumnChunk = rg.getColumns.get(0)
    if (!c.isSetMeta_data) return rg.getFile_offset
    val md = c.getMeta_data
    val data = md.getData_page_offset
    if (md.isSetDictionary_page_offset && data > md.getDictionary_page_offset) md.getDictionary_page_offset else data
  }
}
