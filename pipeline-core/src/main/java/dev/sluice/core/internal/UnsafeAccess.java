package dev.sluice.core.internal;

import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;

/**
 * {@code sun.misc.Unsafe} for the internal packages: for reading direct buffers by address (the
 * mapped rows' touch pass) and for unmapping a mapping at once ({@link #unmap}). The public model's
 * gather kernels, which may not reach into internal packages, obtain it the same way themselves.
 * Address access is offered only where the JVM allows Unsafe's memory access without a warning: as
 * the JVM was told (the launcher turns {@code --sun-misc-unsafe-memory-access=<mode>} into the
 * property {@code sun.misc.unsafe.memory.access}), or else by the JDK's default, which allows it up
 * to JDK 23 and warns from JDK 24. Elsewhere {@link #UNSAFE} is null and callers use their
 * view-handle paths. Unmapping is not a memory access and is offered wherever Unsafe exists.
 */
public final class UnsafeAccess {
  private UnsafeAccess() {}

  /** The instance, or null when address access is not allowed silently or could not be set up. */
  public static final sun.misc.Unsafe UNSAFE;

  /** The offset of {@code Buffer.address} (a direct buffer's base address); -1 without {@link #UNSAFE}. */
  public static final long BUFFER_ADDRESS;

  /** The instance whatever the memory-access mode, for {@link #unmap}; null when the JVM has none. */
  private static final sun.misc.Unsafe ANY;

  static {
    sun.misc.Unsafe any = null;
    try {
      Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      any = (sun.misc.Unsafe) f.get(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      any = null; // not available in this JVM: no address access and no unmapping
    }
    sun.misc.Unsafe u = null;
    long address = -1;
    if (any != null && allowed()) {
      try {
        address = any.objectFieldOffset(Buffer.class.getDeclaredField("address"));
        u = any;
      } catch (ReflectiveOperationException | RuntimeException e) {
        address = -1; // no address field: callers take their view-handle paths
      }
    }
    ANY = any;
    UNSAFE = u;
    BUFFER_ADDRESS = address;
  }

  /** Whether {@link #unmap} can release a mapping before the GC does. */
  public static boolean canUnmap() {
    return ANY != null;
  }

  /**
   * Unmaps {@code mapped} at once, so its pages leave the process's resident set. The buffer and
   * every view of it must not be used afterwards (a read would crash the JVM).
   *
   * @throws IllegalStateException when {@link #canUnmap()} is false
   * @throws IllegalArgumentException when {@code mapped} is not a direct buffer of its own (a slice or duplicate)
   */
  public static void unmap(ByteBuffer mapped) {
    if (ANY == null) {
      throw new IllegalStateException("sun.misc.Unsafe is not available: a mapping is released by the GC");
    }
    ANY.invokeCleaner(mapped);
  }

  private static boolean allowed() {
    String mode = System.getProperty("sun.misc.unsafe.memory.access");
    return mode != null ? mode.equals("allow") : Runtime.version().feature() < 24;
  }
}
