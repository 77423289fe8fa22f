package dev.sluice.core.internal;

/** Closing several resources as one. */
public final class Resources {
  private Resources() {}

  /**
   * Closes every resource (nulls skipped), even when one fails; rethrows the first failure with the
   * others suppressed. A checked exception from {@code close} is wrapped in an
   * {@link IllegalStateException}.
   */
  public static void closeAll(Iterable<? extends AutoCloseable> resources) {
    RuntimeException failure = null;
    for (AutoCloseable r : resources) {
      if (r == null) {
        continue;
      }
      try {
        r.close();
      } catch (Exception e) {
        RuntimeException re = e instanceof RuntimeException x ? x : new IllegalStateException("closing " + r + " failed", e);
        if (failure == null) {
          failure = re;
        } else {
          failure.addSuppressed(re);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Closes {@code resources} after {@code failure}, adding what they throw to it as suppressed. */
  public static void closeAfter(RuntimeException failure, Iterable<? extends AutoCloseable> resources) {
    try {
      closeAll(resources);
    } catch (RuntimeException e) {
      failure.addSuppressed(e);
    }
  }
}
