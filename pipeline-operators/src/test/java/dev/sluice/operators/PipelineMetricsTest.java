package dev.sluice.operators;

import static dev.sluice.operators.TestSources.spin;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.spi.StageCounters;
import dev.sluice.core.testing.NoLeaks;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;

/**
 * Per-stage metrics with a {@link SimpleMeterRegistry}: the counts each stage emitted, the waits
 * that name the bottleneck (a busy map makes the pass input-bound at the map, a busy consumer makes
 * it consumer-bound), buffers, workers and decodes, and nothing in the pass without a registry.
 */
@ExtendWith(NoLeaks.class)
class PipelineMetricsTest {

  static <T> Pipeline<T> measured(Pipeline<T> p, MeterRegistry registry, String name) {
    return p.withOptions(p.options().toBuilder().metrics(registry).name(name).build());
  }

  static Map<Integer, StageReport.Row> byStage(StageReport report) {
    return report.rows().stream().collect(Collectors.toMap(StageReport.Row::stage, r -> r));
  }

  @Test
  void eachStageCountsTheElementsItEmitted() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    int n = 10_000;
    int batch = 32;
    Pipeline<Batch> p = measured(Pipeline.from(Datasets.range(n))
        .shuffle(100)
        .map(Function.identity())
        .filter(e -> e.index() % 2 == 0)
        .batch(batch)
        .prefetch(2), registry, "counts");
    AtomicLong batches = new AtomicLong();
    AtomicLong rows = new AtomicLong();
    AtomicLong bytes = new AtomicLong();
    p.flux(PipelineContext.defaults().withSeed(3)).doOnNext(b -> {
      try (b) {
        batches.incrementAndGet();
        rows.addAndGet(b.size());
        bytes.addAndGet(b.byteSize());
      }
    }).blockLast();

    assertEquals(n / 2, rows.get());
    Map<Integer, StageReport.Row> stages = byStage(StageReport.of(registry, "counts"));
    assertEquals(List.of(0, 1, 2, 3, 4, 5, 6), stages.keySet().stream().sorted().toList());
    assertEquals("range read", stages.get(0).operator());
    assertEquals(List.of("shuffle", "map", "filter", "batch", "prefetch", "consumer"),
        List.of(1, 2, 3, 4, 5, 6).stream().map(i -> stages.get(i).operator()).toList());
    assertEquals(n, stages.get(0).elements());
    assertEquals(n, stages.get(1).elements());
    assertEquals(n, stages.get(2).elements());
    assertEquals(n / 2, stages.get(3).elements());
    assertEquals(batches.get(), stages.get(4).elements());
    assertEquals(batches.get(), stages.get(5).elements());
    assertEquals(bytes.get(), stages.get(4).bytes());
    assertEquals(bytes.get(), stages.get(5).bytes());
    // prefetch and shuffle hold buffers of their own capacity
    assertEquals(2.0, stages.get(5).bufferCapacity());
    assertEquals(100.0, stages.get(1).bufferCapacity());
    assertTrue(stages.get(1).bufferMean() > 0, "the shuffle buffer was sampled while full");
    // every stage accounts for the whole pass, once
    for (StageReport.Row r : stages.values()) {
      assertTrue(r.active() > 0, r.toString());
      assertTrue(r.waitUpstream() <= r.active() * 1.01 && r.waitDownstream() <= r.active() * 1.01, r.toString());
    }
  }

  @Test
  void aBusyMapMakesThePassInputBoundAtTheMap() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Pipeline<Batch> p = measured(Pipeline.from(Datasets.range(400))
        .map(e -> {
          spin(200_000);
          return e;
        })
        .batch(8), registry, "slow-map");
    p.flux().doOnNext(Batch::close).blockLast();

    StageReport report = StageReport.of(registry, "slow-map");
    assertTrue(report.bottleneck().startsWith("input-bound: map (stage 1), "), report.bottleneck() + "\n" + report.table());
  }

  @Test
  void aBusyParallelMapIsNamedWithItsWorkers() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Pipeline<Batch> p = measured(Pipeline.from(Datasets.range(2_000))
        .map(e -> {
          spin(50_000);
          return e;
        }, 2)
        .batch(16), registry, "parallel-map");
    p.flux().doOnNext(Batch::close).blockLast();

    StageReport report = StageReport.of(registry, "parallel-map");
    assertTrue(report.bottleneck().startsWith("input-bound: map (stage 1), "), report.bottleneck() + "\n" + report.table());
    StageReport.Row map = byStage(report).get(1);
    assertEquals(2, map.workers());
    assertTrue(map.workerUtilisation() > 0.2, report.table());
  }

  @Test
  void aBusyConsumerMakesThePassConsumerBound() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Pipeline<Batch> p = measured(Pipeline.from(Datasets.range(2_000)).batch(50).prefetch(2), registry, "slow-consumer");
    p.flux().doOnNext(b -> {
      try (b) {
        spin(2_000_000);
      }
    }).blockLast();

    StageReport report = StageReport.of(registry, "slow-consumer");
    assertTrue(report.bottleneck().startsWith("consumer-bound: "), report.bottleneck() + "\n" + report.table());
  }

  @Test
  void aBusyConsumerWithoutPrefetchIsConsumerBoundToo() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Pipeline<Example> p = measured(Pipeline.from(TestSources.streaming(Datasets.range(300))), registry, "plain");
    p.flux().doOnNext(e -> spin(200_000)).blockLast();

    StageReport report = StageReport.of(registry, "plain");
    assertTrue(report.bottleneck().startsWith("consumer-bound: "), report.bottleneck() + "\n" + report.table());
    assertEquals(300, byStage(report).get(0).elements());
  }

  @Test
  void theColumnarPathTimesItsSplitDecodesAndItsWindow() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MemoryBatchSplits source = new MemoryBatchSplits(dev.sluice.core.MemoryManager.shared(), 2, 40, 0, 25, 35);
    Pipeline<Batch> p = measured(Pipeline.from(source).shuffle().shard(2, 1).batch(8, false, 2), registry, "columnar");
    AtomicLong rows = new AtomicLong();
    p.flux().doOnNext(b -> {
      try (b) {
        rows.addAndGet(b.size());
      }
    }).blockLast();

    Map<Integer, StageReport.Row> stages = byStage(StageReport.of(registry, "columnar"));
    StageReport.Row decode = stages.get(3);
    assertEquals("source decode", decode.operator(), stages.toString());
    assertTrue(decode.decodes() > 0, decode.toString());
    assertEquals(2, decode.workers());
    assertTrue(decode.bufferCapacity() > 0, "the window is the stage's buffer");
    assertEquals((long) Math.ceil(rows.get() / 8.0), decode.elements());
  }

  @Test
  void aWindowDecodedAColumnAtATimeTimesEachSplitsDecode() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MemoryBatchSplits source = MemoryBatchSplits.byColumns(40, 0, 25, 35);
    Pipeline<Batch> p = measured(Pipeline.from(source).shuffle(30).batch(8), registry, "by-columns");
    AtomicLong rows = new AtomicLong();
    p.flux().doOnNext(b -> {
      try (b) {
        rows.addAndGet(b.size());
      }
    }).blockLast();

    Map<Integer, StageReport.Row> stages = byStage(StageReport.of(registry, "by-columns"));
    StageReport.Row decode = stages.get(2);
    assertEquals("source decode", decode.operator(), stages.toString());
    assertEquals(3, decode.decodes(), "one decode per split with rows: " + decode);
    assertEquals(100, rows.get());
    assertEquals(13, decode.elements());
  }

  @Test
  void stageCountersReachTheStageMeters() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Dataset<Example> counting = ctx -> Flux.deferContextual(view -> {
      StageCounters counters = StageCounters.of(view);
      return Datasets.range(10).flux(ctx).doOnNext(e -> counters.add("things.seen", 1));
    });
    measured(Pipeline.from(counting).map(Function.identity()), registry, "counters").flux().blockLast();

    StageReport.Row source = byStage(StageReport.of(registry, "counters")).get(0);
    assertEquals(Map.of("things.seen", 10.0), source.counters());
    assertEquals(10, source.elements());
  }

  @Test
  void passAfterPassRegistersEachMeterOnceAndMicrometerWarnsOfNothing() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
          warnings.add(r);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    Logger root = Logger.getLogger("");
    root.addHandler(handler);
    try {
      Pipeline<Batch> p = measured(Pipeline.from(Datasets.range(1_000)).shuffle(50).map(Function.identity(), 2)
          .batch(10).prefetch(2), registry, "epochs");
      for (int epoch = 0; epoch < 3; epoch++) {
        p.flux(PipelineContext.defaults().withEpoch(epoch)).doOnNext(Batch::close).blockLast();
      }
    } finally {
      root.removeHandler(handler);
    }
    assertEquals(List.of(), warnings.stream().map(LogRecord::getMessage).toList());
    assertEquals(2, registry.find(StageMeter.BUFFER_CAPACITY).tag("pipeline", "epochs").gauges().size());
    assertEquals(1, registry.find(StageMeter.WORKERS).tag("pipeline", "epochs").gauges().size());
    assertEquals(3_000, byStage(StageReport.of(registry, "epochs")).get(0).elements());
  }

  @Test
  void aCacheReportsItsCountsToTheStageThatReadsIt(@TempDir Path dir) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    CacheMonitor monitor = new CacheMonitor();
    Pipeline<Batch> p = measured(Pipeline.from(Datasets.synthetic(2_000, 4, 7))
        .cache(CacheSpec.defaults().directory(dir.resolve("cache")).blockRows(500).monitor(monitor))
        .shuffle().batch(50), registry, "cached");
    for (int epoch = 0; epoch < 2; epoch++) {
      p.flux(PipelineContext.defaults().withEpoch(epoch)).doOnNext(Batch::close).blockLast();
    }
    CacheStats total = monitor.total();
    assertEquals(2_000, total.misses(), total.toString());
    assertEquals(2_000, total.hits(), total.toString());
    StageReport.Row source = byStage(StageReport.of(registry, "cached")).get(2);
    assertEquals("cache gather", source.operator());
    assertEquals(Map.of("cache.hits", (double) total.hits(), "cache.misses", (double) total.misses(),
        "cache.blocks.written", (double) total.blocksWritten(), "cache.bytes.written", (double) total.bytesWritten()),
        source.counters());
  }

  /** A source that notes the stage meter its subscription sees. */
  private static Dataset<Example> watching(AtomicReference<Object> seen) {
    return ctx -> Flux.deferContextual(view -> {
      seen.set(view.getOrDefault(StageMeter.KEY, "none"));
      return Datasets.range(5).flux(ctx);
    });
  }

  @Test
  void withoutARegistryThePassHasNoMeasuringOperator() {
    AtomicReference<Object> seen = new AtomicReference<>();
    Pipeline.from(watching(seen)).map(Function.identity()).batch(2).prefetch(2).flux()
        .doOnNext(Batch::close).blockLast();
    assertEquals("none", seen.get());
    assertNull(StageMeter.from(reactor.util.context.Context.empty()));

    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    measured(Pipeline.from(watching(seen)).map(Function.identity()), registry, "watched").flux().blockLast();
    assertNotNull(seen.get());
    assertTrue(seen.get() instanceof StageMeter);
    assertEquals(0, ((StageMeter) seen.get()).position());
  }

  @Test
  void aCancelledMeasuredPassReleasesEverything() throws InterruptedException {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    CountDownLatch ended = new CountDownLatch(1);
    measured(Pipeline.from(Datasets.range(100_000)).shuffle().batch(64).prefetch(8), registry, "cancelled")
        .flux().doFinally(s -> ended.countDown()).take(3).doOnNext(Batch::close).blockLast();
    assertTrue(ended.await(10, TimeUnit.SECONDS));
    TestSources.awaitNoOutstanding();
    StageReport report = StageReport.of(registry, "cancelled");
    assertTrue(byStage(report).get(3).elements() >= 3, report.table());
  }

  @Test
  void theWholePassIsTimedByReactorsMeterListenerWhenItEmitsBatches() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    measured(Pipeline.from(Datasets.range(100)).batch(10), registry, "tapped").flux().doOnNext(Batch::close).blockLast();
    assertNotNull(registry.find(Pipeline.PASS_METRICS + ".flow.duration").tag("pipeline", "tapped").timer());
    assertEquals(10, registry.find(Pipeline.PASS_METRICS + ".onNext.delay").tag("pipeline", "tapped").timer().count());

    measured(Pipeline.from(Datasets.range(100)), registry, "elements").flux().blockLast();
    assertNull(registry.find(Pipeline.PASS_METRICS + ".flow.duration").tag("pipeline", "elements").timer());
  }
}
