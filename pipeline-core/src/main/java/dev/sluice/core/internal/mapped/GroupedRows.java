package dev.sluice.core.internal.mapped;

import java.util.Arrays;

/**
 * The positions of a batch's rows grouped by the source that holds them (a shard, a record batch):
 * a stable counting sort, so a gather copies each source's rows with one tight loop. Source
 * {@code k}'s positions are {@code positions[from[k] .. from[k + 1])}, in batch order.
 */
public final class GroupedRows {
  /** The batch positions, grouped by source. */
  public final int[] positions;
  /** Where each source's positions start in {@link #positions}; {@code sources + 1} entries. */
  public final int[] from;
  /** The sources that hold rows of the batch, ascending. */
  public final int[] sources;

  /**
   * Groups positions {@code 0 .. source.length - 1} by {@code source[i]}.
   *
   * @param source the source of each position, in {@code [0, sourceCount)}
   */
  public GroupedRows(int[] source, int sourceCount) {
    int n = source.length;
    from = new int[sourceCount + 1];
    for (int s : source) {
      from[s + 1]++;
    }
    int used = 0;
    for (int k = 0; k < sourceCount; k++) {
      if (from[k + 1] > 0) {
        used++;
      }
      from[k + 1] += from[k];
    }
    sources = new int[used];
    for (int k = 0, u = 0; k < sourceCount; k++) {
      if (from[k + 1] > from[k]) {
        sources[u++] = k;
      }
    }
    positions = new int[n];
    int[] next = Arrays.copyOf(from, sourceCount);
    for (int i = 0; i < n; i++) {
      positions[next[source[i]]++] = i;
    }
  }
}
