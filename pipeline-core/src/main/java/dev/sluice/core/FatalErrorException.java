package dev.sluice.core;

/**
 * A JVM error ({@link VirtualMachineError} such as {@link OutOfMemoryError} or
 * {@link StackOverflowError}, {@link LinkageError} such as {@link NoClassDefFoundError}, or
 * {@link ThreadDeath}) thrown by the work of a pipeline, delivered to the pipeline's subscriber as
 * its {@code onError} signal. Reactor rethrows such errors on the thread that caught them instead of
 * signalling them, which would leave the subscriber waiting forever; a pipeline turns them into this
 * exception instead, so that every failure ends the pass. The error is the {@linkplain #getCause()
 * cause}; the message names it and where it was caught.
 */
public final class FatalErrorException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param where the work that failed ("prefetch producer", "a task of the pass"), or null
   * @param error the JVM error
   */
  public FatalErrorException(String where, Throwable error) {
    super((where != null ? where + " failed: " : "") + error, error);
  }
}
