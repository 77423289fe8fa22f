package dev.sluice.core.internal.mapped;

import dev.sluice.core.DatasetFormatException;

/**
 * The boundary of every read from a mapping: a truncated file turns into a data error, never a JVM
 * crash or a hung consumer.
 */
public final class MappedReads {
  /** Sink of touch loads; its value means nothing. */
  @SuppressWarnings("unused")
  private static int touched;

  @SuppressWarnings("FieldMayBeFinal")
  private static volatile int noRows = 0; // not a constant, so no compiler can elide the allocation

  private MappedReads() {}

  /**
   * The exception to throw for a fault while reading a mapping of {@code resource}: a JVM
   * {@link InternalError} is fatal to Reactor, which rethrows it instead of signalling an error and
   * so can leave a consumer waiting forever (by design: reactor/reactor-core#3036), so it never
   * leaves a source.
   */
  public static DatasetFormatException changedWhileMapped(String resource, String position, Throwable e) {
    return new DatasetFormatException(resource, position,
        resource + " changed while mapped (truncated or rewritten after it was opened)", e);
  }

  /** Keeps loads whose only purpose is to fault inside the read boundary from being dropped as dead. */
  public static void consume(int value) {
    touched = value;
  }

  /**
   * Ends every read. A SIGBUS from a truncated mapping is raised by HotSpot asynchronously: the
   * faulting copy completes with garbage and the {@link InternalError} is thrown at the thread's
   * next transition back from the VM, which is usually some later allocation in the caller. Native
   * calls do not deliver it (JDK 17 skips unsafe-access errors on the native transition); a
   * multi-dimensional array allocation with a non-constant length is always a VM call, in the
   * interpreter, C1 and C2, so a pending error surfaces here, inside the read boundary that turns
   * it into a {@code DatasetFormatException}. Cost: one VM call per {@code get} or {@code gather}.
   */
  public static void endRead() {
    if (new Object[noRows][0].length != 0) {
      throw new IllegalStateException("unreachable");
    }
  }
}
