package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.CheckpointException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.core.testing.NoLeaks;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A resume with another number of ranks: every rank of the old world saved its state at the same
 * step; the new ranks re-partition the rest of the epoch's permutation.
 */
@ExtendWith(NoLeaks.class)
class ElasticResumeTest {
  static final long N = 1_001;
  static final int BATCH = 8;

  static Pipeline<Batch> pipeline(int world, int rank, EqualLength policy) {
    return Pipeline.from(Datasets.range(N)).shuffle().shard(world, rank, policy).batch(BATCH, false, 2).prefetch(2);
  }

  static PipelineContext ctx(int world, int rank) {
    return PipelineContext.defaults().withSeed(5).withEpoch(3).withRank(rank, world);
  }

  /** One rank's run: {@code steps} batches (all with -1) from {@code state} or from the start; their indices and the state. */
  record Part(List<Long> indices, List<Long> nextEpoch, PipelineState state) {}

  static Part run(int world, int rank, EqualLength policy, PipelineState from, long steps) {
    Pipeline<Batch> p = pipeline(world, rank, policy);
    List<Long> seen = new ArrayList<>();
    List<Long> next = new ArrayList<>();
    try (PipelineIterator<Batch> it = from == null ? p.iterate(ctx(world, rank), 2) : p.iterate(ctx(world, rank), from)) {
      for (long i = 0; (steps < 0 || i < steps) && it.hasNext(); i++) {
        try (Batch b = it.next()) {
          for (int r = 0; r < b.size(); r++) {
            (it.state().epoch() == 3 ? seen : next).add(b.index(r));
          }
        }
      }
      return new Part(seen, next, PipelineState.fromJson(it.state().toJson()));
    }
  }

  /** Counts per index. */
  static Map<Long, Long> counts(List<Long> all) {
    return all.stream().collect(Collectors.groupingBy(x -> x, HashMap::new, Collectors.counting()));
  }

  @ParameterizedTest
  @CsvSource({"4, 3, 10", "4, 6, 10", "4, 3, 0", "4, 6, 31", "4, 6, 32", "3, 4, 7"})
  void unevenCoversEveryRemainingElementExactlyOnce(int from, int to, int steps) {
    List<Long> consumed = new ArrayList<>();
    List<PipelineState> states = new ArrayList<>();
    for (int r = 0; r < from; r++) {
      Part part = run(from, r, EqualLength.UNEVEN, null, steps);
      consumed.addAll(part.indices());
      states.add(part.state());
    }
    PipelineState common = PipelineState.common(states);
    List<Long> rest = new ArrayList<>();
    for (int r = 0; r < to; r++) {
      rest.addAll(run(to, r, EqualLength.UNEVEN, common, -1).indices());
    }
    assertThat(consumed).doesNotHaveDuplicates();
    assertThat(rest).doesNotHaveDuplicates();
    assertThat(Collections.disjoint(rest, consumed)).isTrue();
    List<Long> all = new ArrayList<>(consumed);
    all.addAll(rest);
    assertThat(all).containsExactlyInAnyOrderElementsOf(LongStream.range(0, N).boxed().toList());
  }

  @Test
  void padAndDropPartitionTheRestWithTheirCounts() {
    int steps = 9;
    for (EqualLength policy : new EqualLength[] {EqualLength.PAD, EqualLength.DROP}) {
      List<Long> consumed = new ArrayList<>();
      List<PipelineState> states = new ArrayList<>();
      for (int r = 0; r < 4; r++) {
        Part part = run(4, r, policy, null, steps);
        consumed.addAll(part.indices());
        states.add(part.state());
      }
      long rest = N - 4L * steps * BATCH; // 713 elements of the permutation left
      List<List<Long>> ranks = new ArrayList<>();
      for (int r = 0; r < 3; r++) {
        ranks.add(run(3, r, policy, PipelineState.common(states), -1).indices());
      }
      List<Long> resumed = ranks.stream().flatMap(List::stream).toList();
      assertThat(Collections.disjoint(resumed, consumed)).isTrue();
      for (List<Long> rank : ranks) {
        assertEquals(policy.count(rest, 3, 0), rank.size(), policy.name());
      }
      if (policy == EqualLength.PAD) {
        // every remaining element, and (3 - 713 mod 3) of them twice
        assertThat(counts(resumed).keySet()).hasSize((int) rest);
        assertEquals(3 * 238 - rest, counts(resumed).values().stream().filter(c -> c == 2).count());
      } else {
        assertThat(resumed).doesNotHaveDuplicates().hasSize(3 * 237);
      }
    }
  }

  @Test
  void aResizedRunResizedAgainAndTheNextEpochIsPartitionedAsUsual() {
    List<Long> consumed = new ArrayList<>();
    List<PipelineState> four = new ArrayList<>();
    for (int r = 0; r < 4; r++) {
      Part part = run(4, r, EqualLength.UNEVEN, null, 6);
      consumed.addAll(part.indices());
      four.add(part.state());
    }
    List<PipelineState> three = new ArrayList<>();
    for (int r = 0; r < 3; r++) {
      Part part = run(3, r, EqualLength.UNEVEN, PipelineState.common(four), 11);
      consumed.addAll(part.indices());
      three.add(part.state());
      assertEquals(3, part.state().epoch());
      assertEquals(11, part.state().position());
      assertEquals(4L * 6 * BATCH, part.state().offset());
    }
    for (int r = 0; r < 6; r++) {
      Part part = run(6, r, EqualLength.UNEVEN, PipelineState.common(three), -1);
      consumed.addAll(part.indices());
      // epoch 4, the run's last, is rank r's usual part for 6 ranks
      List<Long> next = pipeline(6, r, EqualLength.UNEVEN).flux(ctx(6, r).withEpoch(4))
          .concatMapIterable(b -> {
            try (b) {
              List<Long> out = new ArrayList<>();
              for (int i = 0; i < b.size(); i++) {
                out.add(b.index(i));
              }
              return out;
            }
          }).collectList().block();
      assertEquals(5, part.state().epoch()); // the run of epochs 3 and 4 ended
      assertTrue(part.state().isFinished());
      assertEquals(0, part.state().offset());
      assertEquals(next, part.nextEpoch());
    }
    assertThat(consumed).containsExactlyInAnyOrderElementsOf(LongStream.range(0, N).boxed().toList());
  }

  static Pipeline<Example> mapped(int world, int rank) {
    return Pipeline.from(Datasets.range(100)).shuffle().shard(world, rank, EqualLength.UNEVEN).map(e -> e, 2, true);
  }

  @Test
  void elementsMappedAfterTheShardAreCountedThroughTheMap() {
    List<Long> consumed = new ArrayList<>();
    List<PipelineState> states = new ArrayList<>();
    for (int r = 0; r < 2; r++) {
      try (PipelineIterator<Example> it = mapped(2, r).iterate(PipelineContext.defaults())) {
        for (int i = 0; i < 20; i++) {
          consumed.add(it.next().index());
        }
        states.add(it.state());
      }
    }
    PipelineState common = PipelineState.common(states);
    for (int r = 0; r < 3; r++) {
      mapped(3, r).resume(PipelineContext.defaults().withRank(r, 3), common).map(Example::index)
          .doOnNext(consumed::add).blockLast();
    }
    assertThat(consumed).containsExactlyInAnyOrderElementsOf(LongStream.range(0, 100).boxed().toList());
  }

  @Test
  void theSameWorldNeedsTheSameRankAndOtherPathsNeedTheSameWorld() {
    PipelineState rank1 = run(4, 1, EqualLength.PAD, null, 3).state();
    assertThatThrownBy(() -> pipeline(4, 2, EqualLength.PAD).resume(rank1)).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("taken on shard 1 of 4 but this pipeline is shard 2");

    Pipeline<Example> split = Pipeline.from(new MemorySplits(true, 40, 40)).shuffle().shard(2, 0);
    PipelineState s;
    try (PipelineIterator<Example> it = split.iterate(PipelineContext.defaults())) {
      it.next();
      s = it.state();
    }
    PipelineState st = s;
    assertThatThrownBy(() -> Pipeline.from(new MemorySplits(true, 40, 40)).shuffle().shard(3, 0).resume(st))
        .isInstanceOf(CheckpointException.class).hasMessageContaining("needs the index path");

    Pipeline<Example> filtered = Pipeline.from(Datasets.range(50)).shuffle().shard(2, 0).filter(e -> true);
    PipelineState f;
    try (PipelineIterator<Example> it = filtered.iterate(PipelineContext.defaults())) {
      it.next();
      f = it.state();
    }
    PipelineState ft = f;
    assertThatThrownBy(() -> Pipeline.from(Datasets.range(50)).shuffle().shard(3, 0).filter(e -> true).resume(ft))
        .isInstanceOf(CheckpointException.class).hasMessageContaining("filter");
  }

  @Test
  void commonRefusesStatesOfDifferentSteps() {
    PipelineState a = run(2, 0, EqualLength.PAD, null, 3).state();
    PipelineState b = run(2, 1, EqualLength.PAD, null, 4).state();
    assertThatThrownBy(() -> PipelineState.common(List.of(a, b))).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("shard 1 is at position 4 but shard 0 is at 3");
    assertThatThrownBy(() -> PipelineState.common(List.of(a))).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("the state of shard 1 of 2 is missing");
    assertThatThrownBy(() -> PipelineState.common(List.of(a, a))).isInstanceOf(CheckpointException.class)
        .hasMessageContaining("two states of shard 0");
  }
}
