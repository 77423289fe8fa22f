package dev.sluice.operators;

import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * An in-memory split source for tests: split {@code i} holds {@code sizes[i]} consecutive global
 * indices; row counts known or hidden; records every read.
 */
class MemorySplits implements SplitDataset<Example> {
  final List<Split> splits = new ArrayList<>();
  final List<Long> offsets = new ArrayList<>();
  final List<String> reads = Collections.synchronizedList(new ArrayList<>());

  MemorySplits(boolean knownCounts, long... sizes) {
    long base = 0;
    for (int i = 0; i < sizes.length; i++) {
      splits.add(new Split("s" + i, knownCounts ? sizes[i] : Split.UNKNOWN_ROWS));
      offsets.add(base);
      base += sizes[i];
    }
    this.sizes = sizes.clone();
  }

  final long[] sizes;

  long size() {
    long n = 0;
    for (long s : sizes) {
      n += s;
    }
    return n;
  }

  @Override
  public List<Split> splits() {
    return splits;
  }

  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    int i = splits.indexOf(split);
    long base = offsets.get(i);
    long end = Math.min(toRow, sizes[i]);
    return Flux.defer(() -> {
      reads.add(split.id() + "[" + fromRow + "," + (toRow == Long.MAX_VALUE ? "end" : toRow) + ")");
      return Flux.range(0, (int) Math.max(0, end - fromRow))
          .map(r -> Example.of(base + fromRow + r, "value", Tensor.scalar(base + fromRow + r)));
    });
  }

  @Override
  public Flux<Example> flux(PipelineContext context) {
    return SplitDataset.super.flux(context);
  }

  @Override
  public String toString() {
    return "memory-splits" + java.util.Arrays.toString(sizes);
  }
}
