package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Positioned;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Runs a pipeline whole and cut: taken up to cut points, its state saved as JSON and read back,
 * resumed from it, and so on; the elements are rendered with their epoch as strings
 * ({@code "2:17"} for example 17 of epoch 2, {@code "0:[3, 9, 4]"} for a batch).
 */
final class ResumeRuns {
  private ResumeRuns() {}

  /** The element, its epoch, rendered; a batch is closed. */
  static String key(long epoch, Object element) {
    if (element instanceof Batch b) {
      try (b) {
        long[] indices = new long[b.size()];
        for (int i = 0; i < indices.length; i++) {
          indices[i] = b.index(i);
        }
        return epoch + ":" + Arrays.toString(indices);
      }
    }
    if (element instanceof Example e) {
      return epoch + ":" + e.index();
    }
    return epoch + ":" + element;
  }

  /** Every element of {@code epochs} epochs from {@code ctx}, with {@link PipelineIterator#state()} epochs. */
  static List<String> whole(Pipeline<?> pipeline, PipelineContext ctx, long epochs) {
    List<String> out = new ArrayList<>();
    try (PipelineIterator<?> it = pipeline.iterate(ctx, epochs)) {
      while (it.hasNext()) {
        Object x = it.next();
        out.add(key(it.state().epoch(), x));
      }
    }
    return out;
  }

  /**
   * The run cut after {@code cuts[0]}, then {@code cuts[1]}, ... elements in all (ascending): each
   * part resumed from the JSON of the previous part's state, alternately through an iterator and
   * through {@link Pipeline#withState(PipelineState)}; the last part runs to the end.
   */
  static List<String> cut(Pipeline<?> pipeline, PipelineContext ctx, long epochs, long[] cuts) {
    List<String> out = new ArrayList<>();
    PipelineState state = null;
    long done = 0;
    for (int part = 0; part <= cuts.length; part++) {
      long want = part < cuts.length ? cuts[part] - done : Long.MAX_VALUE;
      if (part % 2 == 0) {
        try (PipelineIterator<?> it = state == null ? pipeline.iterate(ctx, epochs) : pipeline.iterate(state)) {
          for (long i = 0; i < want && it.hasNext(); i++) {
            Object x = it.next();
            out.add(key(it.state().epoch(), x));
            done++;
          }
          state = it.state();
        }
      } else {
        List<Positioned<?>> got = new ArrayList<>();
        (state == null ? pipeline.withState(ctx, epochs) : pipeline.withState(state)).take(want)
            .doOnNext(got::add).blockLast();
        for (Positioned<?> p : got) {
          out.add(key(p.state().epoch(), p.element()));
          done++;
        }
        if (!got.isEmpty()) {
          state = got.get(got.size() - 1).state();
        }
      }
      state = PipelineState.fromJson(state.toJson());
    }
    try {
      TestSources.awaitNoOutstanding();
    } catch (ConditionTimeoutException e) {
      throw new AssertionError("off-heap memory still outstanding after the run cut at " + Arrays.toString(cuts) + ": "
          + MemoryManager.shared().outstandingBytes() + " bytes\n" + pipeline.explain(), e);
    }
    assertEquals(0, MemoryManager.shared().outstandingBytes());
    return out;
  }

  /** Cut points from fractions of {@code total}, ascending. */
  static long[] cuts(long total, List<Double> fractions) {
    return fractions.stream().mapToLong(f -> Math.min(total, (long) Math.floor(f * (total + 1)))).sorted().toArray();
  }

  /** Asserts that the cut run equals the whole run, naming the cuts. */
  static void assertResumesExactly(Pipeline<?> pipeline, PipelineContext ctx, long epochs, List<Double> fractions) {
    List<String> whole = whole(pipeline, ctx, epochs);
    long[] cuts = cuts(whole.size(), fractions);
    List<String> cut = cut(pipeline, ctx, epochs, cuts);
    assertEquals(whole, cut, () -> pipeline.explain() + "\ncut at " + Arrays.toString(cuts) + " of " + whole.size());
  }
}
