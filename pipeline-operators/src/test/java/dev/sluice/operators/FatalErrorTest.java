package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.FatalErrorException;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Split;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * A JVM error (which Reactor rethrows on the thread that caught it instead of signalling it) thrown
 * by the work of any kind of worker ends the pipeline with {@code onError}, in time, and the pass
 * gives back every pooled byte: never a subscriber waiting forever.
 */
@ExtendWith(NoLeaks.class)
class FatalErrorTest {
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(11);
  private static final long BAD = 37;

  /** The JVM errors Reactor does not signal. */
  static final List<Supplier<Error>> ERRORS = List.of(
      () -> new OutOfMemoryError("injected: Java heap space"),
      () -> new NoClassDefFoundError("org/apache/hadoop/fs/Path"),
      () -> new StackOverflowError("injected"));

  /** A worker kind: the pipeline whose work throws {@code error} at row {@link #BAD}. */
  record Kind(String name, Function<Supplier<Error>, Dataset<?>> pipeline) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> kinds() {
    List<Kind> kinds = List.of(
        new Kind("gather on the subscriber's thread", e -> Pipeline.from(failing(e)).batch(8)),
        new Kind("parallel gather", e -> Pipeline.from(failing(e)).shuffle().batch(8, false, 3)),
        new Kind("prefetch producer", e -> Pipeline.from(failing(e)).batch(8).prefetch(2)),
        new Kind("map on the subscriber's thread", e -> Pipeline.from(Datasets.range(100)).map(throwingAt(e))),
        new Kind("parallel map", e -> Pipeline.from(Datasets.range(100)).map(throwingAt(e), 4)),
        new Kind("parallel decode", e -> Pipeline.from(new FailingSplits(e, false)).batch(8, false, 3)),
        new Kind("window shuffle", e -> Pipeline.from(new FailingSplits(e, false)).shuffle(20).batch(8)),
        new Kind("window shuffle by columns", e -> Pipeline.from(new FailingSplits(e, true)).shuffle(20).batch(8)),
        new Kind("interleave reader", e -> Pipeline.from(Datasets.range(3))
            .interleave(x -> x.index() == 1 ? failing(e) : Datasets.range(100), 2, 4, 2, true)),
        new Kind("interleave function", e -> Pipeline.from(Datasets.range(3))
            .interleave(x -> {
              if (x.index() == 1) {
                throw e.get();
              }
              return Datasets.range(10);
            }, 2, 4, 2, true)));
    List<Arguments> out = new ArrayList<>();
    for (int k = 0; k < kinds.size(); k++) {
      for (int e = 0; e < ERRORS.size(); e++) {
        out.add(Arguments.of(kinds.get(k), e));
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0}, error {1}")
  @MethodSource("kinds")
  void aJvmErrorOfAnyWorkerEndsThePipelineWithOnError(Kind kind, int errorIndex) {
    Error[] thrown = new Error[1];
    Supplier<Error> error = () -> thrown[0] = ERRORS.get(errorIndex).get();
    Flux<?> flux = kind.pipeline().apply(error).flux(CTX);
    StepVerifier.create(flux)
        .thenConsumeWhile(x -> {
          if (x instanceof Batch b) {
            b.close();
          }
          return true;
        })
        .expectErrorSatisfies(e -> {
          assertThat(e).isInstanceOf(FatalErrorException.class);
          assertThat(e.getCause()).isSameAs(thrown[0]);
        })
        .verify(Duration.ofSeconds(60));
    TestSources.awaitNoOutstanding();
  }

  private static RandomAccessDataset<Example> failing(Supplier<Error> error) {
    return new TestSources.Wrapper(Datasets.range(100)) {
      @Override
      void check(long index) {
        if (index == BAD) {
          throw error.get();
        }
      }
    };
  }

  private static Function<Example, Example> throwingAt(Supplier<Error> error) {
    return e -> {
      if (e.index() == BAD) {
        throw error.get();
      }
      return e;
    };
  }

  /** Splits whose decode throws the error in the split holding row {@link #BAD}. */
  private static final class FailingSplits extends MemoryBatchSplits {
    private final Supplier<Error> error;

    FailingSplits(Supplier<Error> error, boolean byColumns) {
      super(30, 30, 40);
      this.error = error;
      this.columns = byColumns;
    }

    @Override
    public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
      return super.readBatches(split, fromRow, toRow, firstBatchSize, batchSize).map(b -> {
        if ("s1".equals(split.id())) {
          b.close();
          throw error.get();
        }
        return b;
      });
    }

    @Override
    public dev.sluice.core.spi.ColumnCursor openColumns(Split split, long fromRow, long toRow) {
      if ("s1".equals(split.id())) {
        throw error.get();
      }
      return super.openColumns(split, fromRow, toRow);
    }
  }
}
