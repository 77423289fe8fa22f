package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.CheckpointException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Positioned;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;

/** What resuming reads, where epochs begin and end, and what the states say. */
@ExtendWith(NoLeaks.class)
class ResumeTest {
  static final PipelineContext CTX = PipelineContext.defaults().withSeed(11);

  /** Takes {@code n} elements from {@code it} (closing batches) and returns its state. */
  static PipelineState take(PipelineIterator<?> it, long n) {
    for (long i = 0; i < n; i++) {
      Object x = it.next();
      if (x instanceof Batch b) {
        b.close();
      }
    }
    return it.state();
  }

  @Test
  void theIndexPathReadsNothingTwice() {
    TestSources.Counting source = new TestSources.Counting(Datasets.range(10_000));
    Pipeline<Batch> p = Pipeline.from(source).shuffle().shard(3, 1).batch(64, false, 2).prefetch(4);
    PipelineState state;
    try (PipelineIterator<Batch> it = p.iterate(CTX, 2)) {
      state = take(it, 80); // epoch 1, batch 27
    }
    long before = source.rows.get();
    List<String> rest = new ArrayList<>();
    p.resume(state).doOnNext(b -> rest.add(ResumeRuns.key(0, b))).blockLast();
    // 3334 rows per epoch for this shard: the resumed run reads the rest of epoch 1 only
    assertEquals(3334 - 27 * 64, source.rows.get() - before);
    assertEquals(53 - 27, rest.size());
    assertEquals(1, state.epoch());
    assertEquals(27, state.position());
  }

  @Test
  void aBufferShuffleOverAnAddressableStreamReadsAtMostItsBufferAgain() {
    TestSources.Counting source = new TestSources.Counting(Datasets.range(20_000));
    Pipeline<Example> p = Pipeline.from(source).shuffle(1_000).map(e -> Example.of(e.index(), "v", e.tensor("value")), 3,
        true);
    List<Long> whole = p.flux(CTX).map(Example::index).collectList().block();
    PipelineState state;
    try (PipelineIterator<Example> it = p.iterate(CTX)) {
      state = take(it, 15_000);
    }
    long before = source.rows.get();
    List<Long> rest = p.resume(state).map(Example::index).collectList().block();
    assertEquals(whole.subList(15_000, 20_000), rest);
    long read = source.rows.get() - before;
    assertThat(read).isBetween(5_000L, 5_000L + 1_000L);
  }

  @Test
  void theColumnarPathDecodesFromTheStatesRow() {
    MemoryBatchSplits source = new MemoryBatchSplits(100, 100, 100, 100);
    Pipeline<Batch> p = Pipeline.from(source).batch(10);
    PipelineState state;
    try (PipelineIterator<Batch> it = p.iterate(CTX)) {
      state = take(it, 23);
    }
    source.reads.clear();
    List<String> rest = new ArrayList<>();
    p.resume(state).doOnNext(b -> rest.add(ResumeRuns.key(0, b))).blockLast();
    assertEquals(17, rest.size());
    assertEquals("0:[230, 231, 232, 233, 234, 235, 236, 237, 238, 239]", rest.get(0));
    assertEquals(List.of("s2[30,100)", "s3[0,100)"), source.reads);
  }

  @Test
  void aStateAfterTheLastElementOfAnEpochResumesAtTheNextEpochsFirst() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(10)).shuffle();
    List<Positioned<Example>> all = p.withState(CTX, 3).collectList().block();
    assertEquals(30, all.size());
    PipelineState end0 = all.get(9).state();
    assertEquals(0, end0.epoch());
    assertEquals(10, end0.position());
    List<Long> rest = p.resume(end0).map(Example::index).collectList().block();
    List<Long> expected = all.subList(10, 30).stream().map(x -> x.element().index()).toList();
    assertEquals(expected, rest);
    // and the last one of the run resumes to nothing, the run being over
    assertEquals(List.of(), p.resume(all.get(29).state()).collectList().block());
    assertEquals(3, all.get(29).state().endEpoch());
  }

  @Test
  void aResumedRunResumedAgainAcrossEpochs() {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(100)).shuffle().batch(7);
    List<String> whole = ResumeRuns.whole(p, CTX.withEpoch(4), 3);
    List<String> cut = ResumeRuns.cut(p, CTX.withEpoch(4), 3, new long[] {0, 15, 15, 16, 30, 45});
    assertEquals(whole, cut);
    assertTrue(whole.get(0).startsWith("4:"));
    assertTrue(whole.get(whole.size() - 1).startsWith("6:"));
  }

  @Test
  void iteratorStateBeforeTheFirstElementIsTheStart() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(5)).shuffle().shard(2, 1, EqualLength.UNEVEN);
    try (PipelineIterator<Example> it = p.iterate(CTX.withEpoch(2), 4)) {
      PipelineState s = it.state();
      assertEquals(2, s.epoch());
      assertEquals(0, s.position());
      assertEquals(6, s.endEpoch());
      assertEquals(2, s.shards());
      assertEquals(1, s.shard());
      assertEquals(List.of("shuffle()", "shard(UNEVEN)"), s.stages());
      String schema = ((HasSchema) Datasets.range(5)).schema().toString();
      assertEquals(new PipelineState.Source("random-access", 5, schema, ""), s.source());
      assertEquals(s, p.initialState(CTX.withEpoch(2), 4));
    }
    // resuming from the initial state runs the whole run
    List<Long> whole = p.epochs(CTX.withEpoch(2), 4).map(Example::index).collectList().block();
    PipelineState initial = PipelineState.fromJson(p.initialState(CTX.withEpoch(2), 4).toJson());
    assertEquals(whole, p.resume(initial).map(Example::index).collectList().block());
  }

  @Test
  void prefetchedAndParallelMappedElementsAreNotCounted() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(5_000)).shuffle()
        .map(e -> Example.of(e.index(), "v", e.tensor("value")), 4, true).prefetch(64);
    List<Long> whole = p.flux(CTX).map(Example::index).collectList().block();
    List<Long> seen = new ArrayList<>();
    PipelineState state;
    try (PipelineIterator<Example> it = p.iterate(CTX)) {
      for (int i = 0; i < 100; i++) {
        seen.add(it.next().index());
      }
      state = it.state(); // the prefetch and the map are far ahead by now
    }
    assertEquals(100, state.position());
    seen.addAll(p.resume(state).map(Example::index).collectList().block());
    assertEquals(whole, seen);
  }

  @Test
  void nonDeterministicStagesCannotBeResumed() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(10)).map(e -> e, 2, false);
    assertThatThrownBy(() -> p.withState(CTX)).isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("map(2, deterministic=false)").hasMessageContaining("deterministic = true");
    try (PipelineIterator<Example> it = p.iterate(CTX)) {
      assertEquals(0, it.next().index() * 0);
      assertThatThrownBy(it::state).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("cannot be resumed exactly");
    }
    Pipeline<Example> q = Pipeline.from(Datasets.range(2)).interleave(e -> Datasets.range(3), 2, 1, 2, false);
    assertThatThrownBy(() -> q.withState(CTX)).isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("interleave");
  }

  @Test
  void cancellingAResumedBufferShuffleOfBatchesReleasesEverything() throws InterruptedException {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(3_000)).batch(10).map(b -> b, 2, true).shuffle(50).prefetch(4);
    PipelineState state;
    try (PipelineIterator<Batch> it = p.iterate(CTX)) {
      state = take(it, 120);
    }
    CountDownLatch done = new CountDownLatch(1);
    List<Batch> got = p.resume(state).take(30).doFinally(s -> done.countDown()).collectList().block(Duration.ofSeconds(30));
    got.forEach(Batch::close);
    assertTrue(done.await(10, TimeUnit.SECONDS));
    TestSources.awaitNoOutstanding();
  }

  @Test
  void aFluxConsumerSavesTheStateOfWhatItFinished() {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(1_000)).shuffle().batch(32).prefetch(2);
    List<PipelineState> saved = new ArrayList<>();
    Flux<Positioned<Batch>> run = p.withState(CTX, 2);
    run.doOnNext(x -> {
      try (Batch b = x.element()) {
        if (x.state().position() % 10 == 0) {
          saved.add(x.state());
        }
      }
    }).blockLast();
    assertEquals(6, saved.size()); // positions 10, 20, 30 of each 32-batch epoch
    PipelineState third = saved.get(2);
    assertEquals(0, third.epoch());
    assertEquals(30, third.position());
    assertEquals(2 + 32, p.resume(third).doOnNext(Batch::close).count().block());
  }

  @Test
  void aStateOfAnotherDatasetShapeOrSeedIsRefusedNamingWhatDiffers() {
    Pipeline<Batch> p = Pipeline.from(Datasets.range(1_000)).shuffle().batch(32);
    PipelineState state;
    try (PipelineIterator<Batch> it = p.iterate(CTX)) {
      state = take(it, 3);
    }
    PipelineState saved = PipelineState.fromJson(state.toJson(), "run.json");
    assertThatThrownBy(() -> Pipeline.from(Datasets.range(900)).shuffle().batch(32).resume(saved))
        .isInstanceOf(CheckpointException.class)
        .hasMessage("run.json, field dataset: taken on another dataset: 1000 rows then, 900 rows now");
    assertThatThrownBy(() -> Pipeline.from(Datasets.range(1_000)).shuffle().batch(64).resume(saved))
        .isInstanceOf(CheckpointException.class)
        .hasMessageStartingWith("run.json, field pipeline: taken on another pipeline: stage 2 was batch(32, false) "
            + "and is now batch(64, false)");
    assertThatThrownBy(() -> Pipeline.from(Datasets.range(1_000)).batch(32).resume(saved))
        .isInstanceOf(CheckpointException.class).hasMessageContaining("stage 1 was shuffle() and is now batch(32, false)");
    assertThatThrownBy(() -> p.resume(CTX.withSeed(12), saved)).isInstanceOf(CheckpointException.class)
        .hasMessage("run.json, field seed: taken with seed 11 but this run's seed is 12");
    assertThatThrownBy(() -> Pipeline.from(new MemorySplits(true, 500, 500)).batch(32).resume(saved))
        .isInstanceOf(CheckpointException.class)
        .hasMessageContaining("a random-access source then, a split source now");
    // the parallelism and a prefetch are not part of the shape
    assertEquals(31 - 3 + 1, Pipeline.from(Datasets.range(1_000)).shuffle().batch(32, false, 3).prefetch(2).resume(saved)
        .doOnNext(Batch::close).count().block());
  }
}
