package lmspark

/** Value and level decoders, one per Parquet encoding. They work on a page's byte array and write
  * physical values into Spark `WritableColumnVector`s with bulk calls; they know nothing of files,
  * Spark types beyond the physical layout, or plans. Every decoder can `skip(n)` without
  * materialising what it can avoid. Malformed input raises [[DecodeException]], which the column
  * reader rethrows with file / column / row group context.
  *
  * Files:
  *  - `DecodeException.scala`: the error raised on malformed encoded data.
  *  - `LittleEndian.scala`: little-endian reads from byte arrays.
  *  - `ValuesDecoder.scala`: the base of all value decoders (read / skip API) and [[BinarySink]].
  *  - `LevelDecoder.scala`: the base of level decoders.
  *  - `RleBitPackedDecoder.scala`: the RLE / bit-packed hybrid (levels, dictionary ids, booleans).
  *  - `LegacyBitPackedLevelDecoder.scala`: the deprecated BIT_PACKED level encoding.
  *  - `PlainBooleanDecoder.scala`, `RleBooleanDecoder.scala`: BOOLEAN values.
  *  - `PlainBytesDecoder.scala`: the byte buffer and position the PLAIN value decoders share.
  *  - `PlainFixedWidthDecoder.scala`: PLAIN INT32 / INT64 / FLOAT / DOUBLE.
  *  - `PlainByteArrayDecoder.scala`, `PlainFixedLenByteArrayDecoder.scala`: PLAIN binaries.
  *  - `Dictionary.scala`: a chunk's decoded dictionary, as primitive arrays / offsets + bytes.
  *  - `DictionaryLookupDecoder.scala`: the base of decoders that look ids up in a [[Dictionary]].
  *  - `DictionaryIdsDecoder.scala`: PLAIN_DICTIONARY / RLE_DICTIONARY data pages (ids -> values, or
  *    checked ids into a Spark dictionary ids vector).
  *  - `DictionaryIdsReplay.scala`: ids already read, replayed as values through the dictionary.
  *  - `DeltaBinaryPackedDecoder.scala`: DELTA_BINARY_PACKED INT32 / INT64 (also the lengths and
  *    prefix lengths of the two encodings below); can tell where its stream ends.
  *  - `DeltaLengthByteArrayDecoder.scala`: DELTA_LENGTH_BYTE_ARRAY BYTE_ARRAY.
  *  - `DeltaByteArrayDecoder.scala`: DELTA_BYTE_ARRAY BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY (prefix sharing).
  *  - `ByteStreamSplitDecoder.scala`: BYTE_STREAM_SPLIT FLOAT / DOUBLE / INT32 / INT64 / FIXED_LEN_BYTE_ARRAY.
  */
package object decode
