package dev.sluice.operators.internal;

import dev.sluice.operators.EqualLength;

/**
 * A lazily computed sequence of source indices: {@link #length()} positions, each mapped to a source
 * index in O(1) time and memory. The index plan composes these: a shuffle permutes positions, a
 * shard takes a stride, take and skip cut a range.
 *
 * <p>Batches are filled with {@link #fill}: the positions are written into the array and each layer
 * maps the whole array in place ({@link #mapInPlace}), so every layer runs one tight, monomorphic
 * loop (the Feistel rounds of many indices overlap in the CPU) instead of one virtual call chain per
 * index.
 */
public abstract class IndexSequence {
  /** Number of positions. */
  public abstract long length();

  /** Replaces each of {@code buf[0..count)}, a position of this sequence, by its source index. */
  protected abstract void mapInPlace(long[] buf, int count);

  /** The source index at {@code position}, in {@code [0, length())}. */
  public long at(long position) {
    long[] one = {position};
    mapInPlace(one, 1);
    return one[0];
  }

  /** Fills {@code out[0..count)} with the indices at positions {@code from ..}. */
  public void fill(long from, long[] out, int count) {
    for (int i = 0; i < count; i++) {
      out[i] = from + i;
    }
    mapInPlace(out, count);
  }

  /** {@code 0 .. n-1}. */
  public static IndexSequence identity(long n) {
    return new IndexSequence() {
      @Override
      public long length() {
        return n;
      }

      @Override
      protected void mapInPlace(long[] buf, int count) {
        // positions are the indices
      }

      @Override
      public long at(long position) {
        return position;
      }
    };
  }

  /** The given source indices, in order (the array is not copied: do not change it while the sequence is in use). */
  public static IndexSequence of(long[] indices) {
    return new IndexSequence() {
      @Override
      public long length() {
        return indices.length;
      }

      @Override
      protected void mapInPlace(long[] buf, int count) {
        for (int i = 0; i < count; i++) {
          buf[i] = indices[(int) buf[i]];
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
      protected void mapInPlace(long[] buf, int count) {
        perm.applyInPlace(buf, count);
        base.mapInPlace(buf, count);
      }
    };
  }

  /** The positions {@code p} with {@code p mod numShards == index}, under {@code policy}. */
  public IndexSequence sharded(int numShards, int index, EqualLength policy) {
    IndexSequence base = this;
    long n = base.length();
    long length = policy.count(n, numShards, index);
    if (numShards == 1) {
      return length == n ? this : taken(length);
    }
    return new IndexSequence() {
      @Override
      public long length() {
        return length;
      }

      @Override
      protected void mapInPlace(long[] buf, int count) {
        for (int i = 0; i < count; i++) {
          long p = buf[i] * numShards + index;
          buf[i] = p < n ? p : p % n; // only PAD reaches p >= n: wrap around as DistributedSampler
        }
        base.mapInPlace(buf, count);
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
      protected void mapInPlace(long[] buf, int count) {
        for (int i = 0; i < count; i++) {
          buf[i] += skip;
        }
        base.mapInPlace(buf, count);
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
      protected void mapInPlace(long[] buf, int count) {
        base.mapInPlace(buf, count);
      }
    };
  }
}
