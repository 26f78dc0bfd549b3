package lmspark.io

import lmspark.column.ParquetDecodeException

/** Identifies one column chunk (file, leaf column path, row group ordinal) so that every error
  * raised while reading it names where it happened. Immutable. */
final class ChunkContext(val filePath: String, val columnPath: String, val rowGroup: Int) {

  /** `file ..., column ..., row group ...` */
  def describe: String = s"file $filePath, column $columnPath, row group $rowGroup"

  /** An exception whose message is `what` followed by this chunk's description. */
  def error(what: String, cause: Throwable = null): ParquetDecodeException =
    new ParquetDecodeException(s"$what ($describe)", cause)

  override def toString: String = describe
}
