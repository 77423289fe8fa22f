package dev.sluice.operators;

import static dev.sluice.operators.ResumeRuns.assertResumesExactly;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * A deterministic interleave resumed after any number of its outputs continues exactly as the
 * uninterrupted run, whether its datasets' lengths are known (the cycle is recomputed on counts)
 * or not (the interleave is replayed), and reads no element of a dataset of known length again.
 */
class InterleaveResumeTest {
  static final PipelineContext CTX = PipelineContext.defaults().withSeed(5);

  /** Input {@code e} of {@code lengths} becomes {@code lengths[e]} examples numbered {@code e * 100 + i}. */
  static Pipeline<Example> inner(long e, long length, boolean streaming) {
    Dataset<Example> rows = streaming ? TestSources.streaming(Datasets.range(length)) : Datasets.range(length);
    return Pipeline.from(rows).map(x -> Example.of(e * 100 + x.index(), "v", Tensor.scalar(x.index())));
  }

  static Pipeline<Example> interleaved(List<Integer> lengths, int cycle, int block, int par, boolean streaming) {
    return Pipeline.from(Datasets.range(lengths.size()))
        .interleave(e -> inner(e.index(), lengths.get((int) e.index()), streaming), cycle, block, par, true);
  }

  static List<Long> indices(reactor.core.publisher.Flux<Example> flux) {
    return flux.map(Example::index).collectList().block();
  }

  @Property(tries = 60)
  void everyCutPointResumesToTheUninterruptedTail(
      @ForAll @Size(min = 0, max = 8) List<@IntRange(min = 0, max = 7) Integer> lengths,
      @ForAll @IntRange(min = 1, max = 4) int cycle, @ForAll @IntRange(min = 1, max = 4) int block,
      @ForAll @IntRange(min = 1, max = 3) int par, @ForAll boolean streaming) {
    assertEveryCutResumes(lengths, cycle, block, par, streaming);
  }

  @Test
  void aDatasetThatEndsWithItsBlockLeavesItsSlotEmptyForOneTurn() {
    // A = 4 elements, B = 8, C = 2; cut after A0 A1 B0 B1 A2: the block ends with A's last element,
    // the next turn at A's slot only finds it ended, and C opens the turn after
    assertEveryCutResumes(List.of(4, 8, 2), 2, 2, 1, false);
    assertEveryCutResumes(List.of(4, 8, 2, 5, 6), 3, 2, 2, false);
  }

  static void assertEveryCutResumes(List<Integer> lengths, int cycle, int block, int par, boolean streaming) {
    Pipeline<Example> p = interleaved(lengths, cycle, block, par, streaming);
    List<Out> whole = new ArrayList<>();
    p.withState(CTX).doOnNext(x -> whole.add(new Out(x.element().index(), x.state()))).blockLast();
    assertEquals(lengths.stream().mapToInt(Integer::intValue).sum(), whole.size());
    List<Long> all = whole.stream().map(Out::index).toList();
    for (int k = 0; k <= whole.size(); k++) {
      PipelineState state = k == 0 ? null : PipelineState.fromJson(whole.get(k - 1).state().toJson());
      List<Long> rest = state == null ? indices(p.flux(CTX)) : indices(p.resume(state));
      int cut = k;
      assertEquals(all.subList(k, all.size()), rest, () -> "lengths " + lengths + " cycle " + cycle + " block " + block
          + " cut " + cut);
    }
  }

  /** An output's index and the state after it. */
  private record Out(long index, PipelineState state) {}

  @Property(tries = 40)
  void chainedCutsAcrossEpochs(@ForAll @Size(min = 1, max = 7) List<@IntRange(min = 0, max = 30) Integer> lengths,
      @ForAll @IntRange(min = 1, max = 4) int cycle, @ForAll @IntRange(min = 1, max = 5) int block,
      @ForAll @IntRange(min = 1, max = 3) int par, @ForAll @IntRange(min = 1, max = 4) int batch,
      @ForAll @IntRange(min = 1, max = 3) int epochs, @ForAll long seed,
      @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    // the inputs are shuffled per epoch and every dataset too, so each epoch interleaves another order
    Pipeline<?> p = Pipeline.from(Datasets.range(lengths.size())).shuffle()
        .interleave(e -> Pipeline.from(Datasets.range(lengths.get((int) e.index()))).shuffle()
            .map(x -> Example.of(e.index() * 100 + x.index(), "v", Tensor.scalar(x.index()))), cycle, block, par, true)
        .batch(batch).prefetch(2);
    assertResumesExactly(p, CTX.withSeed(seed), epochs, cuts);
  }

  @Test
  void aStateAtTheEndOfAnEpochResumesAtTheNextEpochsFirstOutput() {
    List<Integer> lengths = List.of(5, 3, 6, 2);
    Pipeline<Example> p = Pipeline.from(Datasets.range(lengths.size())).shuffle()
        .interleave(e -> inner(e.index(), lengths.get((int) e.index()), false), 2, 3, 2, true);
    List<dev.sluice.core.Positioned<Example>> all = p.withState(CTX, 3).collectList().block();
    assertEquals(48, all.size());
    for (int end : new int[] {15, 16, 32}) {
      PipelineState state = PipelineState.fromJson(all.get(end).state().toJson());
      List<Long> expected = all.subList(end + 1, all.size()).stream().map(x -> x.element().index()).toList();
      assertEquals(expected, indices(p.resume(state)), "after output " + (end + 1));
    }
    assertEquals(0, all.get(15).state().epoch());
    assertEquals(16, all.get(15).state().position());
  }

  @Test
  void aResumedInterleaveResumedAgainReadsNoElementOfItsDatasetsTwice() {
    int inputs = 9;
    AtomicLong rows = new AtomicLong();
    Function<Example, Dataset<Example>> fn = e -> {
      // the map reads each row's value (rows of a schema'd dataset are read when a field is looked at)
      return Pipeline.from(new CountingInto(Datasets.range(40 + 7 * e.index()), rows))
          .map(x -> Example.of(e.index() * 1000 + x.index(), "v", x.tensor("value")));
    };
    Pipeline<Example> p = Pipeline.from(Datasets.range(inputs)).interleave(fn, 3, 4, 3, true);
    List<Long> whole = indices(p.flux(CTX));
    long total = whole.size();
    List<Long> got = new ArrayList<>();
    PipelineState state;
    try (PipelineIterator<Example> it = p.iterate(CTX)) {
      for (int i = 0; i < 101; i++) {
        got.add(it.next().index());
      }
      state = it.state();
    }
    try (PipelineIterator<Example> it = p.iterate(PipelineState.fromJson(state.toJson()))) {
      for (int i = 0; i < 150; i++) {
        got.add(it.next().index());
      }
      state = it.state();
    }
    rows.set(0);
    got.addAll(indices(p.resume(PipelineState.fromJson(state.toJson()))));
    assertEquals(whole, got);
    // the last part reads each of its elements once
    assertEquals(total - 251, rows.get());
  }

  /** Counts into {@code rows} the rows {@code base} reads. */
  private static final class CountingInto extends TestSources.Wrapper {
    private final AtomicLong rows;

    CountingInto(RandomAccessDataset<Example> base, AtomicLong rows) {
      super(base);
      this.rows = rows;
    }

    @Override
    void check(long index) {
      rows.incrementAndGet();
    }
  }
}
