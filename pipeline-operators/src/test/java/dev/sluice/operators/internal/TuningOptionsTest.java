package dev.sluice.operators.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.core.Options.ChunkPlacement;
import dev.sluice.core.Options.PrefetchSpin;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.operators.ParallelMap;
import dev.sluice.operators.Pipeline;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;

/**
 * The tuning settings of {@link Options} reach the operators a pass is compiled to, read once when
 * the pass is built; the old system properties set only their defaults.
 */
@ExtendWith(NoLeaks.class)
@ResourceLock(Resources.SYSTEM_PROPERTIES)
class TuningOptionsTest {
  private static final PipelineContext CTX = PipelineContext.defaults();
  private static final int N = 2_000;

  /** The prefetch operator of a compiled pass with {@code options}. */
  private static FluxPrefetch<?> prefetchOf(Options options) {
    Flux<?> pass = PlanCompiler.compile(Datasets.range(10), List.of(new MapStage((e, c) -> e, 1, null, false),
        new PrefetchStage(2)), options, CTX);
    return Scannable.from(pass).parents().filter(FluxPrefetch.class::isInstance).map(FluxPrefetch.class::cast)
        .findFirst().orElseGet(() -> pass instanceof FluxPrefetch<?> p ? p : null);
  }

  @Test
  void aCompiledPrefetchParksAndSpinsAsTheOptionsSay() {
    FluxPrefetch<?> byDefault = Objects.requireNonNull(prefetchOf(Options.defaults()), "no prefetch in the pass");
    assertEquals(Duration.ofMillis(1).toNanos(), byDefault.parkNanos());
    assertTrue(byDefault.adaptiveSpin());
    FluxPrefetch<?> tuned = prefetchOf(Options.builder().prefetchPark(Duration.ofNanos(123_000))
        .prefetchSpin(PrefetchSpin.fixed(Duration.ofNanos(4_000))).build());
    assertEquals(123_000, tuned.parkNanos());
    assertEquals(4_000, tuned.spinNanos(), "a fixed spin is used as given, however busy the pass");
    assertFalse(tuned.adaptiveSpin());
  }

  @Test
  void theOldPrefetchPropertiesStillSetTheDefaults() {
    System.setProperty(Options.PREFETCH_PARK_PROPERTY, "77");
    System.setProperty(Options.PREFETCH_SPIN_PROPERTY, "0");
    try {
      FluxPrefetch<?> p = prefetchOf(Options.defaults());
      assertEquals(77_000, p.parkNanos());
      assertEquals(0, p.spinNanos());
      assertFalse(p.adaptiveSpin());
    } finally {
      System.clearProperty(Options.PREFETCH_PARK_PROPERTY);
      System.clearProperty(Options.PREFETCH_SPIN_PROPERTY);
    }
  }

  /** The threads that mapped each element of a pipeline with a parallel map and {@code options}. */
  private static List<String> mappedOn(Options options) {
    List<String> threads = Pipeline.from(Datasets.range(N)).withOptions(options)
        .map((Example e) -> Thread.currentThread().getName(), 2).flux(CTX).collectList().block(Duration.ofSeconds(30));
    assertEquals(N, threads.size());
    return threads;
  }

  private static boolean onWorker(String thread) {
    return thread.startsWith("parallel-");
  }

  @Test
  void workersPlacementSendsEveryChunkToTheWorkers() {
    assertTrue(mappedOn(Options.defaults()).stream().anyMatch(t -> !onWorker(t)),
        "by default the first chunks map on the thread that completed them");
    assertTrue(mappedOn(Options.builder().mapChunks(ChunkPlacement.WORKERS).build()).stream()
        .allMatch(TuningOptionsTest::onWorker));
  }

  @Test
  void theOldMapPropertyStillSetsTheDefault() {
    System.setProperty(Options.MAP_INLINE_PROPERTY, "false");
    try {
      assertTrue(mappedOn(Options.defaults()).stream().allMatch(TuningOptionsTest::onWorker));
      List<Long> got = Flux.fromStream(LongStream.range(0, N).boxed())
          .transform(ParallelMap.map((Long i) -> i * 2, 2))
          .collectList().block(Duration.ofSeconds(30));
      assertEquals(LongStream.range(0, N).map(i -> i * 2).boxed().toList(), got, "order and values unchanged");
    } finally {
      System.clearProperty(Options.MAP_INLINE_PROPERTY);
    }
  }

  @Test
  void aPlainParallelMapTakesItsOptions() {
    List<String> threads = Flux.range(0, N).transform(ParallelMap.map((Integer i) -> Thread.currentThread().getName(), 2,
        true, Options.builder().mapChunks(ChunkPlacement.WORKERS).build())).collectList().block(Duration.ofSeconds(30));
    assertEquals(N, threads.size());
    assertTrue(threads.stream().allMatch(TuningOptionsTest::onWorker));
  }
}
