package dev.sluice.operators.internal;

import dev.sluice.operators.EqualLength;

/**
 * A lazily computed sequence of source indices: {@link #length()} positions, each mapped to a source
 * index in O(1) time and memory by {@link #at(long)}. The index plan composes these: a shuffle
 * permutes positions, a shard takes a stride, take and skip cut a range.
 */
public abstract class IndexSequence {
  /** Number of positions. */
  public abstract long length();

  /** The source index at {@code position}, in {@code [0, length())}. */
  public abstract long at(long position);

  /** Fills {@code out[0..count)} with the indices at positions {@code from ..}. */
  public void fill(long from, long[] out, int count) {
    for (int i = 0; i < count; i++) {
      out[i] = at(from + i);
    }
  }

  /** {@code 0 .. n-1}. */
  public static IndexSequence identity(long n) {
    return new IndexSequence() {
      @Override
      public long length() {
        return n;
      }

      @Override
      public long at(long position) {
        return position;
      }

      @Override
      public void fill(long from, long[] out, int count) {
        for (int i = 0; i < count; i++) {
          out[i] = from + i;
        }
      }
    };
  }

  /** This sequence in the order of a keyed permutation of its positions. */
  public IndexSequence shuffled(long seed, long epoch, long salt) {
    IndexSequence base = this;
    KeyedPermutation perm = KeyedPermutation.of(base.length(), seed, epoch, salt);
    return new IndexSequence() {
      @Override
      public long length() {
        return base.length();
      }

      @Override
      public long at(long position) {
        return base.at(perm.apply(position));
      }
    };
  }

  /** The positions {@code p} with {@code p mod numShards == index}, under {@code policy}. */
  public IndexSequence sharded(int numShards, int index, EqualLength policy) {
    IndexSequence base = this;
    long n = base.length();
    long length = policy.count(n, numShards, index);
    return new IndexSequence() {
      @Override
      public long length() {
        return length;
      }

      @Override
      public long at(long position) {
        long p = position * numShards + index;
        return base.at(p < n ? p : p % n); // only PAD reaches p >= n: wrap around as DistributedSampler
      }
    };
  }

  /** Without the first {@code count} positions. */
  public IndexSequence skipped(long count) {
    IndexSequence base = this;
    long skip = Math.min(count, base.length());
    long length = base.length() - skip;
    if (skip == 0) {
      return this;
    }
    return new IndexSequence() {
      @Override
      public long length() {
        return length;
      }

      @Override
      public long at(long position) {
        return base.at(position + skip);
      }

      @Override
      public void fill(long from, long[] out, int count) {
        base.fill(from + skip, out, count);
      }
    };
  }

  /** At most the first {@code count} positions. */
  public IndexSequence taken(long count) {
    IndexSequence base = this;
    if (count >= base.length()) {
      return this;
    }
    long length = Math.max(0, count);
    return new IndexSequence() {
      @Override
      public long length() {
        return length;
      }

      @Override
      public long at(long position) {
        return base.at(position);
      }

      @Override
      public void fill(long from, long[] out, int count) {
        base.fill(from, out, count);
      }
    };
  }
}
