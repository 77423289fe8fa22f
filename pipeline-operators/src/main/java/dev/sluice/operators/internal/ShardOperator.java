package dev.sluice.operators.internal;

import dev.sluice.operators.EqualLength;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * {@code shard} on the element path: keeps the elements at positions {@code p} with
 * {@code p mod numShards == index}, under an {@link EqualLength} policy. The public {@code Shard}
 * and the planner both build it.
 */
public final class ShardOperator {
  private ShardOperator() {}

  /**
   * The sharding transformer.
   *
   * @param numShards number of shards (ranks), &gt; 0
   * @param index this shard, in {@code [0, numShards)}
   * @param policy what to do when the count is not a multiple of {@code numShards}
   * @return the transformer
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

  /** Checks {@code shard(numShards, index)}'s arguments. */
  public static void checkShard(int numShards, int index) {
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
