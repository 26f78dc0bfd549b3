package lmspark.decode;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Little-endian primitive reads from byte arrays, each a single (unaligned) load. Java, so the
 * view handles are {@code static final} and calls to them are exact and compiled to plain loads.
 * Callers check bounds first; an out-of-range read still throws {@code IndexOutOfBoundsException},
 * it never reads outside the array.
 */
public final class LittleEndian {
  private static final VarHandle INTS =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private LittleEndian() {}

  /** The 4 bytes at {@code p} as an int. */
  public static int int32(byte[] b, int p) {
    return (int) INTS.get(b, p);
  }

  /** The 8 bytes at {@code p} as a long. */
  public static long int64(byte[] b, int p) {
    return (long) LONGS.get(b, p);
  }
}
