package dev.sluice.operators;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.BufferPool;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.testing.BatchContents;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * An in-memory split source that decodes into batches, for columnar-path tests: split {@code i}
 * holds {@code sizes[i]} consecutive global indices; every row has an int64 {@code id}, a
 * {@code float32[3]} {@code x}, a nullable string {@code s} (null every 5th row, empty every 7th)
 * and a nullable float32 {@code f} (null every 3rd row), all computed from the index. The row path
 * ({@link #read}) builds its examples directly, not from batches; every range read is recorded.
 */
class MemoryBatchSplits implements BatchSplitDataset<Example> {
  static final Schema SCHEMA = Schema.of(
      new TensorSpec("id", DType.INT64, Shape.scalar()),
      new TensorSpec("x", DType.FLOAT32, Shape.of(3)),
      new TensorSpec("s", DType.STRING, Shape.scalar(), true),
      new TensorSpec("f", DType.FLOAT32, Shape.scalar(), true));

  final List<Split> splits = new ArrayList<>();
  final long[] offsets;
  final long[] sizes;
  final List<String> reads = Collections.synchronizedList(new ArrayList<>());
  final BufferPool pool;
  final int parallelism;

  MemoryBatchSplits(long... sizes) {
    this(MemoryManager.shared(), 1, sizes);
  }

  MemoryBatchSplits(MemoryManager memory, int parallelism, long... sizes) {
    this.sizes = sizes.clone();
    this.offsets = new long[sizes.length];
    this.pool = memory.pool("test-source");
    this.parallelism = parallelism;
    long base = 0;
    for (int i = 0; i < sizes.length; i++) {
      splits.add(new Split("s" + i, sizes[i]));
      offsets[i] = base;
      base += sizes[i];
    }
  }

  long size() {
    return Arrays.stream(sizes).sum();
  }

  /** Row {@code i} as the row path delivers it. */
  static Example row(long i) {
    Example.Builder b = Example.builder(i)
        .put("id", Tensor.scalar(i))
        .put("x", Tensor.of(i * 0.5f, (float) -i, (float) (i % 13)));
    if (i % 5 == 0) {
      b.putNull("s");
    } else {
      b.put("s", Tensor.ofString(i % 7 == 0 ? "" : "row-" + i + "-" + "abcdefghij".substring(0, (int) (i % 11 % 10))));
    }
    if (i % 3 == 0) {
      b.putNull("f");
    } else {
      b.put("f", Tensor.scalar(i * 0.25f));
    }
    return b.build();
  }

  @Override
  public Schema schema() {
    return SCHEMA;
  }

  @Override
  public List<Split> splits() {
    return splits;
  }

  @Override
  public int decodeParallelism() {
    return parallelism;
  }

  private long base(Split split) {
    int i = splits.indexOf(split);
    if (i < 0) {
      throw new IllegalArgumentException("not a split: " + split);
    }
    return offsets[i];
  }

  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    long base = base(split);
    long end = Math.min(toRow, split.rowCount());
    return Flux.defer(() -> {
      reads.add(split.id() + "[" + fromRow + "," + end + ")");
      return Flux.range(0, (int) Math.max(0, end - fromRow)).map(r -> row(base + fromRow + r));
    });
  }

  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    return readBatches(split, fromRow, toRow, batchSize, batchSize);
  }

  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    long base = base(split);
    long end = Math.min(toRow, split.rowCount());
    return Flux.defer(() -> {
      reads.add(split.id() + "[" + fromRow + "," + end + ")");
      long[] next = {fromRow};
      return Flux.<Batch>generate(sink -> {
        long from = next[0];
        if (from >= end) {
          sink.complete();
          return;
        }
        int n = (int) Math.min(from == fromRow ? firstBatchSize : batchSize, end - from);
        try (BatchBuilder builder = BatchBuilder.create(SCHEMA, n, pool)) {
          for (int r = 0; r < n; r++) {
            builder.append(row(base + from + r));
          }
          next[0] = from + n;
          sink.next(builder.build());
        }
      }).doOnDiscard(Batch.class, Batch::close);
    });
  }

  /** The same rows without the capability: a plain split source (the element path). */
  SplitDataset<Example> rowsOnly() {
    return BatchContents.rowsOnly(this);
  }

  @Override
  public Flux<Example> flux(PipelineContext context) {
    return BatchSplitDataset.super.flux(context);
  }

  @Override
  public String toString() {
    return "memory-batch-splits" + Arrays.toString(sizes);
  }
}
