package lmspark.testutil

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.impl.ColumnReadStoreImpl
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

/** parquet-java as the reference reader: values through its own column readers, and page counts
  * through its own page readers. */
object ParquetOracle {

  /** Values indexed [column][row group][row]; nulls as null, binaries as ArraySeq[Byte]. */
  def readAll(path: Path): IndexedSeq[IndexedSeq[IndexedSeq[Any]]] = {
    val reader = ParquetFileReader.open(new LocalInputFile(path))
    try {
      val schema = reader.getFooter.getFileMetaData.getSchema
      val createdBy = reader.getFooter.getFileMetaData.getCreatedBy
      val columns = schema.getColumns.asScala.toIndexedSeq
      val perRowGroup = reader.getRowGroups.asScala.toIndexedSeq.map { block =>
        val pages = reader.readNextRowGroup()
        val store = new ColumnReadStoreImpl(pages, new GroupRecordConverter(schema).getRootConverter, schema, createdBy)
        columns.map { d =>
          val cr = store.getColumnReader(d)
          IndexedSeq.fill(block.getRowCount.toInt) {
            val v =
              if (cr.getCurrentDefinitionLevel < d.getMaxDefinitionLevel) null
              else d.getPrimitiveType.getPrimitiveTypeName match {
                case PrimitiveTypeName.BOOLEAN => cr.getBoolean
                case PrimitiveTypeName.INT32 => cr.getInteger
                case PrimitiveTypeName.INT64 => cr.getLong
                case PrimitiveTypeName.FLOAT => cr.getFloat
                case PrimitiveTypeName.DOUBLE => cr.getDouble
                case _ => TestTypes.bytes(cr.getBinary.getBytes)
              }
            cr.consume()
            v
          }
        }
      }
      columns.indices.map(c => perRowGroup.map(_(c)))
    } finally reader.close()
  }

  /** `f` applied to parquet-java's page reader of every chunk, per [row group][column]. */
  def perChunk[T](path: Path)(f: org.apache.parquet.column.page.PageReader => T): IndexedSeq[IndexedSeq[T]] = {
    val reader = ParquetFileReader.open(new LocalInputFile(path))
    try {
      val columns = reader.getFooter.getFileMetaData.getSchema.getColumns.asScala.toIndexedSeq
      reader.getRowGroups.asScala.toIndexedSeq.map { _ =>
        val pages = reader.readNextRowGroup()
        columns.map(d => f(pages.getPageReader(d)))
      }
    } finally reader.close()
  }

  /** Pages (dictionary page included) per [row group][column]. */
  def pageCounts(path: Path): IndexedSeq[IndexedSeq[Int]] = perChunk(path) { pr =>
    var n = if (pr.readDictionaryPage() != null) 1 else 0
    while (pr.readPage() != null) n += 1
    n
  }
}
