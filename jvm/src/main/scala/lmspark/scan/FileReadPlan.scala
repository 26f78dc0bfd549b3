package lmspark.scan

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnPath, ParquetMetadata}
import org.apache.parquet.schema.Type
import org.apache.parquet.schema.Type.Repetition
import org.apache.spark.sql.types._

import lmspark.column.{ColumnReadOptions, ColumnReaderFactory, RebaseCheck}
import lmspark.shim.SparkInternals
import lmspark.shim.SparkInternals.DatetimeRebase

/** How one requested column is read from one file. */
sealed trait ColumnPlan
object ColumnPlan {
  /** The file has the column: read leaf `descriptor` as `sparkType`. */
  final case class Present(descriptor: ColumnDescriptor, sparkType: DataType,
      options: ColumnReadOptions) extends ColumnPlan
  /** The file lacks the column: it reads as nulls. */
  case object Missing extends ColumnPlan
}

/**
 * What lmspark will read from one file: one [[ColumnPlan]] per requested column, in the order of
 * the requested schema. Built from the footer alone; when lmspark cannot read the file, building
 * it gives the reason instead, and the file goes to Spark's reader.
 */
final case class FileReadPlan(columns: IndexedSeq[ColumnPlan])

object FileReadPlan {

  /** Right(plan), or Left(the reason lmspark cannot read this file). */
  def build(footer: ParquetMetadata, requiredSchema: StructType, settings: ScanSettings): Either[String, FileReadPlan] = {
    val fileSchema = footer.getFileMetaData.getSchema
    val fields = fileSchema.getFields.asScala.toIndexedSeq
    val byName: Map[String, Seq[Type]] =
      if (settings.caseSensitive) fields.groupBy(_.getName)
      else fields.groupBy(_.getName.toLowerCase(Locale.ROOT))
    lazy val rebase = SparkInternals.datetimeRebase(
      footer.getFileMetaData.getKeyValueMetaData, settings.datetimeRebaseModeInRead)

    def resolve(field: StructField): Either[String, ColumnPlan] = {
      val key = if (settings.caseSensitive) field.name else field.name.toLowerCase(Locale.ROOT)
      byName.getOrElse(key, Nil) match {
        case Seq() if !field.nullable => Left(s"required column ${field.name} is missing in the file")
        case Seq() => Right(ColumnPlan.Missing)
        case Seq(t) if !t.isPrimitive => Left(s"column ${field.name} is not a primitive column in the file")
        case Seq(t) if t.getRepetition == Repetition.REPEATED => Left(s"column ${field.name} is repeated in the file")
        case Seq(t) =>
          val descriptor = fileSchema.getColumnDescription(Array(t.getName))
          for {
            _ <- ColumnReaderFactory.unsupportedReason(descriptor, field.dataType)
              .map(why => s"column ${field.name}: $why").toLeft(())
            check <- rebaseCheck(field, rebase)
            _ <- footer.getBlocks.asScala.iterator
              .flatMap(b => ColumnReaderFactory.unsupportedReason(descriptor, field.dataType, chunkOf(b, descriptor)))
              .nextOption().map(why => s"column ${field.name}: $why").toLeft(())
          } yield ColumnPlan.Present(descriptor, field.dataType, ColumnReadOptions(rebaseCheck = check))
        case many => Left(s"column ${field.name} matches ${many.size} fields case-insensitively")
      }
    }

    val plans = IndexedSeq.newBuilder[ColumnPlan]
    val it = requiredSchema.fields.iterator
    while (it.hasNext) resolve(it.next()) match {
      case Right(p) => plans += p
      case Left(why) => return Left(why)
    }
    Right(FileReadPlan(plans.result()))
  }

  /** The datetime check a column needs; dates and timestamps (not timestamp_ntz) may be rebased. */
  private def rebaseCheck(field: StructField, rebase: => DatetimeRebase): Either[String, RebaseCheck] =
    field.dataType match {
      case DateType | TimestampType => rebase match {
        case DatetimeRebase.Corrected => Right(RebaseCheck.None)
        case DatetimeRebase.FailOnAncient => Right(RebaseCheck.FailOnAncient)
        case DatetimeRebase.Legacy => Left(s"column ${field.name} needs LEGACY datetime rebasing")
      }
      case _ => Right(RebaseCheck.None)
    }

  /** The chunk of `block` that holds leaf `descriptor`. */
  def chunkOf(block: BlockMetaData, descriptor: ColumnDescriptor): org.apache.parquet.hadoop.metadata.ColumnChunkMetaData = {
    val path = ColumnPath.get(descriptor.getPath: _*)
    block.getColumns.asScala.find(_.getPath == path)
      .getOrElse(throw new java.io.IOException(
        s"row group at offset ${block.getStartingPos} has no chunk for column $path"))
  }
}
