package lmspark.testutil

import org.apache.parquet.schema.{MessageType, Types}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName._
import org.scalatest.Assertions

/** parquet-java files of `id long, x int, h binary` whose `h` may be annotated FLOAT16, which lmspark
  * hands to Spark's reader (a way to put such a file in any scan). Cancels the test on a line whose
  * parquet-java has no FLOAT16. */
object HalfFloatFiles extends Assertions {
  val schema = "id long, x int, h binary"

  /** `dir/name.parquet` with rows `from until until`: `id` = i, `x` = `xOf(i)`, `h` null every 5th row. */
  def write(dir: String, name: String, from: Long, until: Long, float16: Boolean,
      xOf: Long => Int = i => (i * 3).toInt): Unit = {
    val h = Types.optional(FIXED_LEN_BYTE_ARRAY).length(2)
    val fileSchema = new MessageType("t", Types.required(INT64).named("id"), Types.required(INT32).named("x"),
      (if (float16) h.as(TestLineApis.float16.getOrElse(cancel("this line's parquet-java has no FLOAT16"))) else h).named("h"))
    new java.io.File(dir).mkdirs()
    val w = org.apache.parquet.hadoop.example.ExampleParquetWriter
      .builder(new org.apache.hadoop.fs.Path(s"$dir/$name.parquet")).withType(fileSchema).build()
    val f = new org.apache.parquet.example.data.simple.SimpleGroupFactory(fileSchema)
    try for (i <- from until until) {
      val g = f.newGroup().append("id", i).append("x", xOf(i))
      if (i % 5 != 0) g.append("h", org.apache.parquet.io.api.Binary.fromConstantByteArray(Array(i.toByte, 60)))
      w.write(g)
    } finally w.close()
  }
}
