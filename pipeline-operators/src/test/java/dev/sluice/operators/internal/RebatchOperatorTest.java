package dev.sluice.operators.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The re-cut of decoded batches: the rows come out in order, in batches of the batch size; a batch
 * inside one input of fixed-length fields is a view (nothing allocated for it), any other a copy;
 * every input and output is released on complete, error and cancel.
 */
class RebatchOperatorTest {
  private static final Schema FIXED = Schema.of(
      new TensorSpec("id", DType.INT64, Shape.scalar()),
      new TensorSpec("x", DType.FLOAT32, Shape.of(2)),
      new TensorSpec("f", DType.FLOAT32, Shape.scalar(), true));
  private static final Schema WITH_STRINGS = Schema.of(
      new TensorSpec("id", DType.INT64, Shape.scalar()),
      new TensorSpec("s", DType.STRING, Shape.scalar(), true));

  private final MemoryManager memory = new MemoryManager(0);
  private final BufferPool source = memory.pool("source");
  private final BufferPool out = memory.pool("out");

  @AfterEach
  void nothingOutstanding() {
    memory.checkNoOutstanding();
  }

  private static Example row(Schema schema, long i) {
    Map<String, Tensor> fields = new LinkedHashMap<>();
    fields.put("id", Tensor.scalar(i));
    if (schema == FIXED) {
      fields.put("x", Tensor.of((float) i, -(float) i));
      fields.put("f", i % 3 == 0 ? null : Tensor.scalar((float) i / 2));
    } else {
      fields.put("s", i % 5 == 0 ? null : Tensor.ofString("r" + i));
    }
    return Example.of(i, fields);
  }

  /** Decoded batches of the given sizes holding rows 0, 1, .. in order. */
  private Flux<Batch> decoded(Schema schema, int... sizes) {
    return Flux.defer(() -> {
      long[] next = {0};
      return Flux.fromArray(IntStream.of(sizes).boxed().toArray(Integer[]::new)).map(n -> {
        try (BatchBuilder b = BatchBuilder.create(schema, n, source)) {
          for (int k = 0; k < n; k++) {
            b.append(row(schema, next[0]++));
          }
          return b.build();
        }
      });
    });
  }

  private static List<Example> rows(List<Batch> batches) {
    List<Example> all = new ArrayList<>();
    for (Batch b : batches) {
      for (int r = 0; r < b.size(); r++) {
        all.add(b.copyRow(r));
      }
    }
    return all;
  }

  private List<Batch> recut(Schema schema, int batchSize, int... sizes) {
    long total = IntStream.of(sizes).sum();
    return RebatchOperator.recut(decoded(schema, sizes), schema, out, batchSize, total, "test").collectList().block();
  }

  private void assertRecut(Schema schema, int batchSize, int... sizes) {
    long total = IntStream.of(sizes).sum();
    List<Batch> batches = recut(schema, batchSize, sizes);
    try {
      assertThat(batches).extracting(Batch::size).allMatch(n -> n == batchSize || n == total % batchSize);
      assertThat(batches.stream().mapToLong(Batch::size).sum()).isEqualTo(total);
      List<Example> got = rows(batches);
      for (int i = 0; i < total; i++) {
        assertThat(got.get(i)).as("row %d", i).isEqualTo(row(schema, i));
      }
    } finally {
      batches.forEach(Batch::close);
    }
  }

  @Test
  void rowsComeOutInOrderInBatchesOfTheBatchSize() {
    SplittableRandom random = new SplittableRandom(7);
    for (int round = 0; round < 30; round++) {
      int[] sizes = IntStream.range(0, 1 + random.nextInt(6)).map(k -> 1 + random.nextInt(40)).toArray();
      int batchSize = 1 + random.nextInt(17);
      assertRecut(FIXED, batchSize, sizes);
      assertRecut(WITH_STRINGS, batchSize, sizes);
    }
  }

  @Test
  void batchesInsideOneInputOfFixedLengthFieldsAreViewsAndTheRestCopies() {
    long before = out.allocatedBytesTotal();
    List<Batch> views = recut(FIXED, 8, 32, 32);
    assertThat(views).hasSize(8);
    assertThat(out.allocatedBytesTotal()).isEqualTo(before);
    views.forEach(Batch::close);

    List<Batch> spanning = recut(FIXED, 8, 12, 12); // [0, 8) view, [8, 16) copy, [16, 24) view
    assertThat(out.allocatedBytesTotal()).isGreaterThan(before);
    long afterOne = out.allocatedBytesTotal();
    spanning.forEach(Batch::close);
    assertThat(spanning).hasSize(3);

    List<Batch> strings = recut(WITH_STRINGS, 8, 32);
    assertThat(out.allocatedBytesTotal()).isGreaterThan(afterOne);
    strings.forEach(Batch::close);
  }

  @Test
  void aCutWithAFirstSizeGathersInOrderIntoTheFirstSizeThenTheBatchSize() {
    SplittableRandom random = new SplittableRandom(11);
    for (int round = 0; round < 30; round++) {
      int first = 1 + random.nextInt(9);
      int size = 1 + random.nextInt(9);
      int total = random.nextInt(60);
      List<Batch> batches = new ArrayList<>();
      try (RebatchOperator.Rows rows = new RebatchOperator.Rows(FIXED, out, first, size, total, "test")) {
        for (int done = 0; done < total; ) {
          int count = Math.min(total - done, 1 + random.nextInt(13)); // pieces of any size, across batches
          int from = done;
          batches.addAll(rows.gather(count, targets -> {
            long next = from;
            for (BatchBuilder t : targets) {
              while (t.size() < t.capacity() && next < from + count) {
                t.append(row(FIXED, next++));
              }
            }
          }));
          done += count;
        }
        StepVerifier.create(rows.finish()).verifyComplete();
      }
      try {
        List<Integer> sizes = batches.stream().map(Batch::size).toList();
        List<Integer> expected = new ArrayList<>();
        for (int at = 0; at < total; at += expected.get(expected.size() - 1)) {
          expected.add(Math.min(at == 0 ? first : size, total - at));
        }
        assertThat(sizes).as("first %d, size %d, total %d", first, size, total).isEqualTo(expected);
        List<Example> got = rows(batches);
        for (int i = 0; i < total; i++) {
          assertThat(got.get(i)).as("row %d", i).isEqualTo(row(FIXED, i));
        }
      } finally {
        batches.forEach(Batch::close);
      }
    }
  }

  @Test
  void aViewKeepsItsInputAliveUntilClosed() {
    List<Batch> views = recut(FIXED, 4, 16);
    assertThat(source.outstandingBytes()).isPositive();
    for (int k = 0; k < views.size() - 1; k++) {
      views.get(k).close();
    }
    assertThat(source.outstandingBytes()).isPositive();
    assertThat(views.get(views.size() - 1).copyRow(3)).isEqualTo(row(FIXED, 15));
    views.get(views.size() - 1).close();
    assertThat(source.outstandingBytes()).isZero();
  }

  @Test
  void cancelReleasesTheInputsAndTheBatchBeingFilled() {
    for (int take = 0; take < 6; take++) {
      List<Batch> got = RebatchOperator.recut(decoded(FIXED, 5, 7, 9, 11), FIXED, out, 6, 32, "test")
          .take(take).collectList().block();
      got.forEach(Batch::close);
    }
    assertThat(memory.outstandingBytes()).isZero();
  }

  @Test
  void tooFewOrTooManyRowsFailAndReleaseEverything() {
    StepVerifier.create(RebatchOperator.recut(decoded(FIXED, 5, 5), FIXED, out, 4, 12, "src"))
        .consumeNextWith(Batch::close)
        .consumeNextWith(Batch::close)
        .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("src").hasMessageContaining("10 of 12"))
        .verify();
    StepVerifier.create(RebatchOperator.recut(decoded(WITH_STRINGS, 5, 5), WITH_STRINGS, out, 4, 8, "src"))
        .consumeNextWith(Batch::close)
        .expectErrorSatisfies(e -> assertThat(e).hasMessageContaining("src delivered more than the 8 rows"))
        .verify();
  }
}
