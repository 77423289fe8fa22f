package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Access;
import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.testing.NoLeaks;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;

/** The plan follows the source's declared access, and explain names its path. */
@ExtendWith(NoLeaks.class)
class PlanTest {

  /** A split source that decodes into batches and is random access too, declaring {@code access}. */
  static final class Both extends MemoryBatchSplits implements RandomAccessDataset<Example> {
    private final Access access;

    Both(Access access, long... sizes) {
      super(sizes);
      this.access = access;
    }

    @Override
    public long size() {
      return super.size();
    }

    @Override
    public Example get(long index) {
      return row(index);
    }

    @Override
    public Flux<Example> flux(PipelineContext context) {
      return RandomAccessDataset.super.flux(context);
    }

    @Override
    public Access access() {
      return access;
    }
  }

  private static List<Long> indices(Pipeline<Batch> pipeline, PipelineContext ctx) {
    List<Long> out = new ArrayList<>();
    for (Batch b : pipeline.flux(ctx).collectList().block()) {
      try (b) {
        for (long i : b.indices()) {
          out.add(i);
        }
      }
    }
    return out;
  }

  @Test
  void theDeclaredAccessChoosesThePathAndTheRowsStayTheSame() {
    PipelineContext ctx = PipelineContext.defaults().withSeed(3);
    Pipeline<Batch> random = Pipeline.from(new Both(Access.RANDOM, 7, 13, 20)).shard(2, 1).batch(8);
    Both declared = new Both(Access.BLOCKS, 7, 13, 20);
    Pipeline<Batch> blocks = Pipeline.from(declared).shard(2, 1).batch(8);
    assertTrue(random.explain().lines().findFirst().orElseThrow().endsWith(" on the index path"), random.explain());
    assertTrue(blocks.explain().lines().findFirst().orElseThrow().endsWith(" on the columnar path"), blocks.explain());
    assertTrue(blocks.toString().contains("batch(8, false, 1) [columnar]"), blocks.toString());
    List<Long> columnar = indices(blocks, ctx);
    assertEquals(20, columnar.size(), "rank 1 of 2 holds half the rows");
    assertEquals(3, blocks.cardinality(ctx), "batches of 8, 8 and 4");
    assertTrue(!declared.reads.isEmpty() && declared.reads.stream().allMatch(r -> r.startsWith("s2")),
        "the columnar path reads only the rank's row ranges: " + declared.reads);
    assertEquals(20, indices(random, ctx).size());
  }

  @Test
  void explainNamesThePlansPath() {
    assertTrue(Pipeline.from(Datasets.range(10)).shuffle().batch(4).explain().lines().findFirst().orElseThrow()
        .endsWith("on the index path"));
    Dataset<Example> stream = context -> Datasets.range(10).flux(context);
    assertTrue(Pipeline.from(stream).batch(4).explain().lines().findFirst().orElseThrow()
        .endsWith("on the element path"));
    assertTrue(Pipeline.from(new MemoryBatchSplits(5, 5)).shuffle().shard(2, 0).explain().lines().findFirst()
        .orElseThrow().endsWith("on the split plan"));
    assertTrue(Pipeline.from(Datasets.range(10)).shuffle().repeat(2).batch(4).explain().lines().findFirst()
        .orElseThrow().endsWith("on the index path, repeated once per epoch"));
  }

  @Test
  void aSourceDeclaringAnAccessItsTypeCannotHonourFailsNamingIt() {
    Dataset<Example> liar = new Dataset<>() {
      @Override
      public Flux<Example> flux(PipelineContext context) {
        return Flux.empty();
      }

      @Override
      public Access access() {
        return Access.RANDOM;
      }

      @Override
      public String toString() {
        return "liar";
      }
    };
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> Pipeline.from(liar).cardinality(PipelineContext.defaults()));
    assertEquals("liar declares random access but is not a RandomAccessDataset", e.getMessage());
  }
}
