package dev.sluice.operators.internal;

import dev.sluice.core.PipelineContext;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import reactor.core.publisher.Flux;

/**
 * Resumes a buffer shuffle ({@link FluxBufferShuffle}) after its first {@code skip} outputs without
 * reading them again: which input positions its buffer holds after {@code skip} outputs depends
 * only on (seed, epoch), the buffer size and the number of inputs, so it is recomputed by running
 * the shuffle's draws on positions instead of elements ({@link #simulate}: one draw per output
 * skipped, no element read). Then just the held positions and the inputs after the last one read
 * are read from the upstream ({@link Positional}), and the shuffle continues from that buffer with
 * its generator where the original was: the outputs are exactly the original's from {@code skip}
 * on.
 *
 * <p>Cost: {@code skip} draws (a few nanoseconds each) and at most {@code bufferSize} elements read
 * again (the ones the buffer held); memory as the shuffle's own.
 */
final class BufferShuffleResume {
  private BufferShuffleResume() {}

  /**
   * The buffer after {@code emitted} outputs over {@code n} inputs.
   *
   * @param slots the input position in each slot, -1 for a hole; in draining order when {@code draining}
   * @param next the first input position not yet in the buffer
   */
  record Simulated(long[] slots, int initialFilled, int filled, boolean draining, int[] holes, long next) {}

  /**
   * Runs {@code skip} outputs of a buffer shuffle of {@code bufferSize} over {@code n} inputs on
   * positions, exactly as {@link FluxBufferShuffle} draws them from {@code random} (which ends
   * advanced as the shuffle's own generator is after those outputs). Null when the shuffle has
   * fewer than {@code skip} outputs.
   */
  static Simulated simulate(int bufferSize, long n, long skip, SplittableRandom random) {
    int initial = (int) Math.min(bufferSize, n);
    long[] slot = new long[initial];
    for (int i = 0; i < initial; i++) {
      slot[i] = i;
    }
    long next = initial;
    int filled = initial;
    boolean draining = false;
    int[] holes = new int[16];
    int holeCount = 0;
    for (long emitted = 0; emitted < skip; ) {
      if (filled == 0) {
        return null;
      }
      if (!draining) {
        int pick = FluxBufferShuffle.BufferShuffleSubscriber.uniform(random, bufferSize);
        if (pick >= slot.length || slot[pick] < 0) {
          // the drawn slot will never be refilled: the rest of the buffer goes out at random
          int k = 0;
          for (int i = 0; i < slot.length; i++) {
            if (slot[i] >= 0) {
              slot[k++] = slot[i];
            }
          }
          Arrays.fill(slot, k, slot.length, -1);
          draining = true;
          continue;
        }
        emitted++;
        if (next < n) {
          slot[pick] = next++;
        } else {
          slot[pick] = -1;
          filled--;
          if (holeCount == holes.length) {
            holes = Arrays.copyOf(holes, 2 * holes.length);
          }
          holes[holeCount++] = pick;
        }
      } else {
        int j = FluxBufferShuffle.BufferShuffleSubscriber.uniform(random, filled);
        emitted++;
        slot[j] = slot[--filled];
        slot[filled] = -1;
      }
    }
    return new Simulated(slot, initial, filled, draining, Arrays.copyOf(holes, holeCount), next);
  }

  /**
   * The outputs of {@code stage} over {@code upstream} from output {@code skip} on, for
   * {@code context}.
   */
  @SuppressWarnings("unchecked")
  static Flux<?> resume(Positional upstream, BufferShuffleStage stage, PipelineContext context, long skip) {
    return Flux.defer(() -> {
      long seed = stage.seed() != null ? stage.seed() : context.seed();
      long epoch = stage.reshuffleEachIteration() ? context.epoch() : 0;
      SplittableRandom random = FluxBufferShuffle.random(seed, epoch);
      Simulated sim = simulate(stage.bufferSize(), upstream.length(), skip, random);
      if (sim == null) {
        return Flux.empty();
      }
      long[] slots = sim.slots();
      int count = 0;
      for (long p : slots) {
        count += p >= 0 ? 1 : 0;
      }
      int held = count;
      long[][] bySlot = new long[held][]; // {position, slot}
      for (int i = 0, h = 0; i < slots.length; i++) {
        if (slots[i] >= 0) {
          bySlot[h++] = new long[] {slots[i], i};
        }
      }
      Arrays.sort(bySlot, (a, b) -> Long.compare(a[0], b[0]));
      long[] positions = new long[held];
      for (int i = 0; i < held; i++) {
        positions[i] = bySlot[i][0];
      }
      int size = stage.bufferSize();
      return upstream.at(positions).collectList().flatMapMany(elements -> {
        if (elements.size() != held) {
          return Flux.error(new IllegalStateException("resuming " + stage.describe() + ": the upstream gave "
              + elements.size() + " of the " + held + " elements the buffer held"));
        }
        Object[] restored = new Object[slots.length];
        for (int i = 0; i < held; i++) {
          restored[(int) bySlot[i][1]] = ((List<Object>) elements).get(i);
        }
        boolean exhausted = sim.next() >= upstream.length();
        FluxBufferShuffle.Restored state = new FluxBufferShuffle.Restored(random, restored, sim.initialFilled(),
            sim.filled(), sim.draining(), sim.holes(), exhausted);
        Flux<Object> rest = exhausted ? Flux.empty() : (Flux<Object>) upstream.from(sim.next());
        return new FluxBufferShuffle<>(rest, size, state);
      });
    });
  }
}
