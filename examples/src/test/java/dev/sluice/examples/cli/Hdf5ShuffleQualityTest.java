package dev.sluice.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.core.testing.Python;
import dev.sluice.io.hdf5.Hdf5;
import dev.sluice.io.internal.Projection;
import dev.sluice.operators.Pipeline;
import dev.sluice.operators.ShuffleQuality;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;

/**
 * A chunked HDF5 file (written by h5py: 20,000 rows in gzip chunks of 4,096 rows) shuffled at the
 * default settings: every row once per epoch, output order uncorrelated with row index, each chunk
 * decoded once per epoch, also through a projection of its fields, and no memory left outstanding.
 */
@ExtendWith(NoLeaks.class)
class Hdf5ShuffleQualityTest {
  @TempDir static Path dir;

  static final int ROWS = 20_000;
  static final int CHUNK = 4_096;

  static final String SCRIPT = """
      import os, sys
      import numpy as np
      import h5py
      out = sys.argv[1]
      M = 20000
      x = np.tile(np.arange(M, dtype='<f4')[:, None], (1, 16))
      label = np.arange(M, dtype='<i8')
      with h5py.File(os.path.join(out, 'chunked.h5'), 'w') as f:
          f.create_dataset('x', data=x, chunks=(4096, 16), compression='gzip', shuffle=True)
          f.create_dataset('label', data=label, chunks=(4096,), compression='gzip', shuffle=True)
      print('ok')
      """;

  @BeforeAll
  static void writeWithH5py() throws Exception {
    H5py.require("the HDF5 shuffle quality");
    Python.run(SCRIPT, dir.toString());
  }

  /**
   * A columnar split source that counts, per chunk of {@value #CHUNK} rows, the reads that touch it
   * (each read decodes every chunk it touches once), and otherwise is the source it wraps, its
   * block starts and block alignment included.
   */
  static final class CountingChunks implements BatchSplitDataset<Example> {
    final BatchSplitDataset<Example> source;
    final Map<Long, Integer> decodes = new ConcurrentHashMap<>();
    private final Map<Split, Long> offsets = new HashMap<>();

    CountingChunks(BatchSplitDataset<Example> source) {
      this.source = source;
      long base = 0;
      for (Split s : source.splits()) {
        offsets.put(s, base);
        base += s.rowCount();
      }
    }

    @Override
    public Schema schema() {
      return source.schema();
    }

    @Override
    public List<Split> splits() {
      return source.splits();
    }

    @Override
    public long[] blockStarts(Split split) {
      return source.blockStarts(split);
    }

    @Override
    public long blockAlignment(Split split) {
      return source.blockAlignment(split);
    }

    @Override
    public Flux<Example> read(Split split, long fromRow, long toRow) {
      return Flux.defer(() -> {
        count(split, fromRow, toRow);
        return source.read(split, fromRow, toRow);
      });
    }

    @Override
    public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
      return readBatches(split, fromRow, toRow, batchSize, batchSize);
    }

    @Override
    public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
      return Flux.defer(() -> {
        count(split, fromRow, toRow);
        return source.readBatches(split, fromRow, toRow, firstBatchSize, batchSize);
      });
    }

    private void count(Split split, long fromRow, long toRow) {
      long base = offsets.get(split);
      long end = base + Math.min(toRow, split.rowCount());
      for (long c = (base + fromRow) / CHUNK; c * CHUNK < end; c++) {
        decodes.merge(c, 1, Integer::sum);
      }
    }
  }

  /** Runs 3 epochs of {@code p}, checking each as it goes; returns the quality of the epochs. */
  private static ShuffleQuality epochs(Pipeline<Batch> p, CountingChunks counted, PipelineContext ctx, int world,
      boolean checkLabels) {
    ShuffleQuality.Builder quality = ShuffleQuality.builder();
    for (int epoch = 0; epoch < 3; epoch++) {
      counted.decodes.clear();
      List<Long> rows = new ArrayList<>();
      p.flux(ctx.withEpoch(epoch)).doOnNext(b -> {
        try (b) {
          for (int i = 0; i < b.size(); i++) {
            rows.add(b.index(i));
            if (checkLabels) {
              assertEquals(b.index(i), b.column("label").row(i).data().order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(0), "row " + b.index(i));
            }
            assertEquals((float) b.index(i), b.column("x").row(i).data().order(java.nio.ByteOrder.LITTLE_ENDIAN).getFloat(15 * Float.BYTES), "row " + b.index(i));
          }
        }
      }).blockLast();
      String what = "world " + world + ", epoch " + epoch;
      Set<Long> distinct = new HashSet<>(rows);
      assertEquals(rows.size(), distinct.size(), what + ": every row once");
      assertEquals((ROWS + world - 1) / world, rows.size(), what);
      counted.decodes.forEach((chunk, reads) -> assertEquals(1, reads, what + ": chunk " + chunk + " decoded once"));
      if (world == 1) {
        assertEquals((ROWS + CHUNK - 1) / CHUNK, counted.decodes.size(), what + ": every chunk decoded");
      }
      rows.forEach(quality::row);
      quality.endEpoch();
    }
    return quality.build();
  }

  @Test
  void atTheDefaultSettingsEveryRowComesOnceWellMixedAndEachChunkIsDecodedOnce() throws Exception {
    try (var ds = Hdf5.open(dir.resolve("chunked.h5"))) {
      CountingChunks counted = new CountingChunks((BatchSplitDataset<Example>) ds);
      PipelineContext ctx = PipelineContext.defaults().withSeed(1);
      for (int world : new int[] {1, 4}) {
        Pipeline<Batch> p = Pipeline.from(counted).shuffle().shard(world, 1 % world).batch(64);
        ShuffleQuality q = epochs(p, counted, ctx, world, true);
        assertTrue(q.maxAbsSpearman().getAsDouble() <= 0.05, "world " + world + ": " + q);
      }
      assertEquals(0, MemoryManager.shared().outstandingBytes());
    }
  }

  @Test
  void aProjectionKeepsTheChunkAlignedBlocks() throws Exception {
    try (var ds = Hdf5.open(dir.resolve("chunked.h5"))) {
      @SuppressWarnings("unchecked")
      BatchSplitDataset<Example> projected = (BatchSplitDataset<Example>) Projection.of(ds, List.of("x"));
      assertEquals(((BatchSplitDataset<?>) ds).blockAlignment(((BatchSplitDataset<?>) ds).splits().get(0)),
          projected.blockAlignment(projected.splits().get(0)));
      CountingChunks counted = new CountingChunks(projected);
      Pipeline<Batch> p = Pipeline.from(counted).shuffle().batch(64);
      ShuffleQuality q = epochs(p, counted, PipelineContext.defaults().withSeed(2), 1, false);
      assertTrue(q.maxAbsSpearman().getAsDouble() <= 0.05, q.toString());
      assertEquals(0, MemoryManager.shared().outstandingBytes());
    }
  }
}
