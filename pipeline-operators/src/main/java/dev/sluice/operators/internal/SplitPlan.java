package dev.sluice.operators.internal;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.internal.Mix;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Shard;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.publisher.Flux;

/**
 * The reading plan of one rank over a {@link SplitDataset} (docs/architecture.md, the planner).
 *
 * <p>The epoch's split sequence is the source's splits, shuffled per (seed, epoch) when the
 * pipeline shuffles (the same sequence on every rank). With known row counts the sequence is one
 * row range {@code [0, n)}, and rank {@code r} of {@code k} takes a contiguous range of it with the
 * counts of {@link EqualLength} ({@code PAD}: {@code ceil(n/k)} each, positions past {@code n}
 * wrapping around to the start of the sequence; {@code DROP}: {@code floor(n/k)}; {@code UNEVEN}:
 * the first {@code n mod k} ranks one more), and reads only the splits and rows of that range with
 * {@code read(split, fromRow, toRow)}. With an unknown row count every rank reads the whole
 * sequence and keeps its stride ({@link Shard}).
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

  /** The splits in the epoch's order: a seeded Fisher-Yates shuffle of (seed, epoch). */
  public static List<Split> shuffled(List<Split> splits, long seed, long epoch) {
    List<Split> out = new ArrayList<>(splits);
    SplittableRandom random = new SplittableRandom(Mix.seed(seed, epoch, SALT));
    for (int i = out.size() - 1; i > 0; i--) {
      Collections.swap(out, i, random.nextInt(i + 1));
    }
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
    long n = 0;
    for (Split s : order) {
      n += s.rowCount();
    }
    long count = policy.count(n, k, r);
    long from = start(n, k, r, policy);
    List<Segment> out = new ArrayList<>();
    while (count > 0) {
      long position = from % n; // PAD wraps around to the start of the sequence
      long take = Math.min(count, n - position);
      addRange(order, position, position + take, out);
      count -= take;
      from += take;
    }
    return out;
  }

  /** Appends the segments covering sequence rows {@code [from, to)}. */
  private static void addRange(List<Split> order, long from, long to, List<Segment> out) {
    long base = 0;
    for (Split s : order) {
      long end = base + s.rowCount();
      long a = Math.max(from, base);
      long b = Math.min(to, end);
      if (a < b) {
        out.add(new Segment(s, a - base, b - base));
      }
      base = end;
      if (base >= to) {
        break;
      }
    }
  }

  /** Reads the segments in order, failing when a split delivers another number of rows than it declared. */
  public static <T> Flux<T> read(SplitDataset<T> source, List<Segment> segments) {
    return Flux.fromIterable(segments).concatMap(seg -> Flux.defer(() -> {
      if (seg.toRow() == Long.MAX_VALUE) {
        return source.read(seg.split(), seg.fromRow(), seg.toRow()); // unknown count: read to the end
      }
      AtomicLong seen = new AtomicLong();
      return source.read(seg.split(), seg.fromRow(), seg.toRow())
          .handle((T t, reactor.core.publisher.SynchronousSink<T> sink) -> {
            if (seen.incrementAndGet() > seg.rows()) {
              sink.error(wrongCount(seg.split(), seg.fromRow(), seg.toRow(), "more"));
            } else {
              sink.next(t);
            }
          })
          .concatWith(Flux.defer(() -> seen.get() == seg.rows() ? Flux.empty()
              : Flux.error(wrongCount(seg.split(), seg.fromRow(), seg.toRow(), String.valueOf(seen.get())))));
    }), 0);
  }

  /** The error of a split that delivered {@code found} rows of the range {@code [fromRow, toRow)}. */
  static DatasetFormatException wrongCount(Split split, long fromRow, long toRow, String found) {
    return new DatasetFormatException(split.id(), "rows [" + fromRow + ", " + toRow + ")",
        "expected " + (toRow - fromRow) + " rows (the split declares " + split.rowCount() + ") but "
        + ("more".equals(found) ? "the split delivered more" : "found " + found));
  }

  /**
   * One pass of rank {@code shard}'s part of {@code source}: the split order shuffled per (seed,
   * epoch) when {@code shuffleSplits}, then the rank's contiguous row range (known counts) or its
   * stride of everything (unknown counts). {@code shard} null: the whole sequence.
   *
   * @param seed the split shuffle's seed
   */
  public static <T> Flux<T> pass(SplitDataset<T> source, boolean shuffleSplits, long seed, PipelineContext context,
      ShardStage shard) {
    return Flux.defer(() -> {
      List<Split> order = shuffleSplits ? shuffled(source.splits(), seed, context.epoch()) : source.splits();
      if (shard == null) {
        return read(source, whole(order));
      }
      if (knownCounts(order)) {
        return read(source, segments(order, shard.numShards(), shard.index(), shard.policy()));
      }
      return read(source, whole(order)).transform(Shard.of(shard.numShards(), shard.index(), shard.policy()));
    });
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
        return Flux.defer(() -> read(source, range(segments, position, n)));
      }

      @Override
      public Flux<?> at(long[] positions) {
        return Flux.defer(() -> {
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
            return read(source, range(segments, from, positions[run[1] - 1] + 1))
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
