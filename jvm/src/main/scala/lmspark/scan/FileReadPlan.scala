package lmspark.scan

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ParquetMetadata}
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
    val byName: Map[String, Seq[org.apache.parquet.schema.Type]] =
      if (settings.caseSensitive) fields.groupBy(_.getName)
      else fields.groupBy(_.getName.toLowerCase(Locale.ROOT))

    lazy val rebase = SparkInternals.datetimeRebase(
      footer.getFileMetaData.getKeyValueMetaData, settings.datetimeRebaseModeInRead)

    val plans = requiredSchema.fields.toIndexedSeq.map { field =>
      val key = if (settings.caseSensitive) field.name else field.name.toLowerCase(Locale.ROOT)
      byName.getOrElse(key, Nil) match {
        case Seq() =>
          if (!field.nullable) return Left(s"required column ${field.name} is missing in the file")
          ColumnPlan.Missing
        case Seq(t) =>
          if (!t.isPrimitive) return Left(s"column ${field.name} is not a primitive column in the file")
          if (t.getRepetition == Repetition.REPEATED) return Left(s"column ${field.name} is repeated in the file")
          val descriptor = fileSchema.getColumnDescription(Array(t.getName))
          ColumnReaderFactory.unsupportedReason(descriptor, field.dataType) match {
            case Some(why) => return Left(s"column ${field.name}: $why")
            case None =>
          }
          val check = field.dataType match {
            case DateType | TimestampType => rebase match {
              case DatetimeRebase.Corrected => RebaseCheck.None
              case DatetimeRebase.FailOnAncient => RebaseCheck.FailOnAncient
              case DatetimeRebase.Legacy =>
                return Left(s"column ${field.name} needs LEGACY datetime rebasing")
            }
            case _ => RebaseCheck.None
          }
          ColumnPlan.Present(descriptor, field.dataType, ColumnReadOptions(rebaseCheck = check))
        case many =>
          return Left(s"column ${field.name} matches ${many.size} fields case-insensitively")
      }
    }

    val blocks = footer.getBlocks.asScala
    for (block <- blocks; (plan, field) <- plans.zip(requiredSchema.fields)) plan match {
      case ColumnPlan.Present(descriptor, sparkType, _) =>
        ColumnReaderFactory.unsupportedReason(descriptor, sparkType, chunkOf(block, descriptor)) match {
          case Some(why) => return Left(s"column ${field.name}: $why")
          case None =>
        }
      case ColumnPlan.Missing =>
    }
    Right(FileReadPlan(plans))
  }

  /** The chunk of `block` that holds leaf `descriptor`. */
  def chunkOf(block: BlockMetaData, descriptor: ColumnDescriptor): org.apache.parquet.hadoop.metadata.ColumnChunkMetaData = {
    val path = descriptor.getPath
    block.getColumns.asScala.find(c => java.util.Arrays.equals(c.getPath.toArray, path))
      .getOrElse(throw new java.io.IOException(
        s"row group at offset ${block.getStartingPos} has no chunk for column ${path.mkString(".")}"))
  }
}
