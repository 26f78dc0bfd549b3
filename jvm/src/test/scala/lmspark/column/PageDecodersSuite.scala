package lmspark.column

import org.apache.parquet.format.Encoding
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.scalatest.funsuite.AnyFunSuite

import lmspark.decode.DecodeException

/** The encodings the factory accepts per physical type are exactly those [[PageDecoders]] builds
  * decoders for (apart from the dictionary ones, which the reader handles); decoders are made once
  * per encoding and reused. */
class PageDecodersSuite extends AnyFunSuite {

  private val dictionary = Set(Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY)

  test("ColumnReaderFactory.dataEncodings and PageDecoders agree for every physical type and encoding") {
    for (t <- PrimitiveTypeName.values; e <- Encoding.values if !dictionary.contains(e)) {
      val accepted = ColumnReaderFactory.dataEncodings(t).contains(org.apache.parquet.column.Encoding.valueOf(e.name))
      val built = PageDecoders.create(e, t, 7).isDefined
      assert(accepted == built, s"$e for $t: factory accepts = $accepted, PageDecoders builds = $built")
    }
  }

  test("the encodings read per physical type: all the Parquet spec allows (INT96: PLAIN and dictionary)") {
    import org.apache.parquet.column.Encoding._
    val common = Set(PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY)
    val expected = Map(
      PrimitiveTypeName.BOOLEAN -> (common + RLE),
      PrimitiveTypeName.INT32 -> (common + DELTA_BINARY_PACKED + BYTE_STREAM_SPLIT),
      PrimitiveTypeName.INT64 -> (common + DELTA_BINARY_PACKED + BYTE_STREAM_SPLIT),
      PrimitiveTypeName.INT96 -> common,
      PrimitiveTypeName.FLOAT -> (common + BYTE_STREAM_SPLIT),
      PrimitiveTypeName.DOUBLE -> (common + BYTE_STREAM_SPLIT),
      PrimitiveTypeName.BINARY -> (common + DELTA_LENGTH_BYTE_ARRAY + DELTA_BYTE_ARRAY),
      PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY -> (common + DELTA_BYTE_ARRAY + BYTE_STREAM_SPLIT))
    for ((t, e) <- expected) assert(ColumnReaderFactory.dataEncodings(t) == e, t)
  }

  test("one decoder per encoding, reused; an encoding the type does not allow is a DecodeException") {
    val p = new PageDecoders(PrimitiveTypeName.INT64, 0)
    val delta = p.forEncoding(Encoding.DELTA_BINARY_PACKED)
    assert(p.forEncoding(Encoding.PLAIN) ne delta)
    assert(p.forEncoding(Encoding.DELTA_BINARY_PACKED) eq delta)
    val e = intercept[DecodeException](p.forEncoding(Encoding.DELTA_BYTE_ARRAY))
    assert(e.getMessage.contains("DELTA_BYTE_ARRAY") && e.getMessage.contains("INT64"), e.getMessage)
  }
}
