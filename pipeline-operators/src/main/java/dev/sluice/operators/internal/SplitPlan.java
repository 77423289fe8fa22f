package dev.sluice.operators.internal;

import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.internal.Mix;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.SplitShuffle;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;

/**
 * The reading plan of one rank over a {@link SplitDataset} (docs/architecture.md, the planner).
 *
 * <p>A pass's row sequence ({@link #sequence}) depends on its {@link Order}. Unshuffled: the
 * source's splits in order. With known row counts the sequence is one row range {@code [0, n)}, and
 * rank {@code r} of {@code k} takes a contiguous range of it with the counts of {@link EqualLength}
 * ({@code PAD}: {@code ceil(n/k)} each, positions past {@code n} wrapping around to the start of the
 * sequence; {@code DROP}: {@code floor(n/k)}; {@code UNEVEN}: the first {@code n mod k} ranks one
 * more), and reads only the rows of that range with {@code read(split, fromRow, toRow)}. Shuffled
 * ({@link SplitShuffle#BLOCKS}, the default): the sequence is a permutation of the blocks of every
 * split ({@link BlockPlan}), the same on every rank, and the rank's range of it is spread over its
 * shuffle windows (whole blocks paired around the middle of its rows, where the source aligns
 * them). Shuffled by {@link SplitShuffle#SPLITS}: the splits in a permuted order. With an unknown
 * row count every rank reads the whole sequence (splits, shuffled or not) and keeps its stride
 * ({@link Shard}).
 */
public final class SplitPlan {
  /** Salt of the split-order shuffle's random stream. */
  static final long SALT = 0x5971_7500_0D3E_5EEDL;

  private SplitPlan() {}

  /** Rows {@code [fromRow, toRow)} of one split. */
  public record Segment(Split split, long fromRow, long toRow) {
    public long rows() {
      return toRow - fromRow;
    }
  }

  /**
   * What orders one pass of a rank.
   *
   * @param shuffle how the rows are shuffled, or null for the source's order
   * @param seed the shuffle's seed
   * @param epoch the context's epoch
   * @param shard the rank's shard, or null for every row
   * @param windowRows the rows of the shuffle window that follows (blocks are spread over such
   *     windows), 0 when none follows
   */
  public record Order(SplitShuffle shuffle, long seed, long epoch, ShardStage shard, long windowRows) {
    /** The rank's number, 0 without a shard. */
    int rank() {
      return shard == null ? 0 : shard.index();
    }

    /** The number of ranks, 1 without a shard. */
    int world() {
      return shard == null ? 1 : shard.numShards();
    }
  }

  /**
   * The rank's row ranges of one pass in reading order, or null when a split's row count is unknown
   * (every rank then reads the whole split sequence and keeps its stride: {@link #pass}).
   */
  public static List<Segment> sequence(SplitDataset<?> source, Order order) {
    List<Split> splits = source.splits();
    if (!knownCounts(splits)) {
      return null;
    }
    if (order.shuffle() != SplitShuffle.BLOCKS) {
      List<Split> sequence = order.shuffle() == null ? splits : shuffled(splits, order.seed(), order.epoch());
      return order.shard() == null ? whole(sequence)
          : segments(sequence, order.shard().numShards(), order.shard().index(), order.shard().policy());
    }
    List<Segment> blocks = BlockPlan.shuffled(BlockPlan.blocks(source, splits, order.world(), order.windowRows()),
        order.seed(), order.epoch());
    List<Segment> mine = order.shard() == null ? blocks
        : part(blocks, order.shard().numShards(), order.shard().index(), order.shard().policy());
    long key = Mix.seed(Mix.seed(order.seed(), order.epoch(), BlockPlan.SPREAD_SALT), order.rank(), BlockPlan.SPREAD_SALT);
    if (BlockPlan.aligned(source, splits)) {
      return BlockPlan.pair(mine, splits, key); // whole aligned blocks: a piece of one would decode its unit again
    }
    return BlockPlan.spread(mine, splits, order.windowRows(), key);
  }

  /**
   * Rank {@code r} of {@code k}'s contiguous range of {@code sequence}'s rows with the
   * {@code policy}'s counts ({@code PAD} wrapping around to the start), as row ranges.
   */
  static List<Segment> part(List<Segment> sequence, int k, int r, EqualLength policy) {
    long n = 0;
    for (Segment s : sequence) {
      n += s.rows();
    }
    long count = policy.count(n, k, r);
    long from = start(n, k, r, policy);
    List<Segment> out = new ArrayList<>();
    while (count > 0) {
      long position = from % n; // PAD wraps around to the start of the sequence
      long take = Math.min(count, n - position);
      out.addAll(range(sequence, position, position + take));
      count -= take;
      from += take;
    }
    return out;
  }

  /** The splits in the epoch's order: a seeded Fisher-Yates shuffle of (seed, epoch). */
  public static List<Split> shuffled(List<Split> splits, long seed, long epoch) {
    List<Split> out = new ArrayList<>(splits);
    BlockPlan.shuffle(out, new SplittableRandom(Mix.seed(seed, epoch, SALT)));
    return out;
  }

  /** True when every split knows its row count. */
  public static boolean knownCounts(List<Split> splits) {
    for (Split s : splits) {
      if (!s.hasKnownRowCount()) {
        return false;
      }
    }
    return true;
  }

  /** First position (in the sequence's rows) of rank {@code r}'s contiguous range. */
  static long start(long n, int k, int r, EqualLength policy) {
    switch (policy) {
      case PAD:
        return r * EqualLength.PAD.count(n, k, r);
      case DROP:
        return r * (n / k);
      default:
        return r * (n / k) + Math.min(r, n % k);
    }
  }

  /**
   * The row ranges rank {@code r} of {@code k} reads, in order, over the split sequence
   * {@code order} (every split with a known row count).
   */
  public static List<Segment> segments(List<Split> order, int k, int r, EqualLength policy) {
    return part(whole(order), k, r, policy);
  }

  /** Reads the segments in order, failing when a split delivers another number of rows than it declared. */
  public static <T> Flux<T> read(SplitDataset<T> source, List<Segment> segments) {
    return read(source, segments, null);
  }

  /**
   * {@link #read(SplitDataset, List)}, through {@code batches} when not null: each segment decoded
   * into batches whose rows are handed on as views of their batch ({@link BatchRows}).
   */
  @SuppressWarnings("unchecked")
  static <T> Flux<T> read(SplitDataset<T> source, List<Segment> segments, BatchSplitDataset<?> batches) {
    java.util.function.Function<Segment, Flux<T>> rows = batches == null
        ? seg -> source.read(seg.split(), seg.fromRow(), seg.toRow())
        : seg -> (Flux<T>) BatchRows.read(batches, seg.split(), seg.fromRow(), seg.toRow());
    return Flux.fromIterable(segments).concatMap(seg -> Flux.defer(() -> {
      if (seg.toRow() == Long.MAX_VALUE) {
        return rows.apply(seg); // unknown count: read to the end
      }
      AtomicLong seen = new AtomicLong();
      return rows.apply(seg)
          .handle((T t, reactor.core.publisher.SynchronousSink<T> sink) -> {
            if (seen.incrementAndGet() > seg.rows()) {
              sink.error(SplitPiece.wrongCount(seg.split(), seg.fromRow(), seg.toRow(), "more"));
            } else {
              sink.next(t);
            }
          })
          .concatWith(Flux.defer(() -> seen.get() == seg.rows() ? Flux.empty()
              : Flux.error(SplitPiece.wrongCount(seg.split(), seg.fromRow(), seg.toRow(), String.valueOf(seen.get())))));
    }), 0);
  }

  /**
   * One pass of a rank's part of {@code source} in the {@code order}'s {@link #sequence}; with an
   * unknown row count, the whole split sequence (its order shuffled per (seed, epoch) when the pass
   * shuffles) with the rank's stride kept.
   */
  public static <T> Flux<T> pass(SplitDataset<T> source, Order order) {
    return pass(source, order, null);
  }

  /** {@link #pass(SplitDataset, Order)}, the rows read through {@code batches} when not null ({@link #read(SplitDataset, List, BatchSplitDataset)}). */
  static <T> Flux<T> pass(SplitDataset<T> source, Order order, BatchSplitDataset<?> batches) {
    return Flux.defer(() -> {
      List<Segment> sequence = sequence(source, order);
      if (sequence != null) {
        announce(source, sequence);
        return read(source, sequence, batches);
      }
      List<Split> splits = order.shuffle() == null ? source.splits()
          : shuffled(source.splits(), order.seed(), order.epoch());
      source.readNext(splits);
      Flux<T> all = read(source, whole(splits), batches);
      ShardStage shard = order.shard();
      return shard == null ? all : all.transform(ShardOperator.of(shard.numShards(), shard.index(), shard.policy()));
    });
  }

  /** Tells {@code source} the splits of {@code segments}, in order: the reads about to start ({@link SplitDataset#readNext}). */
  static void announce(SplitDataset<?> source, List<Segment> segments) {
    if (source instanceof RandomAccessBlocks<?> view) {
      view.announce(segments);
      return;
    }
    List<Split> next = new ArrayList<>(segments.size());
    for (Segment s : segments) {
      if (next.isEmpty() || !next.get(next.size() - 1).equals(s.split())) {
        next.add(s.split());
      }
    }
    source.readNext(next);
  }

  /** Positions closer than this are read as one range by {@link #positional}'s {@code at}. */
  static final long GAP = 4096;

  /** The parts of {@code segments} at sequence positions {@code [from, to)} (known counts). */
  static List<Segment> range(List<Segment> segments, long from, long to) {
    List<Segment> out = new ArrayList<>();
    long base = 0;
    for (Segment s : segments) {
      long end = base + s.rows();
      long a = Math.max(from, base);
      long b = Math.min(to, end);
      if (a < b) {
        out.add(new Segment(s.split(), s.fromRow() + (a - base), s.fromRow() + (b - base)));
      }
      base = end;
      if (base >= to) {
        break;
      }
    }
    return out;
  }

  /**
   * The rows of {@code segments} (known counts) as a {@link Positional} stream: {@code from} reads
   * from a position on; {@code at} reads the runs of wanted positions, a gap of fewer than
   * {@value #GAP} rows read through rather than starting another read, and drops the rows between.
   */
  static Positional positional(SplitDataset<?> source, List<Segment> segments) {
    return positional(source, segments, null);
  }

  /** {@link #positional(SplitDataset, List)}, the rows read through {@code batches} when not null. */
  static Positional positional(SplitDataset<?> source, List<Segment> segments, BatchSplitDataset<?> batches) {
    long length = 0;
    for (Segment s : segments) {
      length += s.rows();
    }
    long n = length;
    return new Positional() {
      @Override
      public long length() {
        return n;
      }

      @Override
      public Flux<?> from(long position) {
        return Flux.defer(() -> {
          List<Segment> rest = range(segments, position, n);
          announce(source, rest);
          return read(source, rest, batches);
        });
      }

      @Override
      public Flux<?> at(long[] positions) {
        return Flux.defer(() -> {
          if (positions.length > 0) {
            announce(source, range(segments, positions[0], n));
          }
          List<int[]> runs = new ArrayList<>(); // [first, end) indices into positions
          int first = 0;
          for (int i = 1; i <= positions.length; i++) {
            if (i == positions.length || positions[i] - positions[i - 1] > GAP) {
              runs.add(new int[] {first, i});
              first = i;
            }
          }
          return Flux.fromIterable(runs).concatMap(run -> Flux.defer(() -> {
            long from = positions[run[0]];
            long[] at = {from};
            int[] next = {run[0]};
            return read(source, range(segments, from, positions[run[1] - 1] + 1), batches)
                .handle((Object t, reactor.core.publisher.SynchronousSink<Object> sink) -> {
                  long p = at[0]++;
                  if (next[0] < run[1] && positions[next[0]] == p) {
                    next[0]++;
                    sink.next(t);
                  } else {
                    reactor.core.publisher.Operators.onDiscard(t, sink.currentContext());
                  }
                });
          }), 0);
        });
      }
    };
  }

  /** Every split of {@code order} read whole (to the end when its count is unknown). */
  static List<Segment> whole(List<Split> order) {
    List<Segment> all = new ArrayList<>(order.size());
    for (Split s : order) {
      all.add(new Segment(s, 0, s.hasKnownRowCount() ? s.rowCount() : Long.MAX_VALUE));
    }
    return all;
  }
}
