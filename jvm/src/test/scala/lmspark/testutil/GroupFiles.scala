package lmspark.testutil

import java.nio.file.{Files, Path}

import scala.util.Random

import org.apache.parquet.column.ParquetProperties.WriterVersion
import org.apache.parquet.example.data.Group
import org.apache.parquet.example.data.simple.SimpleGroupFactory
import org.apache.parquet.hadoop.example.ExampleParquetWriter
import org.apache.parquet.hadoop.metadata.CompressionCodecName
import org.apache.parquet.io.api.Binary
import org.apache.parquet.schema.{GroupType, MessageType, Type}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

/** Files of any Parquet schema (legacy layouts included) written by parquet-java's example writer,
  * with seeded random records: nulls, empty lists and lists long enough to span pages. */
object GroupFiles {

  /** How the file is written: page version, dictionary, rows per page. */
  final case class Layout(v2: Boolean, dictionary: Boolean, pageRows: Int) {
    override def toString: String = s"${if (v2) "v2" else "v1"}/${if (dictionary) "dict" else "plain"}/pageRows $pageRows"
  }

  val layouts: Seq[Layout] = for (v2 <- Seq(false, true); d <- Seq(false, true); p <- Seq(7, 100)) yield Layout(v2, d, p)

  /** A random value for each field of `g` as its repetition allows: nulls, empty and long lists. */
  def fill(g: Group, t: GroupType, r: Random): Unit =
    for (i <- 0 until t.getFieldCount) {
      val f = t.getType(i)
      val count = f.getRepetition match {
        case Type.Repetition.REQUIRED => 1
        case Type.Repetition.OPTIONAL => if (r.nextInt(5) == 0) 0 else 1
        case Type.Repetition.REPEATED =>
          r.nextInt(10) match { case 0 | 1 | 2 => 0; case 9 => 10 + r.nextInt(60); case _ => 1 + r.nextInt(4) }
      }
      for (_ <- 0 until count) {
        if (f.isPrimitive) f.asPrimitiveType.getPrimitiveTypeName match {
          case PrimitiveTypeName.INT32 => g.add(i, r.nextInt(20) - 5)
          case PrimitiveTypeName.INT64 => g.add(i, r.nextLong() % 1000)
          case PrimitiveTypeName.DOUBLE => g.add(i, (r.nextInt(50) / 4.0))
          case PrimitiveTypeName.BOOLEAN => g.add(i, r.nextBoolean())
          case _ => g.add(i, Binary.fromString("v" + r.nextInt(30) * (1 + r.nextInt(3))))
        }
        else fill(g.addGroup(i), f.asGroupType, r)
      }
    }

  /** `rows` random records of `schema` written in `layout` to `path` (a new temporary file when null). */
  def write(schema: MessageType, layout: Layout, rows: Int, r: Random, path: Path = null): Path = {
    val out = if (path != null) path else {
      val p = Files.createTempFile("nested", ".parquet")
      Files.delete(p)
      p.toFile.deleteOnExit()
      p
    }
    val w = ExampleParquetWriter.builder(new LocalOutputFile(out)).withType(schema)
      .withWriterVersion(if (layout.v2) WriterVersion.PARQUET_2_0 else WriterVersion.PARQUET_1_0)
      .withDictionaryEncoding(layout.dictionary).withPageRowCountLimit(layout.pageRows).withPageSize(4096)
      .withRowGroupSize(64L << 10).withCompressionCodec(CompressionCodecName.SNAPPY).build()
    val factory = new SimpleGroupFactory(schema)
    try for (_ <- 0 until rows) { val g = factory.newGroup(); fill(g, schema, r); w.write(g) }
    finally w.close()
    out
  }
}
