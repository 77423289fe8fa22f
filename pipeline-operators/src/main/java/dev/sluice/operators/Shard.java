package dev.sluice.operators;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * tf.data's {@code shard} as a plain Reactor transformer over any {@link Flux}: keeps the elements
 * at positions {@code p} with {@code p mod numShards == index}, under an {@link EqualLength} policy.
 *
 * <p>This is the element path: every rank reads every element and keeps its stride. On a
 * {@link dev.sluice.core.RandomAccessDataset}, {@link Pipeline#shard} computes the rank's indices
 * instead and reads nothing else.
 *
 * <p><b>Reactive Streams semantics.</b> Requests {@code numShards} upstream elements per element it
 * emits. Emits an element once its group of {@code numShards} consecutive elements is complete
 * ({@code UNEVEN} and {@code PAD} also emit from the last, incomplete group); completes when the
 * upstream completes, after {@code PAD}'s wrap-around element if this rank needs one; cancels the
 * upstream when the downstream cancels; passes errors on.
 *
 * <p><b>Discard support.</b> Elements of other ranks, a {@code DROP}ped incomplete group, and the
 * up to {@code index} first elements kept for {@code PAD}'s wrap-around go to the discard hook.
 *
 * <pre>{@code
 * Flux<Example> mine = examples.transform(Shard.of(ctx.worldSize(), ctx.rank(), EqualLength.DROP));
 * }</pre>
 */
public final class Shard {
  private Shard() {}

  /** {@link #of(int, int, EqualLength)} with {@link EqualLength#PAD}. */
  public static <T> Function<Flux<T>, Flux<T>> of(int numShards, int index) {
    return of(numShards, index, EqualLength.PAD);
  }

  /**
   * @param numShards number of shards (ranks), &gt; 0
   * @param index this shard, in {@code [0, numShards)}
   * @param policy what to do when the count is not a multiple of {@code numShards}
   */
  public static <T> Function<Flux<T>, Flux<T>> of(int numShards, int index, EqualLength policy) {
    checkShard(numShards, index);
    java.util.Objects.requireNonNull(policy, "policy");
    return flux -> Flux.deferContextual(view -> {
      Context context = Context.of(view);
      State<T> state = new State<>(numShards, index, policy);
      return flux.buffer(numShards)
          .<T>handle((group, sink) -> {
            T mine = state.take(group, context);
            if (mine != null) {
              sink.next(mine);
            }
          })
          .concatWith(Flux.defer(() -> {
            T pad = state.padding(context);
            return pad == null ? Flux.empty() : Flux.just(pad);
          }))
          .doFinally(signal -> state.release(context));
    });
  }

  static void checkShard(int numShards, int index) {
    if (numShards <= 0) {
      throw new IllegalArgumentException("numShards > 0 required but it was " + numShards);
    }
    if (index < 0 || index >= numShards) {
      throw new IllegalArgumentException("index in [0, " + numShards + ") required but it was " + index);
    }
  }

  /** Per-subscription state: the count so far and the elements kept for PAD. */
  private static final class State<T> {
    final int k;
    final int r;
    final EqualLength policy;
    long seen;
    long emitted;
    List<T> kept; // positions 0 .. r-1 (PAD only): the wrap-around candidates
    boolean released; // the pass ended: keep nothing more

    State(int k, int r, EqualLength policy) {
      this.k = k;
      this.r = r;
      this.policy = policy;
      this.kept = policy == EqualLength.PAD && r > 0 ? new ArrayList<>(r) : null;
    }

    synchronized T take(List<T> group, Context context) {
      boolean full = group.size() == k;
      T mine = null;
      for (int i = 0; i < group.size(); i++) {
        T t = group.get(i);
        long position = seen + i;
        if (i == r && (full || policy != EqualLength.DROP)) {
          mine = t;
        } else if (kept != null && position < r && !released) {
          kept.add(t);
        } else {
          Operators.onDiscard(t, context);
        }
      }
      seen += group.size();
      if (mine != null) {
        emitted++;
      }
      return mine;
    }

    synchronized T padding(Context context) {
      T pad = null;
      if (policy == EqualLength.PAD && !released && emitted < policy.count(seen, k, r)) {
        long wrapped = ((seen + k - 1) / k - 1) * k + r; // the padded position, >= seen
        int position = (int) (wrapped % seen); // < min(r, seen): one of the kept elements
        pad = kept.set(position, null);
      }
      return pad;
    }

    synchronized void release(Context context) {
      released = true;
      if (kept != null) {
        for (T t : kept) {
          if (t != null) {
            Operators.onDiscard(t, context);
          }
        }
        kept.clear();
      }
    }
  }
}
