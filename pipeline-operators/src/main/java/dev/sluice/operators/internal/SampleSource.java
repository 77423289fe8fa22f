package dev.sluice.operators.internal;

import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.Mix;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import reactor.core.publisher.Flux;

/**
 * {@code sample(sources, weights)}: each element from source {@code i} with probability
 * {@code weights[i] / sum(weights)}, drawn from a {@link SplittableRandom} of (seed, epoch, rank).
 * A drawn source that is exhausted ends the pass ({@code stopOnEmptyDataset}) or is removed and
 * the draw repeated among the others, renormalized; a cycled source opens its pass for the next
 * epoch instead ({@link #cycleEpoch}), and then the pass ends once every source read once is
 * exhausted.
 *
 * <p>A pass from position {@code k} runs the draws of its first {@code k} elements on counts
 * ({@link Sim}): that gives the generator's state and each source's cycle and offset, from which
 * the sources are resumed (each through its own plan). The draws need the sources' lengths where a
 * draw can find a source exhausted (rebalancing, cycled sources); when one of those is unknown the
 * pass is replayed from its start.
 *
 * @param <T> the element type
 */
public final class SampleSource<T> implements MixSource<T> {
  private static final long SALT = 0x5A3F_1E5D_0C4B_77A1L;
  private static final long CYCLE_SALT = 0x3C79_AC49_2BA7_B653L;
  /** Beyond this many elements read once, the cardinality of a pass that only drawing tells is left unknown. */
  private static final long COUNT_LIMIT = 1L << 24;

  private final List<PlannedDataset<T>> sources;
  private final double[] weights;
  private final Long seed;
  private final boolean stop;
  private final boolean[] cycled;
  private final Schema schema;

  /**
   * @param sources the sources, at least one
   * @param weights one per source, finite and &ge; 0, at least one &gt; 0
   * @param seed the draws' seed, or null for the context's
   * @param stopOnEmptyDataset end the pass when a drawn source is exhausted
   * @param cycled per source, whether it repeats through its own epochs
   */
  public SampleSource(List<? extends PlannedDataset<T>> sources, double[] weights, Long seed, boolean stopOnEmptyDataset,
      boolean[] cycled) {
    if (sources.isEmpty()) {
      throw new IllegalArgumentException("sample needs at least one source but there are none");
    }
    if (weights.length != sources.size()) {
      throw new IllegalArgumentException("sample needs one weight per source: " + sources.size() + " sources but "
          + weights.length + " weights");
    }
    double total = 0;
    for (int i = 0; i < weights.length; i++) {
      if (!(weights[i] >= 0) || Double.isInfinite(weights[i])) {
        throw new IllegalArgumentException("weights[" + i + "] must be finite and >= 0 but it was " + weights[i]);
      }
      total += weights[i];
    }
    if (!(total > 0)) {
      throw new IllegalArgumentException("the weights must not all be 0: " + Arrays.toString(weights));
    }
    this.sources = List.copyOf(sources);
    this.weights = weights.clone();
    this.seed = seed;
    this.stop = stopOnEmptyDataset;
    this.cycled = cycled.clone();
    this.schema = MixSource.commonSchema("sample", this.sources);
  }

  /**
   * The epoch that cycle {@code cycle} of a cycled source runs in, in the mix's epoch {@code epoch}:
   * the epoch itself for the first cycle, then a value that no other (epoch, cycle) shares, so that
   * each cycle has its own shuffle.
   */
  static long cycleEpoch(long epoch, long cycle) {
    return cycle == 0 ? epoch : Mix.seed(CYCLE_SALT, epoch, cycle) & Long.MAX_VALUE;
  }

  /** The draws' generator for a pass: a function of (seed, epoch, rank). */
  private SplittableRandom random(PipelineContext context) {
    long s = seed != null ? seed : context.seed();
    return new SplittableRandom(Mix.seed(s ^ SALT, context.epoch(), context.rank()));
  }

  @Override
  public Flux<T> flux(PipelineContext context, long skip) {
    return Flux.defer(() -> {
      int n = sources.size();
      if (skip == 0) {
        return mix(context, new Draws(random(context)), new long[n], new long[n]);
      }
      Sim sim = simulate(context, skip, false);
      if (sim == null) {
        return mix(context, new Draws(random(context)), new long[n], new long[n]).skip(skip);
      }
      if (sim.emitted < skip) {
        return Flux.empty();
      }
      return mix(context, sim.draws, sim.cycles, sim.consumed);
    });
  }

  private Flux<T> mix(PipelineContext context, Draws draws, long[] cycles, long[] offsets) {
    FluxMix.Sources<T> open = MixPasses.passes(sources,
        cycle -> cycle == 0 ? context : context.withEpoch(cycleEpoch(context.epoch(), cycle)));
    return new FluxMix<>(sources.size(), open, cycles, offsets, null, () -> draws, PREFETCH);
  }

  @Override
  public long cardinality(PipelineContext context) {
    long once = 0;
    for (int i = 0; i < sources.size(); i++) {
      if (!cycled[i] && weights[i] > 0) {
        long length = sources.get(i).cardinality(context);
        if (length < 0) {
          return -1;
        }
        once += length;
      }
    }
    if (once == 0 && !readOnce()) {
      return -1; // every drawn source cycles: no end
    }
    if (!stop && !anyCycled()) {
      return once;
    }
    if (once > COUNT_LIMIT) {
      return -1;
    }
    Sim sim = simulate(context, Long.MAX_VALUE, true);
    return sim == null ? -1 : sim.emitted;
  }

  private boolean readOnce() {
    for (int i = 0; i < cycled.length; i++) {
      if (!cycled[i] && weights[i] > 0) {
        return true;
      }
    }
    return false;
  }

  private boolean anyCycled() {
    for (boolean c : cycled) {
      if (c) {
        return true;
      }
    }
    return false;
  }

  /**
   * The draws of the pass's first {@code skip} elements on counts, or null when a length they need
   * is unknown. With {@code counting}, every length is needed (the pass is run to its end).
   */
  private Sim simulate(PipelineContext context, long skip, boolean counting) {
    int n = sources.size();
    Sim sim = new Sim(new Draws(random(context)), new long[n], new long[n]);
    long[] length = new long[n];
    Arrays.fill(length, Long.MIN_VALUE); // not asked yet for the current cycle
    int current = -1;
    while (sim.emitted < skip) {
      if (current < 0) {
        current = sim.draws.next(0);
        if (current == FluxMix.Chooser.END) {
          return sim;
        }
      }
      int i = current;
      if (length[i] == Long.MIN_VALUE) {
        long cycle = sim.cycles[i];
        length[i] = sources.get(i).cardinality(cycle == 0 ? context : context.withEpoch(cycleEpoch(context.epoch(), cycle)));
      }
      if (length[i] < 0) {
        if (counting || !stop || cycled[i]) {
          return null;
        }
        // with stopOnEmptyDataset every draw before the state's position found an element
      } else if (sim.consumed[i] >= length[i]) {
        int a = sim.draws.exhausted(i, sim.consumed[i] == 0);
        if (a == FluxMix.Chooser.END) {
          return sim;
        }
        if (a == FluxMix.Chooser.CYCLE) {
          sim.cycles[i]++;
          sim.consumed[i] = 0;
          length[i] = Long.MIN_VALUE;
        } else {
          current = -1;
        }
        continue;
      }
      sim.consumed[i]++;
      sim.emitted++;
      sim.draws.taken(i);
      current = -1;
    }
    return sim;
  }

  /** The draws after {@code emitted} elements, and each source's cycle and elements consumed in it. */
  private final class Sim {
    final Draws draws;
    final long[] cycles;
    final long[] consumed;
    long emitted;

    Sim(Draws draws, long[] cycles, long[] consumed) {
      this.draws = draws;
      this.cycles = cycles;
      this.consumed = consumed;
    }
  }

  /** The weighted draws of one pass; the same code runs the pass and its simulation. */
  private final class Draws implements FluxMix.Chooser {
    private final SplittableRandom random;
    private final double[] live; // 0 once removed
    private double total;

    Draws(SplittableRandom random) {
      this.random = random;
      this.live = weights.clone();
      this.total = sum(live);
    }

    @Override
    public int next(long selected) {
      if (!(total > 0)) {
        return END;
      }
      double u = random.nextDouble() * total;
      int last = -1;
      for (int i = 0; i < live.length; i++) {
        if (live[i] > 0) {
          last = i;
          u -= live[i];
          if (u < 0) {
            return i;
          }
        }
      }
      return last; // rounding left u a hair above 0
    }

    @Override
    public int exhausted(int source, boolean emptyPass) {
      if (cycled[source] && !emptyPass) {
        return CYCLE;
      }
      if (stop) {
        return END;
      }
      live[source] = 0;
      total = sum(live);
      boolean readOnceLeft = false;
      for (int i = 0; i < live.length; i++) {
        readOnceLeft |= live[i] > 0 && !cycled[i];
      }
      return total > 0 && (readOnceLeft || !readOnce()) ? REDRAW : END;
    }

    private double sum(double[] w) {
      double s = 0;
      for (double x : w) {
        s += x;
      }
      return s;
    }
  }

  @Override
  public String operator() {
    return "sample";
  }

  @Override
  public String shapeKey() {
    return describe() + " of " + MixSource.sourcesKey(sources);
  }

  @Override
  public List<PlannedDataset<T>> sources() {
    return sources;
  }

  @Override
  public Schema schema() {
    return schema;
  }

  private String describe() {
    List<Integer> cycles = new ArrayList<>();
    for (int i = 0; i < cycled.length; i++) {
      if (cycled[i]) {
        cycles.add(i);
      }
    }
    StringBuilder w = new StringBuilder("[");
    for (int i = 0; i < weights.length; i++) {
      w.append(i > 0 ? ", " : "").append(String.format(Locale.ROOT, "%s", weights[i]));
    }
    return "sample(" + w + "], " + (seed == null ? "context seed" : "seed " + seed) + ", stopOnEmptyDataset "
        + stop + (cycles.isEmpty() ? "" : ", cycled " + cycles) + ")";
  }

  @Override
  public String toString() {
    return describe() + " of " + sources.size() + " pipelines";
  }
}
