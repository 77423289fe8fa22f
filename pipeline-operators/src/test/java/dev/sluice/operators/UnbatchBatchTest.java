package dev.sluice.operators;

import static dev.sluice.operators.ResumeRuns.assertResumesExactly;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * {@code unbatch()} right before {@code batch}: the batches are those of the examples' path (the
 * public {@code Unbatch} and {@code Batching} transformers) in rows, indices, values and schema; the
 * rows are re-cut without a copy where a batch lies inside one input; a resumed pass is exact.
 */
class UnbatchBatchTest {
  @AfterEach
  void nothingOutstanding() {
    TestSources.awaitNoOutstanding();
  }

  /** Fixed-length fields: an int64 scalar and a float32[3], from the index. */
  private static RandomAccessDataset<Example> fixed(int n) {
    long[] ids = new long[n];
    ByteBuffer x = ByteBuffer.allocate(12 * n).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < n; i++) {
      ids[i] = 10L * i;
      for (int k = 0; k < 3; k++) {
        x.putFloat(i + k / 4f);
      }
    }
    Map<String, Tensor> fields = new LinkedHashMap<>();
    fields.put("id", Tensor.of(ids));
    fields.put("x", Tensor.wrap(DType.FLOAT32, Shape.of(n, 3), x.flip()));
    return Datasets.fromTensors(fields);
  }

  /** Each batch rendered with its schema, indices and row values; every batch is closed. */
  private static List<String> render(Flux<?> batches) {
    List<String> out = new ArrayList<>();
    batches.doOnNext(o -> {
      try (Batch b = (Batch) o) {
        StringBuilder s = new StringBuilder(b.schema().toString());
        for (int r = 0; r < b.size(); r++) {
          s.append(' ').append(b.index(r)).append('=').append(b.copyRow(r).fields());
        }
        out.add(s.toString());
      }
    }).blockLast();
    return out;
  }

  /** The rendered batches, or the error the pass ends with. */
  private static List<String> outcome(Flux<?> batches) {
    try {
      return render(batches);
    } catch (RuntimeException e) {
      return List.of("error: " + e.getMessage());
    }
  }

  private static void assertSameAsExamples(Pipeline<Batch> batched, int batchSize, boolean drop) {
    Pipeline<Batch> fused = batched.unbatch().batch(batchSize, drop);
    List<String> viaExamples = outcome(batched.flux(PipelineContext.defaults().withSeed(5))
        .transform(Unbatch.of()).transform(Batching.of(batchSize, drop, null)));
    assertThat(outcome(fused.flux(PipelineContext.defaults().withSeed(5)))).isEqualTo(viaExamples);
  }

  @Test
  void theBatchesAreThoseOfTheExamplesPath() {
    for (int n : new int[] {0, 1, 13, 64}) {
      for (int first : new int[] {1, 4, 7, 16}) {
        for (int second : new int[] {1, 3, 4, 16, 100}) {
          for (boolean drop : new boolean[] {false, true}) {
            assertSameAsExamples(Pipeline.from(fixed(n)).shuffle().batch(first), second, drop);
            // nullable and string fields: through the examples (which fail on the first null)
            assertSameAsExamples(Pipeline.from(new MemoryBatchSplits(n / 2, n - n / 2)).skip(1).batch(first), second,
                drop);
          }
        }
      }
    }
  }

  @Test
  void batchesInsideOneInputAreNotCopied() {
    MemoryManager memory = new MemoryManager(0);
    UnaryOperator<Pipeline<Batch>> own = p -> p.withOptions(Options.builder().memory(memory).build());
    render(own.apply(Pipeline.from(fixed(96)).batch(32)).flux(PipelineContext.defaults()));
    long once = memory.allocatedBytesTotal();
    render(own.apply(Pipeline.from(fixed(96)).batch(32).unbatch().batch(8)).flux(PipelineContext.defaults()));
    assertThat(memory.allocatedBytesTotal() - once).isEqualTo(once);
    memory.checkNoOutstanding();
  }

  @Property(tries = 25)
  void aResumedPassIsExact(@ForAll @IntRange(min = 0, max = 200) int n, @ForAll @IntRange(min = 1, max = 12) int first,
      @ForAll @IntRange(min = 1, max = 12) int second, @ForAll boolean drop, @ForAll @IntRange(min = 1, max = 2) int epochs,
      @ForAll long seed, @ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> cuts) {
    PipelineContext ctx = PipelineContext.defaults().withSeed(seed);
    assertResumesExactly(Pipeline.from(fixed(n)).shuffle().batch(first).unbatch().batch(second, drop), ctx, epochs,
        cuts);
    assertResumesExactly(Pipeline.from(Datasets.range(n)).shuffle().batch(first).prefetch(2).unbatch().batch(second),
        ctx, epochs, cuts);
  }
}
