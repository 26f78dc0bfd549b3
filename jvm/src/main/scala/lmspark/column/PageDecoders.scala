package lmspark.column

import org.apache.parquet.format.Encoding
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName

import lmspark.decode._

/** The value decoders of one column chunk for data pages that are not dictionary encoded (those
  * need the chunk's dictionary and stay with the reader): one decoder per encoding, created on the
  * first page of that encoding and re-`init`ed for every later one, so a chunk that switches
  * encodings (dictionary falling back to PLAIN / DELTA / BYTE_STREAM_SPLIT) allocates each once.
  *
  * Which encodings a physical type allows is [[ColumnReaderFactory.dataEncodings]]; this class
  * builds a decoder for exactly those (minus the dictionary ones) and raises [[DecodeException]]
  * for any other, so a page the chunk metadata did not announce fails with context. */
final class PageDecoders(physical: PrimitiveTypeName, typeLength: Int) {
  private[this] val decoders = new java.util.EnumMap[Encoding, ValuesDecoder](classOf[Encoding])

  /** The decoder for a data page of `encoding` (not yet `init`ed for it). */
  def forEncoding(encoding: Encoding): ValuesDecoder = {
    var d = decoders.get(encoding)
    if (d == null) {
      d = PageDecoders.create(encoding, physical, typeLength).getOrElse(
        throw new DecodeException(s"data page encoding $encoding is not supported for $physical values " +
          "(the chunk metadata did not announce it)"))
      decoders.put(encoding, d)
    }
    d
  }
}

object PageDecoders {

  /** A new decoder for non-dictionary `encoding` of `physical` values, or None when the pairing is
    * not allowed (or not implemented). */
  def create(encoding: Encoding, physical: PrimitiveTypeName, typeLength: Int): Option[ValuesDecoder] = {
    import PrimitiveTypeName._
    (encoding, physical) match {
      case (Encoding.PLAIN, BOOLEAN) => Some(new PlainBooleanDecoder)
      case (Encoding.PLAIN, INT32 | FLOAT) => Some(new PlainFixedWidthDecoder(4))
      case (Encoding.PLAIN, INT64 | DOUBLE) => Some(new PlainFixedWidthDecoder(8))
      case (Encoding.PLAIN, BINARY) => Some(new PlainByteArrayDecoder)
      case (Encoding.PLAIN, FIXED_LEN_BYTE_ARRAY) => Some(new PlainFixedLenByteArrayDecoder(typeLength))
      case (Encoding.PLAIN, INT96) => Some(new PlainFixedLenByteArrayDecoder(12))
      case (Encoding.RLE, BOOLEAN) => Some(new RleBooleanDecoder)
      case (Encoding.DELTA_BINARY_PACKED, INT32) => Some(new DeltaBinaryPackedDecoder(32))
      case (Encoding.DELTA_BINARY_PACKED, INT64) => Some(new DeltaBinaryPackedDecoder(64))
      case (Encoding.DELTA_LENGTH_BYTE_ARRAY, BINARY) => Some(new DeltaLengthByteArrayDecoder)
      case (Encoding.DELTA_BYTE_ARRAY, BINARY) => Some(new DeltaByteArrayDecoder(-1))
      case (Encoding.DELTA_BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY) => Some(new DeltaByteArrayDecoder(typeLength))
      case (Encoding.BYTE_STREAM_SPLIT, INT32 | FLOAT) => Some(new ByteStreamSplitDecoder(4))
      case (Encoding.BYTE_STREAM_SPLIT, INT64 | DOUBLE) => Some(new ByteStreamSplitDecoder(8))
      case (Encoding.BYTE_STREAM_SPLIT, FIXED_LEN_BYTE_ARRAY) if typeLength > 0 =>
        Some(new ByteStreamSplitDecoder(typeLength))
      case _ => None
    }
  }
}
