package dev.sluice.io.npy.internal;

import dev.sluice.core.DatasetFormatException;

/** Turns the {@link InternalError} a SIGBUS raises on a truncated mapping into a data error. */
final class Guard {
  private Guard() {}

  /**
   * The exception to throw for a fault while reading a mapping of {@code resource}: a JVM
   * {@link InternalError} is fatal to Reactor, which rethrows it instead of signalling an error and
   * so can leave a consumer waiting forever (by design: reactor/reactor-core#3036), so it never
   * leaves a source.
   */
  static DatasetFormatException changedWhileMapped(String resource, String position, Throwable e) {
    return new DatasetFormatException(resource, position,
        resource + " changed while mapped (truncated or rewritten after it was opened)", e);
  }
}
