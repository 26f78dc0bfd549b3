package lmspark.meta

import java.nio.file.{Files, Path}

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.parquet.schema.{MessageType, Type}
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.execution.datasources.parquet.ParquetToSparkSchemaConverter
import org.apache.spark.sql.types.{DataType, StructType}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import lmspark.column.{ChunkDictionary, ColumnReadOptions, ColumnReaderFactory, SparkValues}
import lmspark.io.{ChunkContext, CodecFixtures, PageSource}
import lmspark.predicate.ColumnStats
import lmspark.testutil._
import lmspark.testutil.Sources

/** The parquet-testing corpus: for every flat column lmspark reads, of every file parquet-java can
  * open, the chunk statistics, page indexes, bloom filters and dictionaries lmspark accepts are
  * checked against the rows it reads (bounds hold every value, exact bounds are values, null
  * counts are the rows', a kept page's header agrees with its offset index, a bloom filter denies
  * no present value, dictionary entries are the chunk's values); what lmspark rejects is listed
  * with the reason (printed at the end, for the record). Cancelled when the corpus is absent. */
class CorpusMetadataSuite extends AnyFunSuite with BeforeAndAfterAll {
  import CorpusMetadataSuite._

  private val rejections = ArrayBuffer.empty[String]
  private val acceptances = ArrayBuffer.empty[String]

  private val files: Seq[Path] = CodecFixtures.corpusDir.toSeq.flatMap { d =>
    Files.walk(d).iterator.asScala.filter(p => p.toString.endsWith(".parquet") && !p.toString.contains("encrypt"))
      .toSeq.sortBy(_.toString)
  }

  if (files.isEmpty) test("corpus metadata") { assume(false, "parquet-testing corpus not found") }

  for (path <- files) {
    val name = CodecFixtures.corpusDir.get.relativize(path).toString
    test(s"$name: accepted metadata holds for the rows, rejected metadata has a reason") {
      val lm = Try(new LmFile(path)).toOption
      assume(lm.isDefined, s"parquet-java cannot open $name")
      try checkFile(name, lm.get) finally lm.get.close()
    }
  }

  private def note(file: String, what: String, reason: String): Unit = synchronized { rejections += s"$file: $what: $reason" }

  private def checkFile(file: String, lm: LmFile): Unit = {
    val schema = lm.footer.getFileMetaData.getSchema
    val types = sparkTypes(schema)
    var accepted = Map.empty[String, Int].withDefaultValue(0)
    for ((field, c) <- schema.getFields.asScala.zipWithIndex if field.isPrimitive && types.contains(field.getName)) {
      val col = lm.columnIndex(field.getName)
      val desc = lm.descriptor(col)
      val t = types(field.getName)
      for (rg <- 0 until lm.rowGroups
          if ColumnReaderFactory.unsupportedReason(desc, t, lm.chunk(rg, col)).isEmpty && col >= 0) {
        val chunk = lm.chunk(rg, col)
        val rows = lm.rowCount(rg)
        val what = s"${field.getName} rg $rg"
        val values = Try(LmReading.readAll(lm.reader(rg, col, t), t, rows.toInt, 4096).map(LogicalFiles.toCatalyst(t, _)))
        if (values.isFailure) note(file, what, s"rows unreadable: ${values.failed.get.getMessage.take(120)}")
        for (vs <- values) {
          val sv = SparkValues.forColumn(desc, t, ColumnReadOptions()).get
          val ord = TypeUtils.getInterpretedOrdering(t)
          def holds(where: String, s: ColumnStats, rowValues: IndexedSeq[Any]): Unit = {
            s.nullCount.foreach(n => assert(n == rowValues.count(_ == null), s"$file $where: null count $n"))
            assert(s.rowCount == rowValues.size)
            val ordered = rowValues.filter(v => v != null && !LogicalFiles.isNaN(v))
            for (lo <- s.min; x <- ordered) assert(ord.lteq(lo, x), s"$file $where: ${SparkValuesShow(x)} below min ${SparkValuesShow(lo)}")
            for (hi <- s.max; x <- ordered) assert(ord.lteq(x, hi), s"$file $where: ${SparkValuesShow(x)} above max ${SparkValuesShow(hi)}")
            if (s.minExact) assert(ordered.exists(ord.equiv(_, s.min.get)), s"$file $where: exact min is no value")
            if (s.maxExact) assert(ordered.exists(ord.equiv(_, s.max.get)), s"$file $where: exact max is no value")
            if (rowValues.exists(LogicalFiles.isNaN)) assert(s.mayHaveNaN, s"$file $where: NaN")
          }
          val stats = sv.statistics(chunk.getStatistics, rows)
          stats match {
            case Left(why) => note(file, s"$what statistics", why)
            case Right(s) =>
              holds(s"$what statistics", s, vs)
              if (s.min.isDefined) accepted += "statistics" -> (accepted("statistics") + 1)
          }
          val ctx = new ChunkContext(lm.path.toString, desc.getPath.mkString("."), rg)
          PageIndexes.read(lm.in, chunk, ctx) match {
            case Left(why) => note(file, s"$what page index", why)
            case Right(raw) =>
              raw.columnIndexProblem.foreach(why => note(file, s"$what column index", why))
              for (oi <- raw.offsetIndex) PageIndexes.locations(oi, chunk, rows) match {
                case Left(why) => note(file, s"$what offset index", why)
                case Right(loc) =>
                  accepted += "offset index" -> (accepted("offset index") + 1)
                  // Every page kept: the headers agree with the index and the rows are the same.
                  val all = Sources.forPages(lm.in, chunk, desc, lm.path.toString, false, loc, (0 until loc.pages).toArray, 0L)
                  val again = LmReading.readAll(ColumnReaderFactory.create(desc, t, all, rows, ColumnReadOptions()), t,
                    rows.toInt, 4096).map(LogicalFiles.toCatalyst(t, _))
                  assert(again.map(LogicalFiles.comparable) == vs.map(LogicalFiles.comparable), s"$file $what: rows via forPages")
                  for (ci <- raw.columnIndex) sv.pages(ci, loc, stats.toOption) match {
                    case Left(why) => note(file, s"$what column index", why)
                    case Right(pages) =>
                      accepted += "column index" -> (accepted("column index") + 1)
                      for (i <- 0 until loc.pages)
                        holds(s"$what page $i", pages.stats(i), vs.slice(loc.firstRow(i).toInt, loc.endRow(i).toInt))
                  }
              }
          }
          BloomFilters.read(lm.in, chunk, ctx) match {
            case None =>
            case Some(Left(why)) => note(file, s"$what bloom filter", why)
            case Some(Right(b)) =>
              accepted += "bloom filter" -> (accepted("bloom filter") + 1)
              for (v <- vs if v != null) assert(!sv.absentByBloom(b, v), s"$file $what: bloom filter denies ${SparkValuesShow(v)}")
              for (s <- stats) assert(!sv.bloomDeniesBounds(b, s), s"$file $what: bloom filter denies the bounds")
          }
          if (chunk.hasDictionaryPage) {
            for (d <- Sources.dictionary(lm.in, chunk, desc, lm.path.toString, verifyChecksums = false); entries <- sv.dictionary(d)) {
              val set = entries.map(LogicalFiles.comparable).toSet
              val present = vs.filter(_ != null).map(LogicalFiles.comparable).toSet
              if (ChunkDictionary.allPagesDictionaryEncoded(chunk))
                assert(present.subsetOf(set), s"$file $what: values missing from the dictionary")
              accepted += "dictionary" -> (accepted("dictionary") + 1)
            }
          }
        }
      }
    }
    synchronized { acceptances += s"$file: ${accepted.toSeq.sorted.map { case (k, n) => s"$k $n" }.mkString(", ")}" }
  }

  override def afterAll(): Unit = {
    println(s"CorpusMetadataSuite: chunks whose metadata was used, per file:\n  ${acceptances.mkString("\n  ")}")
    println(s"CorpusMetadataSuite: ${rejections.size} metadata rejected:\n  ${rejections.mkString("\n  ")}")
    super.afterAll()
  }
}

object CorpusMetadataSuite {

  /** The Spark type Spark infers for each top-level primitive field (fields Spark cannot type are left out). */
  def sparkTypes(schema: MessageType): Map[String, DataType] = {
    val conv = new ParquetToSparkSchemaConverter(new org.apache.spark.sql.internal.SQLConf)
    schema.getFields.asScala.flatMap { f: Type =>
      if (!f.isPrimitive || f.getRepetition == Type.Repetition.REPEATED) None
      else Try(conv.convert(new MessageType("m", f)): StructType).toOption.map(s => f.getName -> s.fields.head.dataType)
    }.toMap
  }
}
