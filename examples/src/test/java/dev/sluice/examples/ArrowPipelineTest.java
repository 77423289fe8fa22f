package dev.sluice.examples;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.arrow.ArrowCompression;
import dev.sluice.io.arrow.ArrowDataset;
import dev.sluice.io.arrow.ArrowWriteOptions;
import dev.sluice.operators.Pipeline;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Arrow file through pipelines: the index path (global shuffle, gather across record batches),
 * the columnar path over its record batches ({@code asSplits}, window shuffle), and sharding by
 * rank; every row delivered once, each equal to the file's row.
 */
@ExtendWith(NoLeaks.class)
class ArrowPipelineTest {
  @TempDir Path tmp;

  private static List<Long> rowsOf(Pipeline<Batch> p, PipelineContext ctx, ArrowDataset file) {
    List<Long> out = new ArrayList<>();
    for (Batch b : p.flux(ctx).toIterable()) {
      try (b) {
        for (int r = 0; r < b.size(); r++) {
          long index = b.index(r);
          assertThat(b.copyRow(r)).isEqualTo(file.get(index));
          assertThat(b.column("label").values().getLong(r)).isEqualTo(index);
          out.add(index);
        }
      }
    }
    return out;
  }

  @Test
  void indexAndColumnarPathsDeliverEveryRowOnce() {
    long n = 2_000;
    for (ArrowCompression c : new ArrowCompression[] {ArrowCompression.NONE, ArrowCompression.ZSTD}) {
      Path file = tmp.resolve("d-" + c + ".arrow");
      Arrow.write(Datasets.synthetic(n, 8, 3), file, ArrowWriteOptions.builder().batchRows(300).compression(c).build());
      try (ArrowDataset ds = Arrow.open(file)) {
        assertThat(ds.splits()).hasSize(7);
        PipelineContext ctx = PipelineContext.defaults().withSeed(5);
        List<Long> all = LongStream.range(0, n).boxed().toList();
        List<Long> shuffled = rowsOf(Pipeline.from(ds).shuffle().batch(64), ctx, ds);
        assertThat(shuffled).isNotEqualTo(all).containsExactlyInAnyOrderElementsOf(all);
        Pipeline<Batch> columnar = Pipeline.from(ds.asSplits()).batch(64);
        assertThat(columnar.explain()).contains("columnar");
        assertThat(rowsOf(columnar, ctx, ds)).isEqualTo(all);
        List<Long> window = rowsOf(Pipeline.from(ds.asSplits()).shuffle(500).batch(64), ctx, ds);
        assertThat(window).isNotEqualTo(all).containsExactlyInAnyOrderElementsOf(all);
        List<Long> ranks = new ArrayList<>();
        for (int rank = 0; rank < 3; rank++) {
          ranks.addAll(rowsOf(Pipeline.from(ds.asSplits()).shuffle().shard(3, rank).batch(50), ctx, ds));
        }
        assertThat(ranks.stream().distinct().sorted().toList()).isEqualTo(all);
        List<Long> elements = Pipeline.from(ds).flux(ctx).map(Example::index).collectList().block();
        assertThat(elements).isEqualTo(all);
      }
    }
  }
}
