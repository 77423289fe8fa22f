package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.testing.NoLeaks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.test.util.RaceTestUtils;

@ExtendWith(NoLeaks.class)
class InterleaveTest {

  /** tf.data's sequential interleave, written as its C++ iterator does it. */
  static List<Integer> reference(int[] sizes, int cycleLength, int blockLength) {
    List<Integer> out = new ArrayList<>();
    int[][] slots = new int[cycleLength][]; // {input, next element}
    int nextInput = 0;
    int cycle = 0;
    int block = 0;
    int open = 0;
    while (nextInput < sizes.length || open > 0) {
      if (slots[cycle] != null) {
        int[] s = slots[cycle];
        if (s[1] < sizes[s[0]]) {
          out.add(s[0] * 1000 + s[1]++);
          if (++block == blockLength) {
            block = 0;
            cycle = (cycle + 1) % cycleLength;
          }
          continue;
        }
        slots[cycle] = null;
        open--;
        block = 0;
        cycle = (cycle + 1) % cycleLength;
      } else if (nextInput < sizes.length) {
        slots[cycle] = new int[] {nextInput++, 0};
        open++;
      } else {
        block = 0;
        cycle = (cycle + 1) % cycleLength;
      }
    }
    return out;
  }

  static Flux<Integer> inner(int input, int size) {
    return Flux.range(0, size).map(j -> input * 1000 + j);
  }

  static Flux<Integer> inputs(int[] sizes) {
    return Flux.range(0, sizes.length);
  }

  @Test
  void tfDataDocumentationExample() {
    // tf.data: Dataset.range(1, 6).interleave(lambda x: from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    List<Integer> out = Flux.range(1, 5).transform(Interleave.<Integer, Integer>of(x -> Flux.just(x).repeat(5), 2, 4))
        .collectList().block();
    assertEquals(List.of(1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5), out);
  }

  @Test
  void matchesTheSequentialOrderForAnyParallelismAndRequestPattern() {
    SplittableRandom random = new SplittableRandom(5);
    for (int trial = 0; trial < 60; trial++) {
      int[] sizes = random.ints(random.nextInt(9), 0, 12).toArray();
      int cycle = 1 + random.nextInt(4);
      int block = 1 + random.nextInt(4);
      List<Integer> expected = reference(sizes, cycle, block);
      for (int parallel : new int[] {1, 3}) {
        List<Integer> out = inputs(sizes)
            .transform(Interleave.<Integer, Integer>of(i -> inner(i, sizes[i]), cycle, block, parallel, true))
            .publishOn(Schedulers.single(), 1 + random.nextInt(5))
            .collectList().block(Duration.ofSeconds(10));
        assertEquals(expected, out, java.util.Arrays.toString(sizes) + " cycle " + cycle + " block " + block);
      }
    }
  }

  @Test
  void backpressuredOneAtATime() {
    int[] sizes = {3, 0, 5, 2};
    List<Integer> expected = reference(sizes, 2, 2);
    StepVerifier.Step<Integer> step = StepVerifier.create(
        inputs(sizes).transform(Interleave.<Integer, Integer>of(i -> inner(i, sizes[i]), 2, 2)), 0);
    for (int v : expected) {
      step = step.thenRequest(1).expectNext(v);
    }
    step.thenRequest(1).verifyComplete();
  }

  @Test
  void nonDeterministicEmitsEverythingOnce() {
    int[] sizes = {30, 10, 50, 20, 5};
    List<Integer> out = new ArrayList<>(inputs(sizes)
        .transform(Interleave.<Integer, Integer>of(i -> inner(i, sizes[i]), 3, 2, 3, false))
        .collectList().block(Duration.ofSeconds(10)));
    List<Integer> expected = new ArrayList<>(reference(sizes, 3, 2));
    Collections.sort(out);
    Collections.sort(expected);
    assertEquals(expected, out);
  }

  @Test
  void cancelDiscardsWhatTheOpenPublishersQueued() {
    List<Object> discarded = new ArrayList<>();
    StepVerifier.create(Flux.range(0, 3).transform(Interleave.<Integer, Integer>of(i -> inner(i, 10), 2, 3))
            .doOnDiscard(Object.class, discarded::add), 0)
        .thenRequest(4)
        .expectNext(0, 1, 2, 1000)
        .thenCancel()
        .verify();
    // Slot 0 prefetched 3 (0, 1, 2) and got 3 more (3, 4, 5); slot 1 prefetched 1000..1002.
    List<Object> sorted = new ArrayList<>(discarded);
    sorted.sort(null);
    assertEquals(List.of(3, 4, 5, 1001, 1002), sorted);
  }

  @Test
  void upstreamAndInnerErrorsPropagate() {
    StepVerifier.create(Flux.range(0, 2).concatWith(Flux.error(new IllegalStateException("listing failed")))
            .transform(Interleave.<Integer, Integer>of(i -> inner(i, 2), 4, 1)))
        .thenConsumeWhile(x -> true)
        .verifyErrorMessage("listing failed");
    StepVerifier.create(Flux.range(0, 3)
            .transform(Interleave.<Integer, Integer>of(i -> i == 1 ? Flux.error(new IllegalStateException("bad file 1"))
                : inner(i, 5), 2, 1)))
        .thenConsumeWhile(x -> true)
        .verifyErrorMessage("bad file 1");
  }

  @Test
  void cancelledOrFailedInterleaveOfBatchesReleasesEverything() throws InterruptedException {
    for (int parallel : new int[] {1, 3}) {
      CountDownLatch done = new CountDownLatch(1);
      List<Batch> got = new ArrayList<>();
      StepVerifier.create(Flux.range(0, 6)
              .transform(Interleave.<Integer, Batch>of(i -> ElementTestSupport.batches(50), 3, 4, parallel, true))
              .doFinally(s -> done.countDown())
              .doOnDiscard(Batch.class, Batch::close), 7)
          .recordWith(() -> got)
          .expectNextCount(7)
          .thenCancel()
          .verify(Duration.ofSeconds(10));
      got.forEach(Batch::close);
      assertTrue(done.await(10, TimeUnit.SECONDS));
      TestSources.awaitNoOutstanding();
    }
    StepVerifier.create(Flux.range(0, 4)
            .transform(Interleave.<Integer, Batch>of(i -> i == 3 ? Flux.error(new IllegalStateException("boom"))
                : ElementTestSupport.batches(20), 4, 2))
            .doOnNext(Batch::close)
            .doOnDiscard(Batch.class, Batch::close))
        .thenConsumeWhile(b -> true)
        .verifyErrorMessage("boom");
  }

  @Test
  void cancelRacingInnerOnNextLeaksNothing() {
    for (int round = 0; round < 300; round++) {
      List<Batch> got = Collections.synchronizedList(new ArrayList<>());
      CountDownLatch done = new CountDownLatch(1);
      BaseSubscriber<Batch> sub = new BaseSubscriber<>() {
        @Override
        protected void hookOnSubscribe(Subscription s) {
          s.request(3);
        }

        @Override
        protected void hookOnNext(Batch b) {
          got.add(b);
        }
      };
      Flux.range(0, 4)
          .transform(Interleave.<Integer, Batch>of(i -> ElementTestSupport.batches(40), 2, 3, 2, true))
          .doFinally(s -> done.countDown())
          .doOnDiscard(Batch.class, Batch::close)
          .subscribe(sub);
      RaceTestUtils.race(sub::cancel, () -> sub.request(10));
      Awaitility.await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(10))
          .until(() -> {
            synchronized (got) {
              got.forEach(Batch::close);
            }
            return MemoryManager.shared().outstandingBytes() == 0;
          });
    }
  }
}
