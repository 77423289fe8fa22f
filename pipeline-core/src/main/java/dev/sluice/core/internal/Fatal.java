package dev.sluice.core.internal;

import dev.sluice.core.FatalErrorException;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Supplier;
import reactor.core.publisher.SynchronousSink;

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

  /**
   * {@code generator} for {@code Flux.generate}, throwing a JVM error as a {@link FatalErrorException}
   * so that the generate cleans its state up and signals it ({@code where}: the work, for the message).
   */
  public static <S, T> BiFunction<S, SynchronousSink<T>, S> generator(String where,
      BiFunction<S, SynchronousSink<T>, S> generator) {
    return (state, sink) -> {
      try {
        return generator.apply(state, sink);
      } catch (VirtualMachineError | LinkageError e) {
        throw new FatalErrorException(where, e);
      }
    };
  }

  /** {@code generator} for the stateless {@code Flux.generate}, as {@link #generator(String, BiFunction)}. */
  public static <T> Consumer<SynchronousSink<T>> generator(String where, Consumer<SynchronousSink<T>> generator) {
    return sink -> {
      try {
        generator.accept(sink);
      } catch (VirtualMachineError | LinkageError e) {
        throw new FatalErrorException(where, e);
      }
    };
  }

  /** {@code handler} for {@code Flux.handle}, as {@link #generator(String, BiFunction)}. */
  public static <T, R> BiConsumer<T, SynchronousSink<R>> handler(String where, BiConsumer<T, SynchronousSink<R>> handler) {
    return (t, sink) -> {
      try {
        handler.accept(t, sink);
      } catch (VirtualMachineError | LinkageError e) {
        throw new FatalErrorException(where, e);
      }
    };
  }

  /** {@code supplier} (a generate's state, a {@code defer}'s publisher), as {@link #generator(String, BiFunction)}. */
  public static <T> Supplier<T> supplier(String where, Supplier<T> supplier) {
    return () -> {
      try {
        return supplier.get();
      } catch (VirtualMachineError | LinkageError e) {
        throw new FatalErrorException(where, e);
      }
    };
  }
}
