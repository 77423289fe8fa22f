package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.testing.NoLeaks;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** The element-path {@link Shard} transformer over plain fluxes. */
@ExtendWith(NoLeaks.class)
class ShardTest {

  private static List<Long> shard(long n, int k, int r, EqualLength policy) {
    return Flux.fromStream(LongStream.range(0, n).boxed()).transform(Shard.of(k, r, policy)).collectList().block();
  }

  @Test
  void countsAndStridesForEveryPolicy() {
    for (long n = 0; n <= 23; n++) {
      for (int k = 1; k <= 9; k++) {
        List<Long> all = new ArrayList<>();
        for (int r = 0; r < k; r++) {
          List<Long> uneven = shard(n, k, r, EqualLength.UNEVEN);
          List<Long> drop = shard(n, k, r, EqualLength.DROP);
          List<Long> pad = shard(n, k, r, EqualLength.PAD);
          assertEquals(EqualLength.UNEVEN.count(n, k, r), uneven.size());
          assertEquals(n / k, drop.size());
          assertEquals(n == 0 ? 0 : (n + k - 1) / k, pad.size());
          for (int j = 0; j < pad.size(); j++) {
            assertEquals((j * (long) k + r) % n, pad.get(j), "PAD wraps around: n=" + n + " k=" + k + " r=" + r);
          }
          all.addAll(uneven);
        }
        assertEquals(LongStream.range(0, n).boxed().toList(), all.stream().sorted().toList());
      }
    }
  }

  @Test
  void backpressuredOneAtATime() {
    StepVerifier.create(Flux.range(0, 10).transform(Shard.of(3, 1)), 0)
        .thenRequest(1).expectNext(1)
        .thenRequest(1).expectNext(4)
        .thenRequest(1).expectNext(7)
        .thenRequest(1).expectNext(0) // PAD: position 10 wraps to 0
        .thenRequest(1)
        .verifyComplete();
  }

  @Test
  void otherRanksElementsAreDiscarded() {
    StepVerifier.create(Flux.range(0, 6).transform(Shard.of(3, 2, EqualLength.DROP)))
        .expectNext(2, 5)
        .expectComplete()
        .verifyThenAssertThat()
        .hasDiscardedExactly(0, 1, 3, 4);
  }

  @Test
  void cancelDiscardsAndClosesHeldBatches() {
    List<Batch> made = new ArrayList<>();
    Flux<Batch> batches = Pipeline.from(Datasets.range(100)).batch(5).flux().doOnNext(made::add)
        .transform(Shard.of(4, 3))
        .doOnDiscard(Batch.class, Batch::close);
    StepVerifier.create(batches, 1)
        .consumeNextWith(Batch::close)
        .thenCancel()
        .verify();
    made.forEach(b -> assertTrue(b.isClosed(), b.toString()));
  }

  @Test
  void errorsPassThrough() {
    StepVerifier.create(Flux.concat(Flux.range(0, 5), Flux.error(new IllegalStateException("boom"))).transform(Shard.of(2, 0)))
        .expectNext(0, 2)
        .expectErrorMessage("boom")
        .verify();
  }
}
