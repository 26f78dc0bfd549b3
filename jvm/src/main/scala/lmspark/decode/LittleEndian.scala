package lmspark.decode

/** Little-endian primitive reads from byte arrays. Callers check bounds first. */
object LittleEndian {
  @inline def int32(b: Array[Byte], p: Int): Int =
    (b(p) & 0xff) | ((b(p + 1) & 0xff) << 8) | ((b(p + 2) & 0xff) << 16) | ((b(p + 3) & 0xff) << 24)

  @inline def int64(b: Array[Byte], p: Int): Long =
    (int32(b, p).toLong & 0xffffffffL) | (int32(b, p + 4).toLong << 32)
}
