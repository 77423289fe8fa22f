package dev.sluice.core.internal;

import dev.sluice.core.FatalErrorException;

/**
 * Turns the throwables Reactor will not signal into ones it will. Reactor's operators rethrow a
 * {@link VirtualMachineError}, {@link LinkageError} or {@link ThreadDeath} on the thread that caught
 * it ({@code Exceptions.throwIfJvmFatal}) instead of handing it to the subscriber; wrapped in a
 * {@link FatalErrorException} it travels as an ordinary {@code onError} signal.
 */
public final class Fatal {
  private Fatal() {}

  /** True for the throwables Reactor rethrows instead of signalling them. */
  public static boolean isJvmFatal(Throwable t) {
    return t instanceof VirtualMachineError || t instanceof LinkageError || t instanceof ThreadDeath;
  }

  /**
   * {@code t} itself when Reactor signals it, else {@code t} wrapped in a {@link FatalErrorException}
   * naming {@code where} (the work that failed, or null).
   */
  public static Throwable signalable(Throwable t, String where) {
    return isJvmFatal(t) ? new FatalErrorException(where, t) : t;
  }
}
