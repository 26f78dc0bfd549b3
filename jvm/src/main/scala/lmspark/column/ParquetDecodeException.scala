package lmspark.column

import java.io.IOException

/** Malformed or unexpected Parquet input found while reading. The message names the file path,
  * the column path, the row group ordinal and what is wrong. */
final class ParquetDecodeException(message: String, cause: Throwable) extends IOException(message, cause) {
  def this(message: String) = this(message, null)
}
