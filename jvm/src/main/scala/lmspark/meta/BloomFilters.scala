package lmspark.meta

import java.io.{ByteArrayInputStream, EOFException}

import scala.util.control.NonFatal

import org.apache.parquet.column.values.bloomfilter.{BlockSplitBloomFilter, BloomFilter}
import org.apache.parquet.format.{BloomFilterHeader, Util}
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData
import org.apache.parquet.io.SeekableInputStream

import lmspark.io.ChunkContext

/** Reads a chunk's split-block bloom filter with parquet-java, after checking its header against
  * the chunk: the filter lies outside the chunk's pages and inside the file (and inside
  * `bloom_filter_length` when set); its bitset size is a power of two between parquet-java's
  * bounds ([[BlockSplitBloomFilter.LOWER_BOUND_BYTES]], [[BlockSplitBloomFilter.UPPER_BOUND_BYTES]]);
  * algorithm BLOCK, hash XXHASH, compression UNCOMPRESSED. Nothing here throws for bad metadata. */
object BloomFilters {

  /** The most bytes a usable filter (header and bitset) takes. */
  val MaxBytes: Int = BlockSplitBloomFilter.UPPER_BOUND_BYTES + 1024

  /** None when the chunk has none; Left(reason) when it is present but unusable. */
  def read(in: SeekableInputStream, chunk: ColumnChunkMetaData, ctx: ChunkContext): Option[Either[String, BloomFilter]] =
    readBitset(in, chunk, ctx).map(_.map(filter))

  /** The chunk's checked bitset (what [[read]] wraps): immutable, so it can be shared, unlike the
    * filter over it (parquet-java's filter keeps scratch state while probing). */
  def readBitset(in: SeekableInputStream, chunk: ColumnChunkMetaData, ctx: ChunkContext): Option[Either[String, Array[Byte]]] = {
    val off = chunk.getBloomFilterOffset
    if (off < 0) None else Some(readAt(in, chunk, off, lmspark.shim.SparkLineApis.bloomFilterLength(chunk)))
  }

  /** A filter of its own over a bitset [[readBitset]] checked. */
  def filter(bitset: Array[Byte]): BloomFilter = new BlockSplitBloomFilter(bitset)

  private def readAt(in: SeekableInputStream, chunk: ColumnChunkMetaData, off: Long, length: Int): Either[String, Array[Byte]] = {
    val chunkStart = chunk.getStartingPos
    val chunkEnd = chunkStart + chunk.getTotalSize
    if (off >= chunkStart && off < chunkEnd)
      return Left(s"bloom filter offset $off lies inside the column chunk [$chunkStart, $chunkEnd)")
    if (length == 0 || length > MaxBytes)
      return Left(s"bloom filter length $length is invalid")
    try {
      val (header, headerBytes, rest) =
        if (length > 0) {
          if (off < chunkEnd && off + length > chunkStart)
            return Left(s"bloom filter [$off, ${off + length}) overlaps the column chunk [$chunkStart, $chunkEnd)")
          val all = new Array[Byte](length)
          in.seek(off)
          in.readFully(all)
          val stream = new ByteArrayInputStream(all)
          val h = Util.readBloomFilterHeader(stream)
          val used = length - stream.available()
          (h, used, Some(java.util.Arrays.copyOfRange(all, used, length)))
        } else {
          in.seek(off)
          val h = Util.readBloomFilterHeader(in)
          (h, (in.getPos - off).toInt, None)
        }
      check(header) match {
        case Some(why) => Left(why)
        case None =>
          val numBytes = header.getNumBytes
          val bitset = rest match {
            case Some(r) =>
              if (r.length < numBytes)
                return Left(s"bloom filter bitset of $numBytes bytes does not fit its length $length " +
                  s"(header $headerBytes bytes)")
              if (r.length == numBytes) r else java.util.Arrays.copyOf(r, numBytes)
            case None =>
              if (off < chunkEnd && off + headerBytes + numBytes > chunkStart)
                return Left(s"bloom filter [$off, ${off + headerBytes + numBytes}) overlaps the column chunk " +
                  s"[$chunkStart, $chunkEnd)")
              val b = new Array[Byte](numBytes)
              in.readFully(b)
              b
          }
          Right(bitset)
      }
    } catch {
      case _: EOFException => Left(s"bloom filter at $off reaches past the end of the file")
      case NonFatal(e) => Left(s"unreadable bloom filter at $off: $e")
    }
  }

  /** Why a header is unusable, if it is. */
  private def check(h: BloomFilterHeader): Option[String] = {
    val n = h.getNumBytes
    if (n < BlockSplitBloomFilter.LOWER_BOUND_BYTES || n > BlockSplitBloomFilter.UPPER_BOUND_BYTES || Integer.bitCount(n) != 1)
      Some(s"bloom filter bitset size $n is not a power of two in [${BlockSplitBloomFilter.LOWER_BOUND_BYTES}, " +
        s"${BlockSplitBloomFilter.UPPER_BOUND_BYTES}]")
    else if (h.getAlgorithm == null || !h.getAlgorithm.isSetBLOCK) Some(s"bloom filter algorithm ${h.getAlgorithm} is not BLOCK")
    else if (h.getHash == null || !h.getHash.isSetXXHASH) Some(s"bloom filter hash ${h.getHash} is not XXHASH")
    else if (h.getCompression == null || !h.getCompression.isSetUNCOMPRESSED)
      Some(s"bloom filter compression ${h.getCompression} is not UNCOMPRESSED")
    else None
  }
}
