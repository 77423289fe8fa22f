package dev.sluice.examples.cache;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Tensor;
import dev.sluice.io.Formats;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.Pipeline;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/** The pipelines the multi-process cache tests run, in the test JVM and in child JVMs alike. */
final class CacheRuns {
  private CacheRuns() {}

  /**
   * {@code source [-> map] [-> cache] -> shuffle -> shard(world, rank) -> batch(64)} over the dataset
   * in {@code path}; with {@code mapMicros > 0} a map that spins that long per element and calls
   * {@code progress} with the number of elements it mapped so far.
   *
   * @param root the cache's directory, or null for no cache
   */
  static Pipeline<Batch> pipeline(Path path, Path root, int world, int rank, int mapMicros, int blockRows,
      CacheMonitor monitor, LongConsumer progress) {
    Dataset<Example> source = Formats.detect(path).open(path);
    Pipeline<Example> p = Pipeline.from(source);
    if (mapMicros > 0) {
      AtomicLong mapped = new AtomicLong();
      p = p.map(e -> {
        long end = System.nanoTime() + mapMicros * 1000L;
        while (System.nanoTime() < end) {
          Thread.onSpinWait();
        }
        progress.accept(mapped.incrementAndGet());
        return e;
      });
    }
    if (root != null) {
      CacheSpec spec = CacheSpec.named("spin-" + mapMicros).directory(root).blockRows(blockRows);
      p = p.cache(monitor == null ? spec : spec.monitor(monitor));
    }
    return p.shuffle().shard(world, rank).batch(64);
  }

  /** SHA-256 over every row of every batch of the pass: its index, then each field's bytes in order. */
  static String digest(Pipeline<Batch> p, PipelineContext ctx) throws Exception {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    ByteBuffer index = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    for (Batch b : p.flux(ctx).toIterable(1)) {
      try (b) {
        for (int i = 0; i < b.size(); i++) {
          Example e = b.copyRow(i);
          md.update(index.putLong(0, e.index()).array());
          for (String name : e.names()) {
            Tensor t = e.tensor(name);
            md.update(t.toByteArray());
          }
        }
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }
}
