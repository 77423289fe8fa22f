package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.DType;
import dev.sluice.core.Schema;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.testing.NoLeaks;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class PaddedBatchUnbatchTest {
  private record ListSource(Schema schema, List<Example> examples) implements dev.sluice.core.Dataset<Example>,
      dev.sluice.core.HasSchema {
    @Override
    public Flux<Example> flux(dev.sluice.core.PipelineContext context) {
      return Flux.fromIterable(examples);
    }
  }

  /** Example i: "tokens" = [i, i, ..] of length 1 + i % 4 (int64), "label" = i. */
  static Example sentence(long i) {
    long[] tokens = new long[(int) (1 + i % 4)];
    java.util.Arrays.fill(tokens, i);
    return Example.builder(i).put("tokens", Tensor.of(tokens)).put("label", Tensor.scalar(i)).build();
  }

  /** Example i: "box" float32 [1 + i % 2, 1 + i % 3] filled with i. */
  static Example box(long i) {
    int h = (int) (1 + i % 2);
    int w = (int) (1 + i % 3);
    ByteBuffer b = ByteBuffer.allocate(h * w * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (int k = 0; k < h * w; k++) {
      b.putFloat(k * 4, i);
    }
    return Example.of(i, "box", Tensor.wrap(DType.FLOAT32, Shape.of(h, w), b));
  }

  /** Example i: "words" a list of i % 3 lists of strings (one null), "grid" i % 3 ragged int32 lists. */
  static Example nested(long i) {
    List<Tensor> words = new ArrayList<>();
    List<Tensor> grid = new ArrayList<>();
    for (int k = 0; k < i % 3; k++) {
      words.add(Tensor.ofStrings("w" + i, null, "x".repeat(k)));
      int[] row = new int[k + 1];
      java.util.Arrays.fill(row, (int) i);
      grid.add(Tensor.of(row));
    }
    grid.add(Tensor.of((int) i, (int) i, (int) i));
    return Example.builder(i)
        .put("words", words.isEmpty() ? Tensor.listOf(DType.STRING, List.of(Tensor.ofStrings())) : Tensor.listOf(DType.STRING, words))
        .put("grid", Tensor.listOf(DType.INT32, grid))
        .build();
  }

  @Test
  void nestedRowsSurviveBatchAndUnbatchAtEveryLevel() {
    Schema schema = Schema.of(
        new TensorSpec("words", DType.STRING, Shape.of(-1, -1), false, 0b10),
        new TensorSpec("grid", DType.INT32, Shape.of(-1, -1)));
    List<Example> in = LongStream.range(0, 11).mapToObj(PaddedBatchUnbatchTest::nested).toList();
    List<Example> out = Pipeline.from(new ListSource(schema, in)).batch(4).unbatch().flux().collectList().block();
    assertEquals(in, out);
    assertEquals(true, out.get(1).tensor("words").slice(0).isNull(1));
  }

  @Test
  void paddedBatchPadsRaggedRowsToTheirBoundingShape() {
    List<Batch> batches = Flux.range(0, 3).map(i -> Example.of(i, "grid", nested(i).tensor("grid")))
        .transform(PaddedBatch.of(3, Map.of(), Map.of("grid", -1), false)).collectList().block();
    try (Batch b = batches.get(0)) {
      Column grid = b.column("grid");
      // row 2 is [[2], [2, 2], [2, 2, 2]]: the batch pads every row to [3, 3]
      assertEquals(Shape.of(3, 3), grid.spec().shape());
      assertEquals(Shape.of(1, 3), grid.trueShape(0));
      assertEquals(Shape.of(3, 3), grid.trueShape(2));
      int[] row2 = new int[9];
      for (int k = 0; k < 9; k++) {
        row2[k] = grid.values().getInt(18 + k);
      }
      assertArrayEquals(new int[] {2, -1, -1, 2, 2, -1, 2, 2, 2}, row2);
    }
    Example withNull = Example.of(0, "v", Tensor.listOf(DType.INT64, java.util.Arrays.asList(Tensor.scalar(1L), null)));
    StepVerifier.create(Flux.just(withNull).transform(PaddedBatch.of(1, Map.of(), Map.of(), false)))
        .expectErrorMatches(e -> e.getMessage().contains("holds null elements"))
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void padsToTheLongestInTheBatchAndKeepsTrueLengths() {
    List<Batch> batches = Flux.range(0, 10).map(i -> sentence(i))
        .transform(PaddedBatch.of(4, Map.of(), Map.of("tokens", -1), false)).collectList().block();
    assertEquals(3, batches.size());
    for (Batch b : batches) {
      try (b) {
        Column tokens = b.column("tokens");
        assertTrue(tokens.hasLengths());
        long width = tokens.spec().shape().dim(0);
        long longest = 0;
        for (int r = 0; r < b.size(); r++) {
          long i = b.index(r);
          long len = 1 + i % 4;
          longest = Math.max(longest, len);
          assertEquals(len, tokens.length(r));
          assertEquals(Shape.of(len), tokens.trueShape(r));
          for (int k = 0; k < width; k++) {
            assertEquals(k < len ? i : -1, tokens.values().getLong(r * width + k), "row " + r + " item " + k);
          }
          assertEquals(i, b.column("label").values().getLong(r));
        }
        assertEquals(longest, width);
      }
    }
  }

  @Test
  void padsToDeclaredShapesInEveryDimension() {
    List<Batch> batches = Flux.range(0, 6).map(i -> box(i))
        .transform(PaddedBatch.of(6, Map.of("box", Shape.of(3, -1)), Map.of("box", 0.5), true)).collectList().block();
    assertEquals(1, batches.size());
    try (Batch b = batches.get(0)) {
      Column box = b.column("box");
      assertEquals(Shape.of(3, 3), box.spec().shape());
      for (int r = 0; r < 6; r++) {
        Shape truth = box.trueShape(r);
        assertEquals(box(r).tensor("box").shape(), truth);
        Tensor row = box.row(r);
        for (int y = 0; y < 3; y++) {
          for (int x = 0; x < 3; x++) {
            float expected = y < truth.dim(0) && x < truth.dim(1) ? r : 0.5f;
            assertEquals(expected, row.getFloat(y * 3L + x), "row " + r + " (" + y + ", " + x + ")");
          }
        }
      }
    }
  }

  @Test
  void anExampleLongerThanItsPaddedShapeFailsAndNothingLeaks() {
    StepVerifier.create(Flux.range(0, 8).map(i -> sentence(i))
            .transform(PaddedBatch.of(4, Map.of("tokens", Shape.of(2)), Map.of(), false)))
        .expectErrorSatisfies(e -> assertEquals(
            "paddedBatch: field 'tokens' of example 2 has shape [3] which does not fit the padded shape [2]", e.getMessage()))
        .verify();
  }

  @Test
  void aPadValueTheDtypeCannotHoldFailsAfterTheFirstColumnsWereWrittenAndNothingLeaks() {
    // "label" is written first; "z" (complex64) then refuses the non-zero pad value
    StepVerifier.create(Flux.range(0, 4).map(i -> Example.builder(i).put("label", Tensor.scalar((long) i))
                .put("z", Tensor.wrap(DType.COMPLEX64, Shape.of(1), ByteBuffer.allocate(8))).build())
            .transform(PaddedBatch.of(4, Map.of(), Map.of("z", 1), false)))
        .expectErrorSatisfies(e -> {
          assertTrue(e instanceof IllegalArgumentException, e.toString());
          assertTrue(e.getMessage().startsWith("paddedBatch: ") && e.getMessage().contains("field 'z'")
              && e.getMessage().contains("complex64"), e.getMessage());
        })
        .verify();
  }

  @Test
  void dropRemainderAndBackpressure() {
    StepVerifier.create(Flux.range(0, 10).map(i -> sentence(i)).transform(PaddedBatch.of(4, Map.of(), Map.of(), true)), 0)
        .thenRequest(1)
        .assertNext(b -> {
          assertEquals(4, b.size());
          b.close();
        })
        .thenRequest(1)
        .assertNext(b -> {
          assertArrayEquals(new long[] {4, 5, 6, 7}, b.indices());
          b.close();
        })
        .thenRequest(1)
        .verifyComplete();
  }

  @Test
  void unbatchCopiesRowsOutAndClosesTheBatches() {
    List<Example> rows = Datasets.range(23).flux().transform(Batching.of(5)).transform(Unbatch.of()).collectList().block();
    assertEquals(LongStream.range(0, 23).boxed().toList(), rows.stream().map(Example::index).toList());
    for (Example e : rows) {
      assertEquals(e.index(), e.tensor("value").getLong(0));
    }
    // Padded rows come back padded, as in tf.data.
    List<Example> padded = Flux.range(0, 4).map(i -> sentence(i)).transform(PaddedBatch.of(4))
        .transform(Unbatch.of()).collectList().block();
    assertEquals(Shape.of(4), padded.get(0).tensor("tokens").shape());
    assertArrayEquals(new long[] {1, 1, 0, 0}, padded.get(1).tensor("tokens").toLongArray());
  }

  @Test
  void unbatchBackpressuredCancelledAndFailedReleasesEveryBatch() throws InterruptedException {
    StepVerifier.create(Datasets.range(50).flux().transform(Batching.of(8)).transform(Unbatch.of()), 0)
        .thenRequest(1)
        .assertNext(e -> assertEquals(0, e.index()))
        .thenRequest(9)
        .expectNextCount(9)
        .thenCancel()
        .verify();
    StepVerifier.create(Datasets.range(50).flux().transform(Batching.of(8))
            .concatWith(Flux.error(new IllegalStateException("source failed"))).transform(Unbatch.of()))
        .expectNextCount(50)
        .verifyErrorMessage("source failed");
    CountDownLatch done = new CountDownLatch(1);
    StepVerifier.create(Datasets.range(5000).flux().transform(Batching.of(8)).publishOn(Schedulers.parallel(), 4)
            .transform(Unbatch.of()).doFinally(s -> done.countDown()), 20)
        .expectNextCount(20)
        .thenCancel()
        .verify(Duration.ofSeconds(10));
    assertTrue(done.await(10, TimeUnit.SECONDS));
    TestSources.awaitNoOutstanding();
  }

  @Test
  void paddedBatchOfAPipelineWithShuffle() {
    List<Long> seen = new ArrayList<>();
    Pipeline.from(Datasets.range(30)).map(e -> sentence(e.index())).shuffle(8).paddedBatch(7)
        .flux().doOnNext(b -> {
          try (b) {
            for (int r = 0; r < b.size(); r++) {
              seen.add(b.index(r));
              assertEquals(1 + b.index(r) % 4, b.column("tokens").length(r));
            }
          }
        }).blockLast();
    assertEquals(LongStream.range(0, 30).boxed().toList(), seen.stream().sorted().toList());
    List<Long> unbatched = Pipeline.from(Datasets.range(30)).batch(4).shuffle(3).unbatch().flux()
        .map(Example::index).collectList().block();
    assertEquals(LongStream.range(0, 30).boxed().toList(), unbatched.stream().sorted().toList());
  }
}
