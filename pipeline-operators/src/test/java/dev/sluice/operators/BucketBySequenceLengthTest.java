package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.LongUnaryOperator;
import java.util.stream.LongStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

@ExtendWith(NoLeaks.class)
class BucketBySequenceLengthTest {
  private static final int[] BOUNDARIES = {3, 6};
  private static final int[] SIZES = {4, 3, 2};

  /** Example i: "tokens" int32 of length {@code length(i)} filled with i, "label" = i. */
  static Example sentence(long i, LongUnaryOperator length) {
    int[] tokens = new int[(int) length.applyAsLong(i)];
    Arrays.fill(tokens, (int) i);
    return Example.builder(i).put("tokens", Tensor.of(tokens)).put("label", Tensor.scalar(i)).build();
  }

  static long length(long i) {
    return (i * 7 + 3) % 9; // 0 .. 8: every bucket, empty sequences too
  }

  static int tokens(Example e) {
    return (int) e.tensor("tokens").shape().dim(0);
  }

  static Flux<Example> sentences(int n) {
    return Flux.range(0, n).map(i -> sentence(i, BucketBySequenceLengthTest::length));
  }

  /** What bucketing must emit, batch by batch (as index lists), computed the plain way. */
  static List<List<Long>> expected(List<Example> in, int[] bounds, int[] sizes, boolean drop) {
    List<List<Long>> out = new ArrayList<>();
    TreeMap<Integer, List<Long>> open = new TreeMap<>();
    for (Example e : in) {
      int b = 0;
      while (b < bounds.length && bounds[b] <= tokens(e)) {
        b++;
      }
      List<Long> bucket = open.computeIfAbsent(b, k -> new ArrayList<>());
      bucket.add(e.index());
      if (bucket.size() == sizes[b]) {
        out.add(open.remove(b));
      }
    }
    if (!drop) {
      out.addAll(open.values());
    }
    return out;
  }

  static List<Long> indices(Batch b) {
    return Arrays.stream(b.indices()).boxed().toList();
  }

  @Test
  void batchesEachBucketPaddedToItsOwnLongestAndFlushesPartialBucketsInBucketOrder() {
    List<Example> in = sentences(50).collectList().block();
    List<Batch> batches = Flux.fromIterable(in).transform(BucketBySequenceLength.of(BucketBySequenceLengthTest::tokens,
        BOUNDARIES, SIZES)).collectList().block();
    List<List<Long>> got = new ArrayList<>();
    for (Batch b : batches) {
      try (b) {
        got.add(indices(b));
        Column tokens = b.column("tokens");
        long width = tokens.spec().shape().dim(0);
        long longest = 0;
        for (int r = 0; r < b.size(); r++) {
          long i = b.index(r);
          longest = Math.max(longest, length(i));
          assertEquals(length(i), tokens.length(r));
          for (int k = 0; k < width; k++) {
            assertEquals(k < length(i) ? i : 0, tokens.values().getInt(r * width + k), "row " + r + " item " + k);
          }
          assertEquals(i, b.column("label").values().getLong(r));
        }
        assertEquals(longest, width, "a batch is padded to its own longest row");
      }
    }
    assertEquals(expected(in, BOUNDARIES, SIZES, false), got);
    assertEquals(LongStream.range(0, 50).boxed().toList(), got.stream().flatMap(List::stream).sorted().toList());
  }

  @Test
  void dropRemainderDropsEachBucketsPartialBatch() {
    List<Example> in = sentences(50).collectList().block();
    List<List<Long>> got = Flux.fromIterable(in).transform(BucketBySequenceLength.of(BucketBySequenceLengthTest::tokens,
            BOUNDARIES, SIZES, Map.of(), Map.of(), false, true))
        .map(b -> {
          try (b) {
            return indices(b);
          }
        }).collectList().block();
    assertEquals(expected(in, BOUNDARIES, SIZES, true), got);
    for (List<Long> batch : got) {
      assertTrue(Arrays.stream(SIZES).anyMatch(s -> s == batch.size()));
    }
  }

  @Test
  void padToBucketBoundaryGivesEveryBatchOfABucketItsBoundaryMinusOne() {
    List<Batch> batches = sentences(40).filter(e -> tokens(e) < 6)
        .transform(BucketBySequenceLength.of(BucketBySequenceLengthTest::tokens, BOUNDARIES, SIZES,
            Map.of("tokens", Shape.of(-1)), Map.of("tokens", -1), true, false))
        .collectList().block();
    assertThat(batches).isNotEmpty();
    for (Batch b : batches) {
      try (b) {
        long first = length(b.index(0));
        long width = first < 3 ? 2 : 5;
        assertEquals(Shape.of(width), b.column("tokens").spec().shape());
        for (int r = 0; r < b.size(); r++) {
          long len = length(b.index(r));
          assertEquals(-1, len == width ? -1 : b.column("tokens").values().getInt(r * width + width - 1));
        }
      }
    }
    StepVerifier.create(sentences(40).transform(BucketBySequenceLength.of(BucketBySequenceLengthTest::tokens,
            BOUNDARIES, SIZES, Map.of("tokens", Shape.of(-1)), Map.of(), true, false)))
        .thenConsumeWhile(b -> {
          b.close();
          return true;
        })
        .expectErrorSatisfies(e -> {
          long first = LongStream.range(0, 40).filter(i -> length(i) >= 6).findFirst().orElseThrow();
          assertThat(e).hasMessageContaining("example " + first + " has length " + length(first)
              + ", not below the last boundary 6");
        })
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void argumentsAreCheckedAtAssembly() {
    Pipeline<Example> p = Pipeline.from(Datasets.range(4));
    assertThatThrownBy(() -> p.bucketBySequenceLength(e -> 1, new int[] {4, 4}, new int[] {1, 1, 1}))
        .hasMessage("bucketBySequenceLength: boundaries must be > 0 and strictly increasing but they are [4, 4]");
    assertThatThrownBy(() -> p.bucketBySequenceLength(e -> 1, new int[] {4}, new int[] {1}))
        .hasMessageContaining("batchSizes needs one size per bucket, boundaries.length + 1 = 2, but it has 1");
    assertThatThrownBy(() -> p.bucketBySequenceLength(e -> 1, new int[] {4}, new int[] {1, 0}))
        .hasMessageContaining("batchSizes must all be > 0 but they are [1, 0]");
    assertThatThrownBy(() -> p.bucketBySequenceLength(e -> 1, new int[] {4}, new int[] {1, 1}, Map.of(), Map.of(),
        true, false)).hasMessageContaining("padToBucketBoundary pads the -1 dimensions of paddedShapes");
    StepVerifier.create(sentences(3).transform(BucketBySequenceLength.of(e -> -1, BOUNDARIES, SIZES)))
        .expectErrorMessage("bucketBySequenceLength: the length of example 0 is -1; lengths must be >= 0")
        .verify(Duration.ofSeconds(10));
  }

  @Test
  void backpressuredItEmitsOneBatchPerRequest() {
    List<Example> in = sentences(30).collectList().block();
    List<List<Long>> want = expected(in, BOUNDARIES, SIZES, false);
    StepVerifier.Step<Batch> step = StepVerifier.create(Flux.fromIterable(in)
        .transform(BucketBySequenceLength.of(BucketBySequenceLengthTest::tokens, BOUNDARIES, SIZES)), 0)
        .expectSubscription();
    for (List<Long> batch : want) {
      step = step.expectNoEvent(Duration.ZERO).thenRequest(1).assertNext(b -> {
        try (b) {
          assertEquals(batch, indices(b));
        }
      });
    }
    step.thenRequest(1).verifyComplete();
  }

  @Test
  void cancelDiscardsTheExamplesWaitingInBuckets() {
    List<Long> emitted = new ArrayList<>();
    StepVerifier.create(sentences(100).transform(BucketBySequenceLength.of(BucketBySequenceLengthTest::tokens,
            BOUNDARIES, SIZES)), 0)
        .thenRequest(2)
        .consumeNextWith(b -> {
          try (b) {
            emitted.addAll(indices(b));
          }
        })
        .consumeNextWith(b -> {
          try (b) {
            emitted.addAll(indices(b));
          }
        })
        .thenCancel()
        .verifyThenAssertThat()
        .hasDiscardedElementsSatisfying(discarded -> {
          assertThat(discarded).isNotEmpty().allMatch(x -> x instanceof Example);
          assertThat(discarded.stream().map(x -> ((Example) x).index())).doesNotContainAnyElementsOf(emitted);
        });
  }

  @Test
  void anUpstreamErrorArrivesAfterTheFullBatchesAndDiscardsTheRest() {
    StepVerifier.create(Flux.concat(sentences(20), Flux.error(new IllegalStateException("boom")))
            .transform(BucketBySequenceLength.of(BucketBySequenceLengthTest::tokens, BOUNDARIES, SIZES)))
        .thenConsumeWhile(b -> {
          b.close();
          return true;
        })
        .expectErrorMessage("boom")
        .verifyThenAssertThat()
        .hasDiscardedElementsSatisfying(d -> assertThat(d).isNotEmpty().allMatch(x -> x instanceof Example));
  }

  /** A pipeline whose order changes every epoch, bucketed. */
  static Pipeline<Batch> shuffledBuckets() {
    return Pipeline.from(Datasets.range(60)).shuffle()
        .map(e -> sentence(e.index(), BucketBySequenceLengthTest::length))
        .bucketBySequenceLength(BucketBySequenceLengthTest::tokens, BOUNDARIES, SIZES);
  }

  @Test
  void aPipelinePassIsTheTransformerOverItsInputAndEachEpochDiffers() {
    Pipeline<Batch> p = shuffledBuckets();
    List<String> twoEpochs = ResumeRuns.whole(p, PipelineContext.defaults().withSeed(5), 2);
    List<String> first = twoEpochs.stream().filter(s -> s.startsWith("0:")).toList();
    List<String> second = twoEpochs.stream().filter(s -> s.startsWith("1:")).toList();
    assertThat(first).isNotEqualTo(second.stream().map(s -> "0:" + s.substring(2)).toList());
    assertThat(p.explain()).contains("bucketBySequenceLength([3, 6], [4, 3, 2])");
  }

  @Property(tries = 12, seed = "20261128")
  void resumingAtAnyPointContinuesExactly(@ForAll @Size(min = 1, max = 3) List<@DoubleRange(min = 0, max = 1) Double> at) {
    ResumeRuns.assertResumesExactly(shuffledBuckets(), PipelineContext.defaults().withSeed(5), 2, at);
  }

  /** A long-tailed length: lognormal around 48 tokens, cut to 1 .. 2048. */
  static long longTail(Random random) {
    return Math.max(1, Math.min(2048, Math.round(Math.exp(Math.log(48) + 1.1 * random.nextGaussian()))));
  }

  /** The bytes of the token columns of {@code batches} (closed) and the rows, as {bytes, true bytes, rows}. */
  static long[] measure(Flux<Batch> batches, List<Long> rows) {
    long[] out = new long[3];
    batches.doOnNext(b -> {
      try (b) {
        Column tokens = b.column("tokens");
        out[0] += tokens.values().byteSize();
        for (int r = 0; r < b.size(); r++) {
          out[1] += 4 * tokens.length(r);
          rows.add(b.index(r));
        }
        out[2] += b.size();
      }
    }).blockLast();
    return out;
  }

  @Test
  void onALongTailedDistributionBucketingPadsAtLeastHalfAsManyBytesForTheSameRows() {
    Random random = new Random(42);
    long[] lengths = LongStream.range(0, 4096).map(i -> longTail(random)).toArray();
    Flux<Example> in = Flux.range(0, lengths.length).map(i -> sentence(i, k -> lengths[(int) k]));
    List<Long> plainRows = new ArrayList<>();
    long[] plain = measure(in.transform(PaddedBatch.of(32)), plainRows);
    List<Long> bucketRows = new ArrayList<>();
    int[] bounds = {16, 32, 64, 128, 256, 512, 1024};
    int[] sizes = new int[bounds.length + 1];
    Arrays.fill(sizes, 32);
    long[] bucketed = measure(in.transform(BucketBySequenceLength.of(BucketBySequenceLengthTest::tokens, bounds, sizes)),
        bucketRows);
    assertEquals(plain[1], bucketed[1], "the same values");
    assertEquals(plainRows.stream().sorted().toList(), bucketRows.stream().sorted().toList(), "the same rows");
    double ratio = (double) (plain[0] - plain[1]) / (bucketed[0] - bucketed[1]);
    assertThat(ratio).as("padding bytes, paddedBatch %d against bucketBySequenceLength %d", plain[0] - plain[1],
        bucketed[0] - bucketed[1]).isGreaterThanOrEqualTo(2.0);
  }
}
