package lmspark.scan

import java.time.ZoneId
import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.parquet.column.ColumnDescriptor
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnChunkMetaData, ColumnPath, ParquetMetadata}
import org.apache.parquet.schema.Type
import org.apache.parquet.schema.Type.Repetition
import org.apache.spark.sql.execution.datasources.parquet.{ParquetFileFormat, ParquetUtils}
import org.apache.spark.sql.types._

import lmspark.column.{ColumnReadOptions, ColumnReaderFactory, NestedShape, RebaseCheck}
import lmspark.predicate.ScanColumns
import lmspark.shim.{ParquetColumns, SparkInternals}

/** How one requested column is read from one file. */
sealed trait ColumnPlan
object ColumnPlan {
  /** The file has the column: read leaf `descriptor` as `sparkType`. */
  final case class Present(descriptor: ColumnDescriptor, sparkType: DataType,
      options: ColumnReadOptions) extends ColumnPlan
  /** The file lacks the column: it reads as nulls. */
  case object Missing extends ColumnPlan
  /** A nested requested column (struct, list, map): its leaves are plan columns of their own. */
  final case class Nested(shape: NestedShape) extends ColumnPlan
  /** The row-index column Spark's readers fill for `_metadata.row_index` (each row's index in the
    * file): read from no chunk ([[lmspark.column.RowIndexReader]]). */
  case object RowIndex extends ColumnPlan
  /** The table format's mark column ([[ScanSettings.markColumn]]): 1 on a row its marks drop, 0
    * on the others, read from no chunk ([[lmspark.column.RowMarkReader]]). */
  case object RowMark extends ColumnPlan
}

/**
 * What lmspark will read from one file: one [[ColumnPlan]] per plan column. The plan's column ids
 * are the scan's ([[ScanColumns]]: the requested columns, then the struct fields filters may name),
 * then the other leaves of the file's nested columns; each leaf chunk read has one id, whether it
 * is a flat requested column, a struct field or a leaf below a list. Built from the footer alone;
 * when lmspark cannot read the file, building it gives the reason instead, and the file goes to
 * Spark's reader.
 */
final case class FileReadPlan(columns: IndexedSeq[ColumnPlan]) {
  /** The leaves read from the file (projected or filtered), in id order. */
  def leaves: Seq[ColumnDescriptor] = columns.collect { case p: ColumnPlan.Present => p.descriptor }

  /** The plan columns whose chunks reading column `col` takes: itself (a leaf), its leaves (nested),
    * or none (missing). */
  def readColumns(col: Int): Seq[Int] = columns(col) match {
    case _: ColumnPlan.Present => Seq(col)
    case ColumnPlan.Missing | ColumnPlan.RowIndex | ColumnPlan.RowMark => Nil
    case ColumnPlan.Nested(shape) => NestedShape.leaves(shape).map(_.column).distinct
  }

  /** The plan columns that nested columns read (their leaves). */
  lazy val nestedLeaves: Set[Int] =
    columns.iterator.collect { case ColumnPlan.Nested(shape) => NestedShape.leaves(shape).map(_.column) }.flatten.toSet
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

    val ids = new ScanColumns(requiredSchema)
    val leafPlans = scala.collection.mutable.ArrayBuffer.fill[ColumnPlan](ids.count - ids.requested)(ColumnPlan.Missing)

    def leafOptions(dt: DataType): ColumnReadOptions = ColumnReadOptions(
      rebaseCheck = if (usesDatetimeRebase(dt)) rebase else RebaseCheck.None,
      int96Rebase = if (dt == TimestampType) int96Rebase else RebaseCheck.None,
      int96ConvertTz = if (dt == TimestampType) int96ConvertTz else None)

    /** Why leaf `descriptor` cannot be read as `dt` (the leaf, then each of its chunks), if so. */
    def leafRefusal(name: String, descriptor: ColumnDescriptor, dt: DataType): Option[String] =
      ColumnReaderFactory.unsupportedReason(descriptor, dt).map(why => s"column $name: $why").orElse(
        footer.getBlocks.asScala.iterator
          .flatMap(b => findChunk(b, descriptor))
          .flatMap(c => ColumnReaderFactory.unsupportedReason(descriptor, dt, c))
          .take(1).toList.headOption.map(why => s"column $name: $why"))

    def nested(i: Int, field: StructField): Either[String, ColumnPlan] = {
      val node = try ParquetColumns.of(fileSchema, StructType(Seq(field)), settings.caseSensitive, matchById,
          settings.nullStructIfFieldsMissing).head
        catch { case scala.util.control.NonFatal(e) => return Left(s"column ${field.name}: Spark's schema clipping failed: $e") }
      val builder = new NestedReadPlan(fileSchema, settings.unreadFields, (descriptor, dt, ordinals) => {
        val name = descriptor.getPath.mkString(".")
        leafRefusal(name, descriptor, dt).toLeft(()).map { _ =>
          val plan = ColumnPlan.Present(descriptor, dt, leafOptions(dt))
          ordinals.flatMap(o => ids.structFieldId(i, o)) match {
            case Some(id) => leafPlans(id - ids.requested) = plan; id
            case None => leafPlans += plan; ids.requested + leafPlans.length - 1
          }
        }
      })
      builder.shape(field, node).map {
        case _: NestedShape.Absent => ColumnPlan.Missing
        case s if NestedShape.leaves(s).isEmpty => ColumnPlan.Missing
        case s => ColumnPlan.Nested(s)
      }
    }

    def resolve(i: Int, field: StructField): Either[String, ColumnPlan] =
      if (field.name == ParquetFileFormat.ROW_INDEX_TEMPORARY_COLUMN_NAME && field.dataType == LongType)
        Right(ColumnPlan.RowIndex)
      else if (settings.markColumn.contains(field.name))
        if (field.dataType == ByteType) Right(ColumnPlan.RowMark)
        else Left(s"the table format's mark column ${field.name} is ${field.dataType.simpleString}, not tinyint")
      else if (field.dataType.isInstanceOf[StructType] || field.dataType.isInstanceOf[ArrayType] ||
          field.dataType.isInstanceOf[MapType]) {
        if (unknownLogicalTypes.nonEmpty && candidates(field).exists(t => unknownLogicalTypes.exists(u => containsName(t, u))))
          Left(s"column ${field.name}: its logical type is unknown to this Spark line's parquet-java")
        else nested(i, field)
      } else candidates(field) match {
        case Seq() if !field.nullable => Left(s"required column ${field.name} is missing in the file")
        case Seq() => Right(ColumnPlan.Missing)
        case Seq(t) if !t.isPrimitive => Left(s"column ${field.name} is not a primitive column in the file")
        case Seq(t) if t.getRepetition == Repetition.REPEATED => Left(s"column ${field.name} is repeated in the file")
        case Seq(t) if unknownLogicalTypes.contains(t.getName) =>
          Left(s"column ${field.name}: its logical type is unknown to this Spark line's parquet-java")
        case Seq(t) =>
          val descriptor = fileSchema.getColumnDescription(Array(t.getName))
          leafRefusal(field.name, descriptor, field.dataType).toLeft(ColumnPlan.Present(descriptor, field.dataType,
            leafOptions(field.dataType)))
        case many if matchById && ParquetUtils.hasFieldId(field) =>
          Left(s"column ${field.name} matches ${many.size} fields by field id")
        case many => Left(s"column ${field.name} matches ${many.size} fields case-insensitively")
      }

    val plans = IndexedSeq.newBuilder[ColumnPlan]
    var i = 0
    while (i < requiredSchema.length) {
      resolve(i, requiredSchema.fields(i)) match {
        case Right(p) => plans += p
        case Left(why) => return Left(why)
      }
      i += 1
    }
    val result = plans.result() ++ leafPlans
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

  private def containsName(t: Type, name: String): Boolean =
    t.getName == name || (!t.isPrimitive && t.asGroupType.getFields.asScala.exists(containsName(_, name)))

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
