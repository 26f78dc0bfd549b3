package lmspark.scan

import java.time.ZoneId
import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData, ColumnPath, ParquetMetadata}
import org.apache.parquet.schema.Type
import org.apache.parquet.schema.Type.Repetition
import org.apache.spark.sql.execution.datasources.parquet.ParquetUtils
import org.apache.spark.sql.types._

import lmspark.column.{ColumnReadOptions, ColumnReaderFactory, RebaseCheck}
import lmspark.shim.SparkInternals

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
final case class FileReadPlan(columns: IndexedSeq[ColumnPlan]) {
  /** The leaves read from the file (projected or filtered), in requested order. */
  def leaves: Seq[ColumnDescriptor] = columns.collect { case p: ColumnPlan.Present => p.descriptor }
}

object FileReadPlan {

  /** Right(plan), or Left(the reason lmspark cannot read this file). */
  def build(footer: ParquetMetadata, requiredSchema: StructType, settings: ScanSettings,
      unknownLogicalTypes: Set[String] = Set.empty): Either[String, FileReadPlan] = {
    val fileSchema = footer.getFileMetaData.getSchema
    val fields = fileSchema.getFields.asScala.toIndexedSeq
    val byName: Map[String, Seq[Type]] =
      if (settings.caseSensitive) fields.groupBy(_.getName)
      else fields.groupBy(_.getName.toLowerCase(Locale.ROOT))
    val keyValues = footer.getFileMetaData.getKeyValueMetaData
    lazy val rebase = SparkInternals.datetimeRebase(keyValues, settings.datetimeRebaseModeInRead)
    lazy val int96Rebase = SparkInternals.int96Rebase(keyValues, settings.int96RebaseModeInRead)
    lazy val int96ConvertTz: Option[ZoneId] = {
      // As ParquetFileFormat: only files not written by parquet-mr are shifted.
      val createdBy = Option(footer.getFileMetaData.getCreatedBy).getOrElse("")
      if (settings.int96TimestampConversion && !createdBy.startsWith("parquet-mr"))
        Some(ZoneId.of(settings.sessionTimeZone, ZoneId.SHORT_IDS))
      else None
    }

    // Spark's field-id matching (ParquetReadSupport.clipParquetGroupFields): with
    // fieldId.read.enabled and ids in the requested schema, a field with an id matches the file
    // field with that id (or none: nulls); the others match by name.
    val matchById = settings.useFieldId && ParquetUtils.hasFieldIds(requiredSchema)
    if (matchById && !fields.exists(containsFieldIds) && !settings.ignoreMissingFieldId)
      return Left("the read schema has field ids but the file has none (Spark raises its own error)")
    lazy val byId: Map[Int, Seq[Type]] = fields.filter(_.getId != null).groupBy(_.getId.intValue())

    def candidates(field: StructField): Seq[Type] =
      if (matchById && ParquetUtils.hasFieldId(field)) byId.getOrElse(ParquetUtils.getFieldId(field), Nil)
      else byName.getOrElse(if (settings.caseSensitive) field.name else field.name.toLowerCase(Locale.ROOT), Nil)

    def resolve(field: StructField): Either[String, ColumnPlan] =
      candidates(field) match {
        case Seq() if !field.nullable => Left(s"required column ${field.name} is missing in the file")
        case Seq() => Right(ColumnPlan.Missing)
        case Seq(t) if !t.isPrimitive => Left(s"column ${field.name} is not a primitive column in the file")
        case Seq(t) if t.getRepetition == Repetition.REPEATED => Left(s"column ${field.name} is repeated in the file")
        case Seq(t) if unknownLogicalTypes.contains(t.getName) =>
          Left(s"column ${field.name}: its logical type is unknown to this Spark line's parquet-java")
        case Seq(t) =>
          val descriptor = fileSchema.getColumnDescription(Array(t.getName))
          val options = ColumnReadOptions(
            rebaseCheck = if (usesDatetimeRebase(field.dataType)) rebase else RebaseCheck.None,
            int96Rebase = if (field.dataType == TimestampType) int96Rebase else RebaseCheck.None,
            int96ConvertTz = if (field.dataType == TimestampType) int96ConvertTz else None)
          for {
            _ <- ColumnReaderFactory.unsupportedReason(descriptor, field.dataType)
              .map(why => s"column ${field.name}: $why").toLeft(())
            _ <- footer.getBlocks.asScala.iterator
              .flatMap(b => findChunk(b, descriptor))
              .flatMap(c => ColumnReaderFactory.unsupportedReason(descriptor, field.dataType, c))
              .take(1).toList.headOption.map(why => s"column ${field.name}: $why").toLeft(())
          } yield ColumnPlan.Present(descriptor, field.dataType, options)
        case many if matchById && ParquetUtils.hasFieldId(field) =>
          Left(s"column ${field.name} matches ${many.size} fields by field id")
        case many => Left(s"column ${field.name} matches ${many.size} fields case-insensitively")
      }

    val plans = IndexedSeq.newBuilder[ColumnPlan]
    val it = requiredSchema.fields.iterator
    while (it.hasNext) resolve(it.next()) match {
      case Right(p) => plans += p
      case Left(why) => return Left(why)
    }
    val result = plans.result()
    if (matchById) {
      // By id and by name, two read columns can land on one file column; Spark's answer for that
      // is its own business, so such files go to Spark's reader.
      val leaves = result.collect { case p: ColumnPlan.Present => p.descriptor.getPath.mkString(".") }
      val twice = leaves.diff(leaves.distinct)
      if (twice.nonEmpty) return Left(s"file column ${twice.head} is matched by two read columns (field id and name)")
    }
    Right(FileReadPlan(result))
  }

  /** Spark rebases dates, timestamps (not timestamp_ntz) and dates read as timestamp_ntz. */
  private def usesDatetimeRebase(dt: DataType): Boolean = dt match {
    case DateType | TimestampType | TimestampNTZType => true
    case _ => false
  }

  private def containsFieldIds(t: Type): Boolean =
    t.getId != null || (!t.isPrimitive && t.asGroupType.getFields.asScala.exists(containsFieldIds))

  /** The chunk of `block` that holds leaf `descriptor`, if any. */
  private def findChunk(block: BlockMetaData, descriptor: ColumnDescriptor): Option[ColumnChunkMetaData] = {
    val path = ColumnPath.get(descriptor.getPath: _*)
    block.getColumns.asScala.find(_.getPath == path)
  }

  /** The chunk of `block` that holds leaf `descriptor`: one the reader reads, which
    * [[lmspark.meta.FooterChecks]] checked to be there before reading began. */
  def chunkOf(block: BlockMetaData, descriptor: ColumnDescriptor): ColumnChunkMetaData =
    findChunk(block, descriptor).getOrElse(throw new IllegalStateException(
      s"internal error: row group at offset ${block.getStartingPos} has no chunk for column " +
        s"${descriptor.getPath.mkString(".")}, which the footer checks let through"))
}
