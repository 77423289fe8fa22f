package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * How well a shuffle mixes, measured from the source row indices one rank received, epoch by
 * epoch, in delivery order. Two figures per epoch:
 *
 * <ul>
 *   <li><b>Jaccard similarity with the previous epoch</b>: {@code |A ∩ B| / |A ∪ B|} of the two
 *       epochs' sets of distinct rows. A rank that reads a fresh random {@code 1/k} of the dataset
 *       every epoch scores about {@code 1 / (2k - 1)} ({@link #randomSubsetJaccard(double)}); 1 means
 *       it reads the same rows every epoch, 0 that it never reads a row twice in a row. Absent for
 *       the first epoch.
 *   <li><b>Spearman rank correlation</b> between the output position and the row index within the
 *       epoch: about 0 (within a few {@code 1/√rows}) for a uniform shuffle, 1 when the rows come in
 *       file order, -1 in reverse order. A row delivered more than once (the padding of
 *       {@link EqualLength#PAD}) takes the average rank of its copies. Absent when the epoch holds
 *       fewer than two distinct rows.
 * </ul>
 *
 * <p>The summary is the worst epoch of each: {@link #maxJaccard()} and {@link #maxAbsSpearman()}.
 * The figures depend only on the indices, so measuring any pipeline (index, columnar or element
 * path) of the same (seed, rank, world) gives the same report.
 *
 * <p>Cost: O(n log n) time and O(n) memory for an epoch of n rows (a sorted copy of the epoch and
 * the previous epoch's distinct rows); earlier epochs are not kept.
 *
 * <pre>{@code
 * ShuffleQuality q = ShuffleQuality.measure(pipeline, ctx.withRank(0, 4), 3);
 * q.maxJaccard();       // about 1/7 for a fresh random quarter of the rows every epoch
 * q.maxAbsSpearman();   // about 0 for a well-mixed order
 * }</pre>
 *
 * <p>Instances are immutable.
 */
public final class ShuffleQuality {
  private final List<Epoch> epochs;

  private ShuffleQuality(List<Epoch> epochs) {
    this.epochs = List.copyOf(epochs);
  }

  /**
   * The figures of one epoch.
   *
   * @param epoch the epoch's number
   * @param rows rows delivered, repeats included
   * @param distinctRows distinct row indices among them
   * @param spearman Spearman's rank correlation of (output position, row index), in [-1, 1]; absent
   *     when fewer than two distinct rows were delivered
   * @param jaccard Jaccard similarity, in [0, 1], of this epoch's and the previous epoch's sets of
   *     distinct rows; absent for the first epoch, and when both epochs are empty
   */
  public record Epoch(long epoch, long rows, long distinctRows, OptionalDouble spearman, OptionalDouble jaccard) {
    /**
     * Checks the figures.
     *
     * @throws IllegalArgumentException when a count is negative, more rows are distinct than
     *     delivered, or a figure is out of range
     */
    public Epoch {
      Objects.requireNonNull(spearman, "spearman");
      Objects.requireNonNull(jaccard, "jaccard");
      if (rows < 0 || distinctRows < 0 || distinctRows > rows) {
        throw new IllegalArgumentException("0 <= distinctRows <= rows required but they were " + distinctRows
            + " and " + rows);
      }
      if (spearman.isPresent() && !(Math.abs(spearman.getAsDouble()) <= 1)) {
        throw new IllegalArgumentException("spearman must be in [-1, 1] but was " + spearman.getAsDouble());
      }
      if (jaccard.isPresent() && !(jaccard.getAsDouble() >= 0 && jaccard.getAsDouble() <= 1)) {
        throw new IllegalArgumentException("jaccard must be in [0, 1] but was " + jaccard.getAsDouble());
      }
    }
  }

  /**
   * The report of {@code epochs}, numbered from 0, each the row indices of one epoch in output
   * order. The arrays are read, not kept or modified.
   */
  public static ShuffleQuality of(List<long[]> epochs) {
    Objects.requireNonNull(epochs, "epochs");
    Builder b = builder();
    for (long[] e : epochs) {
      b.epoch(e);
    }
    return b.build();
  }

  /** A builder whose first epoch is numbered 0. */
  public static Builder builder() {
    return builder(0);
  }

  /**
   * A builder whose first epoch is numbered {@code firstEpoch}.
   *
   * @param firstEpoch the number of the first epoch, &ge; 0
   */
  public static Builder builder(long firstEpoch) {
    if (firstEpoch < 0) {
      throw new IllegalArgumentException("firstEpoch >= 0 required but it was " + firstEpoch);
    }
    return new Builder(firstEpoch);
  }

  /**
   * Runs {@code count} epochs of {@code pipeline} for {@code context} (epochs {@code context.epoch()
   * … + count - 1}, for the context's rank and world size) and measures the row indices it
   * delivers: {@link Batch#index(int)} of each row of a batch, {@link Example#index()} of an
   * example. Blocks until the last epoch completes; closes every batch.
   *
   * @param count epochs, &ge; 0 (two or more for a Jaccard similarity)
   * @throws IllegalArgumentException when an element is neither a {@code Batch} nor an {@code Example}
   */
  public static ShuffleQuality measure(Pipeline<?> pipeline, PipelineContext context, long count) {
    Objects.requireNonNull(pipeline, "pipeline");
    Objects.requireNonNull(context, "context");
    if (count < 0) {
      throw new IllegalArgumentException("count >= 0 required but it was " + count);
    }
    Builder b = builder(context.epoch());
    for (long e = 0; e < count; e++) {
      pipeline.flux(context.withEpoch(context.epoch() + e)).doOnNext(b::element).blockLast();
      b.endEpoch();
    }
    return b.build();
  }

  /**
   * The expected Jaccard similarity of two independent uniform random subsets that each hold
   * {@code fraction} of the rows: {@code f / (2 - f)}, which is {@code 1 / (2k - 1)} for
   * {@code f = 1/k}. The figure a rank reading a fresh random part of the dataset every epoch
   * should approach.
   *
   * @param fraction the share of the dataset each epoch reads, in [0, 1]
   */
  public static double randomSubsetJaccard(double fraction) {
    if (!(fraction >= 0 && fraction <= 1)) {
      throw new IllegalArgumentException("fraction must be in [0, 1] but was " + fraction);
    }
    return fraction / (2 - fraction);
  }

  /** The epochs in the order measured. */
  public List<Epoch> epochs() {
    return epochs;
  }

  /** The largest Jaccard similarity between consecutive epochs; absent with fewer than two epochs. */
  public OptionalDouble maxJaccard() {
    return epochs.stream().map(Epoch::jaccard).filter(OptionalDouble::isPresent)
        .mapToDouble(OptionalDouble::getAsDouble).max();
  }

  /** The largest absolute Spearman correlation of any epoch; absent when no epoch has one. */
  public OptionalDouble maxAbsSpearman() {
    return epochs.stream().map(Epoch::spearman).filter(OptionalDouble::isPresent)
        .mapToDouble(s -> Math.abs(s.getAsDouble())).max();
  }

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "ShuffleQuality[%d epochs, max Jaccard %s, max |Spearman| %s]", epochs.size(),
        text(maxJaccard()), text(maxAbsSpearman()));
  }

  private static String text(OptionalDouble v) {
    return v.isPresent() ? String.format(Locale.ROOT, "%.4f", v.getAsDouble()) : "-";
  }

  /**
   * Collects epochs one at a time, row by row ({@link #row(long)}, {@link #endEpoch()}) or whole
   * ({@link #epoch(long[])}), keeping only the epoch under way and the previous epoch's distinct
   * rows. Not thread-safe: feed it from one thread at a time (a Reactor {@code doOnNext} is).
   */
  public static final class Builder {
    private final List<Epoch> done = new ArrayList<>();
    private long next;
    private long[] current = new long[1024];
    private int size;
    /** The previous epoch's distinct rows, sorted; null before the first epoch. */
    private long[] previous;

    private Builder(long firstEpoch) {
      this.next = firstEpoch;
    }

    /**
     * Appends the row {@code index} to the epoch under way.
     *
     * @throws IllegalStateException when the epoch already holds {@code Integer.MAX_VALUE - 8} rows
     */
    public Builder row(long index) {
      if (size == current.length) {
        if (size >= Integer.MAX_VALUE - 8) {
          throw new IllegalStateException("an epoch of more than " + size + " rows cannot be measured");
        }
        current = Arrays.copyOf(current, (int) Math.min(Integer.MAX_VALUE - 8, 2L * size));
      }
      current[size++] = index;
      return this;
    }

    /**
     * Appends the rows of {@code element}: each row's {@link Batch#index(int)} of a batch, which is
     * then closed, or the {@link Example#index()} of an example.
     *
     * @throws IllegalArgumentException when the element is neither
     */
    public Builder element(Object element) {
      if (element instanceof Batch batch) {
        try (batch) {
          for (int i = 0; i < batch.size(); i++) {
            row(batch.index(i));
          }
        }
      } else if (element instanceof Example example) {
        row(example.index());
      } else {
        throw new IllegalArgumentException("shuffle quality is measured from Batch or Example elements but got "
            + (element == null ? "null" : element.getClass().getName()));
      }
      return this;
    }

    /** Ends the epoch under way (an epoch without rows counts as one) and starts the next. */
    public Builder endEpoch() {
      done.add(measure(next++, current, size));
      size = 0;
      if (current.length > 1024) {
        current = new long[1024];
      }
      return this;
    }

    /** Adds a whole epoch: its row indices in output order (read, not kept or modified). */
    public Builder epoch(long[] rows) {
      Objects.requireNonNull(rows, "rows");
      if (size > 0) {
        throw new IllegalStateException("epoch " + next + " is under way with " + size + " rows: end it first");
      }
      done.add(measure(next++, rows, rows.length));
      return this;
    }

    /** The report of the epochs ended so far, after ending the epoch under way if it holds rows. */
    public ShuffleQuality build() {
      if (size > 0) {
        endEpoch();
      }
      return new ShuffleQuality(done);
    }

    private Epoch measure(long epoch, long[] rows, int n) {
      long[] sorted = Arrays.copyOf(rows, n);
      Arrays.sort(sorted);
      // compact the sorted copy to its distinct values, each with the average rank (1-based) of its copies
      double[] rank = new double[n];
      double ties = 0; // sum of t^3 - t over groups of t equal rows
      int d = 0;
      for (int start = 0; start < n; ) {
        int end = start + 1;
        while (end < n && sorted[end] == sorted[start]) {
          end++;
        }
        long t = end - start;
        ties += (double) t * t * t - t;
        sorted[d] = sorted[start];
        rank[d] = (start + end + 1) / 2.0;
        d++;
        start = end;
      }
      OptionalDouble spearman = OptionalDouble.empty();
      if (d >= 2) {
        double mean = (n + 1) / 2.0;
        double cov = 0;
        for (int i = 0; i < n; i++) {
          double ry = rank[Arrays.binarySearch(sorted, 0, d, rows[i])];
          cov += (i + 1 - mean) * (ry - mean);
        }
        double nn = (double) n * n * n - n;
        double varX = nn / 12;
        double varY = (nn - ties) / 12;
        spearman = OptionalDouble.of(Math.max(-1, Math.min(1, cov / Math.sqrt(varX * varY))));
      }
      long[] distinct = Arrays.copyOf(sorted, d);
      OptionalDouble jaccard = previous == null ? OptionalDouble.empty() : jaccard(previous, distinct);
      previous = distinct;
      return new Epoch(epoch, n, d, spearman, jaccard);
    }

    /** Jaccard similarity of two sorted arrays of distinct values; absent when both are empty. */
    private static OptionalDouble jaccard(long[] a, long[] b) {
      long both = 0;
      int i = 0;
      int j = 0;
      while (i < a.length && j < b.length) {
        if (a[i] < b[j]) {
          i++;
        } else if (a[i] > b[j]) {
          j++;
        } else {
          both++;
          i++;
          j++;
        }
      }
      long union = (long) a.length + b.length - both;
      return union == 0 ? OptionalDouble.empty() : OptionalDouble.of((double) both / union);
    }
  }
}
