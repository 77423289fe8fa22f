package dev.sluice.io.shards;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.FatalErrorException;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.WriteOptions;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** A JVM error while the shard set writer's workers read the source ends the write with an exception, never a hang. */
@ExtendWith(NoLeaks.class)
class ShardWriterFatalErrorTest {
  @TempDir
  Path dir;

  @Test
  void aJvmErrorOnAWriterWorkerFailsTheWrite() {
    for (int workers : new int[] {1, 3}) {
      OutOfMemoryError injected = new OutOfMemoryError("injected");
      RandomAccessDataset<Example> source = new Failing(Datasets.synthetic(400, 4, 1), 250, injected);
      Path out = dir.resolve("w" + workers);
      FatalErrorException e = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> assertThrows(
          FatalErrorException.class,
          () -> Shards.write(source, out, WriteOptions.defaults().withNumShards(4).withWorkers(workers))));
      assertSame(injected, e.getCause());
    }
  }

  /** {@code base}, throwing {@code error} when row {@code bad} is read. */
  private record Failing(RandomAccessDataset<Example> base, long bad, Error error)
      implements RandomAccessDataset<Example>, HasSchema {
    @Override
    public Schema schema() {
      return ((HasSchema) base).schema();
    }

    @Override
    public long size() {
      return base.size();
    }

    @Override
    public Example get(long index) {
      if (index == bad) {
        throw error;
      }
      return base.get(index);
    }

    @Override
    public void gather(long[] indices, int from, int count, BatchBuilder target) {
      for (int i = from; i < from + count; i++) {
        if (indices[i] == bad) {
          throw error;
        }
      }
      base.gather(indices, from, count, target);
    }
  }
}
