package dev.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.CloseRounds;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.io.parquet.ParquetFormat;
import dev.sluice.io.parquet.ParquetOptions;
import dev.sluice.operators.Pipeline;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Hooks;

/**
 * A Parquet split source through a pipeline: closing the iterator while row groups are being
 * decoded leaves nothing outstanding at once, the decode buffers (which the source allocates from
 * its own memory manager, not from the pass's) included, and the cancel drops no error.
 */
@ExtendWith(NoLeaks.class)
class ParquetIterateCloseTest {
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(5);

  @TempDir Path tmp;
  private Path file;
  private final List<ParquetDataset> opened = new ArrayList<>();

  @BeforeEach
  void write() {
    file = tmp.resolve("d.parquet");
    new ParquetFormat().write(Datasets.synthetic(20_000, 16, 3), file, WriteOptions.defaults().withRowGroupBytes(64_000));
  }

  private final Queue<Throwable> dropped = new ConcurrentLinkedQueue<>();

  @BeforeEach
  void watchDroppedErrors() {
    Hooks.onErrorDropped(dropped::add);
  }

  @AfterEach
  void closeSources() {
    Hooks.resetOnErrorDropped();
    opened.forEach(ParquetDataset::close);
    assertTrue(dropped.isEmpty(), () -> "errors nobody could receive (Reactor drops and logs them): " + dropped);
  }

  /** The file, decoding two row groups at once into {@code memory}, the pipeline's memory too. */
  private Pipeline<Example> source(MemoryManager memory) {
    ParquetDataset parquet = Parquet.open(file, ParquetOptions.builder().decodeParallelism(2).memory(memory).build());
    opened.add(parquet);
    assertTrue(parquet.splits().size() >= 8, "several row groups: " + parquet.splits().size());
    return Pipeline.from(parquet).withOptions(Options.defaults().toBuilder().memory(memory).build());
  }

  @Test
  void closeLeavesNothingBehindWhileTheColumnarPathDecodes() {
    // even rounds: the window shuffle; odd rounds: row ranges re-cut into batches in file order
    CloseRounds.closeRightAway(150, 31, (round, memory) -> (round % 2 == 0 ? source(memory).shuffle(500)
        : source(memory)).batch(64).prefetch(4).iterate(CTX.withEpoch(round)));
  }

  @Test
  void closeLeavesNothingBehindWithParallelMapsOverRowsAndBatches() {
    CloseRounds.closeRightAway(150, 32, (round, memory) -> source(memory).map(e -> e, 2, true).batch(64)
        .map(b -> b, 2, true).prefetch(4).iterate(CTX.withEpoch(round)));
  }
}
