package dev.sluice.operators.internal;

import dev.sluice.core.Dataset;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.function.UnaryOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Resumes a deterministic {@code interleave} after its first {@code skip} outputs without reading
 * them again, when the planner knows the length of every dataset it opened before that point
 * (random-access datasets, pipelines with a known cardinality: {@link PlannedDataset}): tf.data's
 * interleave order is run on counts ({@link Sim}, a step per block), which gives the open datasets,
 * how much of each was read, and where in the cycle and in the block the next output comes from.
 * The resumed interleave is then an ordinary one over a rotated input sequence: the rest of the
 * current block first, then the cycle's open datasets from their offsets in cycle order (each read
 * from there by {@code skip}, which the planner pushes down), with a fresh input wherever the cycle
 * had a free slot, then the inputs not opened yet. A slot that stays free for want of inputs only
 * shifts the others, which keeps their order. A dataset whose last element ends its block keeps its
 * slot for one more turn of the cycle (the turn that finds it ended emits nothing), so it is resumed
 * as an ended dataset, not as a free slot.
 *
 * <p>Cost: the interleave's input is read again up to the last input opened, and {@code fn} is
 * called on each of those inputs to learn its dataset's length; no element of an inner dataset is
 * read again. A dataset of unknown length falls back to replaying the interleave.
 */
final class InterleaveResume {
  private InterleaveResume() {}

  /** An input of the resumed interleave: an input element whose dataset is read from {@code offset} on. */
  record Item(Object input, long offset) {}

  /** Where a free slot of the cycle takes the next input not opened yet. */
  private static final Object FRESH = new Object();
  /** The end of the inputs not opened yet. */
  private static final Object END = new Object();

  /** An open dataset of the simulated cycle. */
  private static final class Slot {
    final Object input;
    final long length;
    long consumed;

    Slot(Object input, long length) {
      this.input = input;
      this.length = length;
    }
  }

  /** tf.data's interleave order on counts, driven one input at a time. */
  static final class Sim {
    private final int cycle;
    private final int block;
    private final long skip;
    private final ToLongFunction<Object> lengthOf;
    final Slot[] slots;
    int current; // the slot the next output comes from
    int inBlock; // outputs of the current block already emitted
    private int open;
    private long emitted;
    long opened; // inputs opened so far
    private boolean inputsDone;
    boolean unknownLength;
    boolean reached; // skip outputs emitted: the state is the resume point
    boolean stopped; // reached, or no more outputs, or a length unknown

    Sim(int cycle, int block, long skip, ToLongFunction<Object> lengthOf) {
      this.cycle = cycle;
      this.block = block;
      this.skip = skip;
      this.lengthOf = lengthOf;
      this.slots = new Slot[cycle];
    }

    /** Opens {@code input} in the slot that waits for one; true while another input is needed. */
    boolean offer(Object input) {
      long length = lengthOf.applyAsLong(input);
      if (length < 0) {
        unknownLength = true;
        stopped = true;
        return false;
      }
      slots[current] = new Slot(input, length);
      open++;
      opened++;
      return run();
    }

    /** The inputs are over. */
    void end() {
      inputsDone = true;
      run();
    }

    /** Advances until an input is needed (true) or the simulation stops (false). */
    boolean run() {
      while (emitted < skip) {
        Slot s = slots[current];
        if (s != null) {
          if (s.consumed < s.length) {
            long n = Math.min(Math.min(block - inBlock, s.length - s.consumed), skip - emitted);
            s.consumed += n;
            emitted += n;
            inBlock += (int) n;
            if (inBlock == block) {
              inBlock = 0;
              current = (current + 1) % cycle;
            }
            continue;
          }
          slots[current] = null;
          open--;
          inBlock = 0;
          current = (current + 1) % cycle;
        } else if (!inputsDone) {
          return true;
        } else if (open == 0) {
          stopped = true; // fewer outputs than skip
          return false;
        } else {
          inBlock = 0;
          current = (current + 1) % cycle;
        }
      }
      reached = true;
      stopped = true;
      return false;
    }
  }

  /**
   * The outputs of {@code stage} from output {@code skip} on.
   *
   * @param inputs the interleave's input pass
   * @param inputsFrom the input pass without its first elements
   * @param replay the interleave's pass without its first {@code skip} outputs, read from the start
   * @param measured measures the resumed outputs as the stage's (the replay is measured already)
   */
  static Flux<?> resume(Flux<?> inputs, LongFunction<Flux<?>> inputsFrom, InterleaveStage stage, PipelineContext context,
      Options options, long skip, Supplier<Flux<?>> replay, UnaryOperator<Flux<?>> measured) {
    return Flux.defer(() -> {
      Sim sim = new Sim(stage.cycleLength(), stage.blockLength(), skip, input -> length(stage.fn().apply(input), context));
      return inputs.takeWhile(sim::offer)
          .then(Mono.fromSupplier(() -> {
            if (!sim.stopped) {
              sim.end();
            }
            return sim;
          }))
          .flatMapMany(s -> {
            if (s.unknownLength) {
              return replay.get();
            }
            if (!s.reached) {
              return Flux.empty();
            }
            return measured.apply(resumed(s, inputsFrom.apply(s.opened), stage, context, options));
          });
    });
  }

  /** The number of elements of {@code dataset}'s pass, or -1 when only reading tells. */
  private static long length(Dataset<?> dataset, PipelineContext context) {
    if (dataset instanceof PlannedDataset<?> p) {
      return p.cardinality(context);
    }
    return PlanBuilder.size(dataset);
  }

  @SuppressWarnings("unchecked")
  private static Flux<?> resumed(Sim s, Flux<?> fresh, InterleaveStage stage, PipelineContext context, Options options) {
    int cycle = stage.cycleLength();
    List<Object> template = new ArrayList<>(cycle);
    Flux<?> rest = Flux.empty();
    Slot first = s.slots[s.current];
    if (s.inBlock > 0) {
      long take = stage.blockLength() - s.inBlock;
      rest = from(stage.fn().apply(first.input), first.consumed, context).take(take);
      for (int j = 1; j < cycle; j++) {
        template.add(item(s.slots[(s.current + j) % cycle]));
      }
      // ended within the block: the slot is free at the next turn; ended with it: one turn finds it ended
      template.add(first.length - first.consumed >= take ? new Item(first.input, first.consumed + take) : FRESH);
    } else {
      for (int j = 0; j < cycle; j++) {
        template.add(item(s.slots[(s.current + j) % cycle]));
      }
    }
    Flux<Object> items = Flux.defer(() -> {
      Iterator<Object> t = template.iterator();
      return ((Flux<Object>) fresh).concatWith(Mono.just(END)).concatMapIterable(x -> {
        List<Object> out = new ArrayList<>(2);
        while (t.hasNext()) {
          Object m = t.next();
          if (m != FRESH) {
            out.add(m);
          } else if (x != END) {
            out.add(new Item(x, 0));
            return out;
          }
        }
        if (x != END) {
          out.add(new Item(x, 0));
        }
        return out;
      }, 1);
    });
    InterleaveStage resumed = new InterleaveStage(o -> {
      Item item = (Item) o;
      Dataset<?> d = stage.fn().apply(item.input());
      return item.offset() == 0 ? d : (Dataset<Object>) c -> (Flux<Object>) from(d, item.offset(), c);
    }, cycle, stage.blockLength(), stage.numParallelCalls(), stage.deterministic());
    return Flux.concat(rest, resumed.apply(items, context, options));
  }

  private static Object item(Slot slot) {
    return slot == null ? FRESH : new Item(slot.input, slot.consumed);
  }

  /** {@code dataset}'s pass for {@code context} from element {@code offset} on. */
  private static Flux<?> from(Dataset<?> dataset, long offset, PipelineContext context) {
    return dataset instanceof PlannedDataset<?> p ? p.flux(context, offset) : PlannedPass.from(dataset, offset, context);
  }
}
