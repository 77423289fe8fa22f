package dev.sluice.operators.internal;

import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.internal.Mix;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Blocks: the unit of a split source's shuffle (docs/architecture.md, shuffling split sources).
 *
 * <p>Every split is cut into blocks of a bounded number of rows; the epoch's sequence is a seeded
 * permutation of all blocks of the dataset, the same on every rank; each rank takes its part of it
 * with the {@code EqualLength} counts ({@link SplitPlan#part}); and the rank's blocks are then
 * {@linkplain #spread spread} so that every window of the shuffle that follows draws its rows from
 * across the dataset. So a rank's rows change every epoch whatever the layout (a file of one row
 * group included), its output order does not follow the file, and the ranks together still read
 * every row exactly once per epoch ({@code UNEVEN}).
 *
 * <p>Block size. A block holds about {@code n / (64 k)} rows ({@code n} rows, {@code k} ranks: at
 * least 64 blocks per rank and epoch, so two epochs of a rank overlap about as two random
 * {@code 1/k} parts do), at most a quarter of the shuffle window (so a window gathers at least four
 * blocks) and at least {@value #MIN_BLOCK_ROWS} rows. Where the source names the rows a read starts
 * at no extra cost ({@link SplitDataset#blockStarts}: Parquet pages), a block is a run of whole
 * such units, one at least; a unit is cut only when it is more than twice the per-rank size, which
 * happens on small datasets only, where reading is cheap. Where the source aligns its blocks
 * ({@link SplitDataset#blockAlignment}: HDF5 chunks), a split's blocks hold
 * {@code max(target, alignment)} rows rounded up to a multiple of the alignment (the last block of
 * the split shorter), so no block cuts a unit, and the rank's blocks are read whole, not
 * {@linkplain #spread spread} but {@linkplain #pair paired}: a shuffled epoch decodes each unit once.
 */
final class BlockPlan {
  /** Blocks a rank aims to draw per epoch. */
  static final int BLOCKS_PER_RANK = 64;
  /** Blocks a shuffle window aims to hold. */
  static final int BLOCKS_PER_WINDOW = 4;
  /** Fewest rows of a block (unless a split is shorter). */
  static final long MIN_BLOCK_ROWS = 128;
  /** Salt of the block permutation's random stream. */
  static final long SALT = 0x6B10_C4ED_5EED_0001L;
  /** Salt of the spreading of a rank's blocks over its windows ({@link #spread}). */
  static final long SPREAD_SALT = 0x6B10_C4ED_5EED_0002L;
  /** Salt of the pairing of a rank's aligned blocks ({@link #pair}). */
  static final long PAIR_SALT = 0x6B10_C4ED_5EED_0003L;

  private BlockPlan() {}

  /** The rows of a block a world of {@code world} ranks aims for, over {@code rows} rows and windows of {@code windowRows} (0: none). */
  static long target(long rows, int world, long windowRows) {
    long t = perRank(rows, world);
    if (windowRows > 0) {
      t = Math.min(t, windowRows / BLOCKS_PER_WINDOW);
    }
    return Math.max(MIN_BLOCK_ROWS, t);
  }

  /** Rows per block that give every rank {@value #BLOCKS_PER_RANK} blocks, at least {@value #MIN_BLOCK_ROWS}. */
  static long perRank(long rows, int world) {
    long per = (long) BLOCKS_PER_RANK * Math.max(1, world);
    return Math.max(MIN_BLOCK_ROWS, rows / per + (rows % per == 0 ? 0 : 1));
  }

  /**
   * The blocks of {@code splits} (every row count known), in source order.
   *
   * @param world the number of ranks sharing the epoch (1 without a shard)
   * @param windowRows the rows of the shuffle window after the blocks, 0 for none
   */
  static List<SplitPlan.Segment> blocks(SplitDataset<?> source, List<Split> splits, int world, long windowRows) {
    long rows = 0;
    for (Split s : splits) {
      rows = Math.addExact(rows, s.rowCount());
    }
    long target = target(rows, world, windowRows);
    long cutAbove = 2 * perRank(rows, world);
    List<SplitPlan.Segment> out = new ArrayList<>();
    for (Split s : splits) {
      long n = s.rowCount();
      if (n == 0) {
        continue;
      }
      long align = alignment(source, s);
      if (align > 1) {
        long size = Math.max(target, align);
        size = Math.multiplyExact(size / align + (size % align == 0 ? 0 : 1), align);
        for (long from = 0; from < n; from += size) {
          out.add(new SplitPlan.Segment(s, from, Math.min(n, from + size)));
        }
        continue;
      }
      long[] starts = source.blockStarts(s);
      if (starts == null) {
        cut(s, 0, n, target, out);
        continue;
      }
      check(source, s, starts);
      long groupFrom = 0;
      for (int i = 0; i < starts.length; i++) {
        long from = starts[i];
        long to = i + 1 < starts.length ? starts[i + 1] : n;
        if (to - from > cutAbove) { // a unit far larger than a block: cut it (small datasets only)
          if (groupFrom < from) {
            out.add(new SplitPlan.Segment(s, groupFrom, from));
          }
          cut(s, from, to, target, out);
          groupFrom = to;
        } else if (groupFrom < from && to - groupFrom > target) {
          out.add(new SplitPlan.Segment(s, groupFrom, from));
          groupFrom = from;
        }
      }
      if (groupFrom < n) {
        out.add(new SplitPlan.Segment(s, groupFrom, n));
      }
    }
    return out;
  }

  /** Whether some split of {@code source} aligns its blocks ({@link SplitDataset#blockAlignment} above 1). */
  static boolean aligned(SplitDataset<?> source, List<Split> splits) {
    return maxAlignment(source, splits) > 1;
  }

  /** The largest block alignment of the splits of {@code source} with rows ({@link SplitDataset#blockAlignment}), 1 for none. */
  static long maxAlignment(SplitDataset<?> source, List<Split> splits) {
    long max = 1;
    for (Split s : splits) {
      if (s.hasKnownRowCount() && s.rowCount() > 0) {
        max = Math.max(max, alignment(source, s));
      }
    }
    return max;
  }

  /** The block alignment of {@code split} of {@code source} ({@link SplitDataset#blockAlignment}), checked. */
  private static long alignment(SplitDataset<?> source, Split split) {
    long a = source.blockAlignment(split);
    if (a < 1) {
      throw new IllegalStateException(source + " gave block alignment " + a + " for " + split
          + ": expected a row count of at least 1");
    }
    return a;
  }

  /** Rows {@code [from, to)} of {@code s} cut into equal blocks of at most {@code target} rows. */
  private static void cut(Split s, long from, long to, long target, List<SplitPlan.Segment> out) {
    long n = to - from;
    long parts = n / target + (n % target == 0 ? 0 : 1);
    for (long i = 0; i < parts; i++) {
      out.add(new SplitPlan.Segment(s, from + scaled(n, i, parts), from + scaled(n, i + 1, parts)));
    }
  }

  /** {@code n * i / parts} without overflow ({@code i <= parts}). */
  private static long scaled(long n, long i, long parts) {
    long q = n / parts;
    long r = n % parts;
    if (Math.multiplyHigh(r, i) != 0 || r * i < 0) {
      return java.math.BigInteger.valueOf(n).multiply(java.math.BigInteger.valueOf(i))
          .divide(java.math.BigInteger.valueOf(parts)).longValueExact();
    }
    return q * i + r * i / parts;
  }

  /** Fails naming the source when its block starts are not ascending rows of the split from 0. */
  private static void check(SplitDataset<?> source, Split s, long[] starts) {
    boolean ok = starts.length > 0 && starts[0] == 0;
    for (int i = 1; ok && i < starts.length; i++) {
      ok = starts[i] > starts[i - 1] && starts[i] < s.rowCount();
    }
    if (!ok) {
      throw new IllegalStateException(source + " gave block starts " + Arrays.toString(starts) + " for " + s
          + ": expected ascending rows of the split, the first 0");
    }
  }

  /** The epoch's block sequence: a seeded Fisher-Yates permutation of (seed, epoch), the same on every rank. */
  static List<SplitPlan.Segment> shuffled(List<SplitPlan.Segment> blocks, long seed, long epoch) {
    List<SplitPlan.Segment> out = new ArrayList<>(blocks);
    shuffle(out, new SplittableRandom(Mix.seed(seed, epoch, SALT)));
    return out;
  }

  /** A Fisher-Yates shuffle of {@code list} in place, drawing from {@code random}. */
  static <T> void shuffle(List<T> list, SplittableRandom random) {
    for (int i = list.size() - 1; i > 0; i--) {
      java.util.Collections.swap(list, i, random.nextInt(i + 1));
    }
  }

  /**
   * A rank's whole segments (aligned blocks, never cut: a piece of one would decode its unit again)
   * arranged so that runs of them balance around the middle of the rank's rows: the segments in
   * source order are paired first with last, second with second to last, and so on (the middle
   * one alone when their number is odd); the pairs follow in a seeded random order, the two
   * segments of a pair next to each other in a random order. Where the segments are of one size,
   * which aligned blocks nearly all are, a pair's rows have the mean position of the rank's rows, so
   * every window of whole pairs is a random draw from all over the dataset centred on its middle:
   * a window shuffle of a few such windows orders the rows uncorrelated with their index, which a
   * random order of a few large blocks does not. The same segments, reordered.
   *
   * @param splits the source's splits in source order (their positions order the segments)
   * @param key the rank's random stream: a function of (seed, epoch, rank)
   */
  static List<SplitPlan.Segment> pair(List<SplitPlan.Segment> segments, List<Split> splits, long key) {
    if (segments.size() < 3) {
      return segments;
    }
    List<SplitPlan.Segment> sorted = inSourceOrder(segments, splits);
    int b = sorted.size();
    List<List<SplitPlan.Segment>> pairs = new ArrayList<>(b / 2 + 1);
    for (int i = 0; i < b / 2; i++) {
      pairs.add(List.of(sorted.get(i), sorted.get(b - 1 - i)));
    }
    if (b % 2 == 1) {
      pairs.add(List.of(sorted.get(b / 2)));
    }
    SplittableRandom random = new SplittableRandom(Mix.seed(key, b, PAIR_SALT));
    shuffle(pairs, random);
    List<SplitPlan.Segment> out = new ArrayList<>(b);
    for (List<SplitPlan.Segment> p : pairs) {
      boolean lowFirst = p.size() == 1 || random.nextBoolean();
      out.add(p.get(lowFirst ? 0 : 1));
      if (p.size() == 2) {
        out.add(p.get(lowFirst ? 1 : 0));
      }
    }
    return out;
  }

  /** {@code segments} sorted by the position of their split in {@code splits}, then by first row. */
  private static List<SplitPlan.Segment> inSourceOrder(List<SplitPlan.Segment> segments, List<Split> splits) {
    Map<Split, Integer> position = new IdentityHashMap<>();
    for (int i = 0; i < splits.size(); i++) {
      position.put(splits.get(i), i);
    }
    List<SplitPlan.Segment> sorted = new ArrayList<>(segments);
    sorted.sort(Comparator.<SplitPlan.Segment>comparingInt(s -> position.getOrDefault(s.split(), -1))
        .thenComparingLong(SplitPlan.Segment::fromRow));
    return sorted;
  }

  /**
   * A rank's segments arranged so that every window of {@code windowRows} rows draws from across
   * the dataset and no window leans towards its start or its end.
   *
   * <p>The rank's rows in source order are numbered {@code 0 .. n-1}; row range {@code [a, b)} of
   * that order is paired with its mirror {@code [n-b, n-a)} (the cuts are every segment boundary
   * and its mirror, so each half lies in one segment), and a pair's rows have the mean position
   * {@code (n-1)/2} exactly. The pairs, in a seeded random order, fill the windows in turn (a pair
   * that does not fit is cut into two mirrored pairs), the two halves of a pair next to each other
   * in a random order. Every window is then a random set of pieces from all over the dataset whose
   * mean position is the middle of the dataset, and so is every run of a few pairs within it (a
   * buffer shuffle, which mixes a sliding range rather than whole windows, keeps the balance):
   * output order and row index are uncorrelated up to the randomness within the windows, whatever
   * the window size. The same rows, reordered. Unchanged
   * when the rank's rows fit one window, or when its segments are too large for a window to hold
   * {@value #BLOCKS_PER_WINDOW} of them (the block order is then the only order).
   *
   * @param splits the source's splits in source order (their positions order the segments)
   * @param key the rank's random stream: a function of (seed, epoch, rank)
   */
  static List<SplitPlan.Segment> spread(List<SplitPlan.Segment> segments, List<Split> splits, long windowRows,
      long key) {
    long n = 0;
    for (SplitPlan.Segment s : segments) {
      n += s.rows();
    }
    if (windowRows <= 0 || n <= windowRows || segments.size() < 2
        || n / segments.size() > windowRows / BLOCKS_PER_WINDOW) {
      return segments;
    }
    List<SplitPlan.Segment> sorted = inSourceOrder(segments, splits);
    // the cuts of the lower half: every segment boundary and every mirrored one
    long half = n / 2;
    java.util.TreeSet<Long> cuts = new java.util.TreeSet<>();
    cuts.add(0L);
    cuts.add(half);
    long at = 0;
    for (SplitPlan.Segment s : sorted) {
      at += s.rows();
      if (at < half) {
        cuts.add(at);
      } else if (n - at < half) {
        cuts.add(n - at);
      }
    }
    List<long[]> pairs = new ArrayList<>(); // {frontFrom, frontTo, backFrom, backTo} in rank-order positions
    Long previous = null;
    for (long c : cuts) {
      if (previous != null) {
        pairs.add(new long[] {previous, c, n - c, n - previous});
      }
      previous = c;
    }
    if (n % 2 == 1) {
      pairs.add(new long[] {half, half + 1, half + 1, half + 1}); // the middle row
    }
    SplittableRandom random = new SplittableRandom(Mix.seed(key, windowRows, SPREAD_SALT));
    shuffle(pairs, random);
    List<SplitPlan.Segment> out = new ArrayList<>(segments.size() * 3);
    List<SplitPlan.Segment> window = new ArrayList<>();
    long room = Math.min(windowRows, n);
    long placed = 0;
    for (int p = 0; p < pairs.size(); ) {
      long[] pair = pairs.get(p);
      long front = pair[1] - pair[0];
      long back = pair[3] - pair[2];
      long takeFront;
      long takeBack;
      if (front + back <= room) {
        takeFront = front;
        takeBack = back;
        p++;
      } else { // cut into two mirrored pairs: the rows nearest the middle stay for the next window
        takeBack = Math.min(back, room / 2);
        takeFront = Math.min(front, room - takeBack);
        takeBack = room - takeFront;
      }
      List<SplitPlan.Segment> low = SplitPlan.range(sorted, pair[0], pair[0] + takeFront);
      List<SplitPlan.Segment> high = SplitPlan.range(sorted, pair[3] - takeBack, pair[3]);
      boolean lowFirst = random.nextBoolean();
      window.addAll(lowFirst ? low : high);
      window.addAll(lowFirst ? high : low);
      pair[0] += takeFront;
      pair[3] -= takeBack;
      room -= takeFront + takeBack;
      placed += takeFront + takeBack;
      if (room == 0 || placed == n) {
        out.addAll(window);
        window.clear();
        room = Math.min(windowRows, n - placed);
      }
    }
    return out;
  }
}
