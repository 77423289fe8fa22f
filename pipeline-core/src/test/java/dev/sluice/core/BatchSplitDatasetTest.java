package dev.sluice.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** The batch-size check every readBatches source shares, and the default two-part read that uses it. */
class BatchSplitDatasetTest {

  @Test
  void checkBatchSizesNamesTheParameterAndItsValue() {
    IllegalArgumentException batch = assertThrows(IllegalArgumentException.class,
        () -> BatchSplitDataset.checkBatchSizes(4, 0));
    assertEquals("batchSize > 0 required but it was 0", batch.getMessage());
    IllegalArgumentException first = assertThrows(IllegalArgumentException.class,
        () -> BatchSplitDataset.checkBatchSizes(-1, 4));
    assertEquals("firstBatchSize > 0 required but it was -1", first.getMessage());
    BatchSplitDataset.checkBatchSizes(1, 1);
  }

  @Test
  void theDefaultFirstBatchVariantRejectsABadBatchSizeAtAssembly() {
    Ranges source = new Ranges();
    Split split = source.splits().get(0);
    assertThrows(IllegalArgumentException.class, () -> source.readBatches(split, 0, 10, 3, 0));
    assertEquals(List.of(), source.asked, "nothing is read before the arguments are checked");
  }

  /** A source that records the ranges it is asked for and delivers no batch. */
  private static final class Ranges implements BatchSplitDataset<Example> {
    final List<String> asked = new ArrayList<>();

    @Override
    public Schema schema() {
      return Schema.of(new TensorSpec("x", DType.INT64, Shape.scalar()));
    }

    @Override
    public List<Split> splits() {
      return List.of(new Split("s0", 10));
    }

    @Override
    public Flux<Example> read(Split split, long fromRow, long toRow) {
      return Flux.empty();
    }

    @Override
    public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
      asked.add(fromRow + ".." + toRow + "/" + batchSize);
      return Flux.empty();
    }

    @Override
    public Flux<Example> flux(PipelineContext context) {
      return Flux.empty();
    }
  }
}
