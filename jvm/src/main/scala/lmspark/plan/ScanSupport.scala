package lmspark.plan

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.FileSourceMetadataAttribute
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

import lmspark.column.ColumnReaderFactory

/**
 * Decides, from the plan alone, whether lmspark can serve a Parquet scan, and if not, why.
 * What can only be judged from a file's footer (encodings, physical types, datetime rebasing) is
 * decided per file by the reader, which hands such a file to Spark's reader.
 */
object ScanSupport {

  /** The `_metadata` fields of Spark's Parquet scan (the file's constants and `row_index`). */
  private lazy val parquetMetadataFields: Set[String] = new ParquetFileFormat().metadataSchemaFields.map(_.name).toSet

  /** Hadoop key that turns on Parquet modular encryption. */
  private val CryptoFactoryKey = "parquet.crypto.factory.class"

  /** Empty when lmspark can serve the scan; otherwise every reason it cannot. */
  def declineReasons(scan: FileSourceScanExec, session: SparkSession): Seq[String] = {
    val conf = session.sessionState.conf
    val relation = scan.relation
    val reasons = Seq.newBuilder[String]

    // `_metadata`: Spark's file scan fills its constant fields and assembles the struct; lmspark's
    // reader fills the row index (the temporary column Spark's reader fills). Other fields (a table
    // format's, such as Delta's row tracking) and other generated columns are not served.
    val served = parquetMetadataFields + ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME
    val unservedFields = scan.output.filter(a => FileSourceMetadataAttribute.isValid(a.metadata)).flatMap(a => a.dataType match {
      case st: StructType => st.fieldNames.filterNot(served.contains).map(f => s"${a.name}.$f")
      case _ => if (served.contains(a.name)) Nil else Seq(a.name)
    }) ++ scan.fileConstantMetadataColumns.map(_.name).filterNot(served.contains)
    val generatedCols = scan.requiredSchema.fields.filter { f =>
      f.name == ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME ||
        f.metadata.contains(FileSourceMetadataAttribute.FILE_SOURCE_METADATA_COL_ATTR_KEY) ||
        f.metadata.contains("__file_source_generated_metadata_col")
    }
    val unservedGenerated = generatedCols.filterNot(f =>
      f.name == ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME && f.dataType == LongType).map(_.name)
    if (unservedFields.nonEmpty || unservedGenerated.nonEmpty) {
      val names = (unservedFields ++ unservedGenerated).distinct
      reasons += s"reads metadata columns lmspark does not serve (${names.mkString(", ")})"
    }

    scan.requiredSchema.fields.foreach { f =>
      if (!generatedCols.contains(f)) {
        ColumnReaderFactory.unsupportedSparkType(f.dataType).foreach { why =>
          reasons += s"column ${f.name}: $why"
        }
      }
    }

    val hadoopConf = session.sessionState.newHadoopConfWithOptions(relation.options)
    if (hadoopConf.get(CryptoFactoryKey) != null) {
      reasons += s"Parquet modular encryption is configured ($CryptoFactoryKey)"
    }

    val resultSchema = StructType(scan.requiredSchema.fields ++ relation.partitionSchema.fields)
    if (!relation.fileFormat.supportBatch(session, resultSchema)) {
      reasons += sparkBatchReaderUnavailable(conf, resultSchema)
    }
    reasons.result()
  }

  /**
   * Spark's vectorized reader is lmspark's per-file fallback, asked for batches whatever the
   * session's codegen settings (`ParquetFileFormat.supportBatch` checks only the reader switch
   * and the types); say why it cannot serve.
   */
  private def sparkBatchReaderUnavailable(conf: SQLConf, schema: StructType): String = {
    val why =
      if (!conf.parquetVectorizedReaderEnabled) s"${SQLConf.PARQUET_VECTORIZED_READER_ENABLED.key} is false"
      else "the schema is not supported by Spark's vectorized reader"
    s"Spark's vectorized Parquet reader (lmspark's per-file fallback) cannot return batches: $why"
  }
}
