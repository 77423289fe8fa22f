package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetException;
import dev.sluice.core.FatalErrorException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;

/**
 * {@code ignoreErrors()} on the element path: Reactor's {@code onErrorContinue}, so that the
 * operators before it that support it (map, filter, flatMap and the other user-function stages,
 * the parallel map) drop an element whose function throws and go on. Data errors of a source
 * ({@link DatasetException}: a bad file, an I/O error, a closed dataset) and fatal errors are never
 * skipped: they end the pass as without it. Each skipped element is counted (a meter when the
 * pipeline has a registry) and logged: the first one of a pass, then one in {@link #LOG_EVERY}.
 */
public final class IgnoreErrorsOperator {
  /** A pass logs its first skipped element, then one in this many. */
  public static final long LOG_EVERY = 1000;

  /** The counter of skipped elements, tagged {@code pipeline}. */
  public static final String METER = "sluice.pipeline.ignored.errors";

  private static final Logger LOG = LoggerFactory.getLogger("dev.sluice.operators.ignoreErrors");

  private IgnoreErrorsOperator() {}

  /**
   * The transformer.
   *
   * @param registry where the skipped elements are counted, or null
   * @param pipeline the {@code pipeline} tag of the meter
   * @return the transformer
   */
  public static <T> Function<Flux<T>, Flux<T>> of(MeterRegistry registry, String pipeline) {
    Counter counter = registry == null ? null : Counter.builder(METER).tag("pipeline", pipeline)
        .description("elements dropped by ignoreErrors because a function threw").register(registry);
    return flux -> Flux.defer(() -> {
      AtomicLong skipped = new AtomicLong();
      return flux.onErrorContinue(IgnoreErrorsOperator::skippable, (error, element) -> {
        long n = skipped.incrementAndGet();
        if (counter != null) {
          counter.increment();
        }
        if (n == 1 || n % LOG_EVERY == 0) {
          LOG.warn("ignoreErrors: skipped {} element(s) in this pass so far; the latest because of: {}", n,
              error.toString());
        }
        if (element instanceof Batch b) {
          b.close();
        }
      });
    });
  }

  /** Whether {@code error} of an element may be skipped: not a source's data error, nor a fatal one. */
  static boolean skippable(Throwable error) {
    return !(error instanceof DatasetException) && !(error instanceof FatalErrorException) && !(error instanceof Error);
  }
}
