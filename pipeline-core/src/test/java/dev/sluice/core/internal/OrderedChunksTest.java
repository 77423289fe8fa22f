package dev.sluice.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MemoryManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntPredicate;
import java.util.function.UnaryOperator;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;
import reactor.util.context.Context;

class OrderedChunksTest {
  /** An element that counts how often it was emitted and discarded. */
  static final class Item {
    final int value;
    final AtomicInteger emitted = new AtomicInteger();
    final AtomicInteger discarded = new AtomicInteger();
    final AtomicBoolean delivered = new AtomicBoolean();

    Item(int value) {
      this.value = value;
    }
  }

  /**
   * A minimal front-end: chunks of {@code chunkSize} elements (the last one shorter), each mapped
   * inline when {@code inline} holds for its number, by {@code fn} applied in place.
   */
  static final class Chunker<T> extends OrderedChunks<T> implements CoreSubscriber<T> {
    final int chunkSize;
    final IntPredicate inline;
    final UnaryOperator<T> fn;
    Subscription upstream;
    Object[] filling;
    int count;
    int chunkNumber;
    long requestedUpstream;

    Chunker(CoreSubscriber<? super T> actual, int parallelism, boolean ordered, Scheduler scheduler, int chunkSize,
        IntPredicate inline, UnaryOperator<T> fn) {
      super(actual, parallelism, ordered, scheduler, false);
      this.chunkSize = chunkSize;
      this.inline = inline;
      this.fn = fn;
    }

    @Override
    public Context currentContext() {
      return context();
    }

    @Override
    public void onSubscribe(Subscription s) {
      upstream = s;
      actualSubscriber().onSubscribe(this);
      drain();
    }

    @Override
    public synchronized void onNext(T t) {
      if (isStopped()) {
        Operators.onDiscard(t, context());
        return;
      }
      if (filling == null) {
        filling = new Object[chunkSize];
      }
      filling[count++] = t;
      if (count == chunkSize) {
        handOn();
      }
    }

    void handOn() {
      Chunk c;
      synchronized (this) {
        if (count == 0 || isStopped()) {
          return;
        }
        c = new Chunk(filling, count, 0L);
        filling = null;
        count = 0;
      }
      accept(c, inline.test(chunkNumber++));
    }

    @Override
    public void onError(Throwable t) {
      handOn();
      inputDone(t);
    }

    @Override
    public void onComplete() {
      handOn();
      inputDone(null);
    }

    @Override
    @SuppressWarnings("unchecked")
    protected int map(Chunk c) {
      Object[] items = c.items();
      for (int i = 0; i < c.size(); i++) {
        try {
          items[i] = fn.apply((T) items[i]);
        } catch (RuntimeException e) {
          c.fail(e);
          for (int j = i; j < c.size(); j++) {
            Operators.onDiscard(items[j], context());
            items[j] = null;
          }
          return i;
        }
      }
      return c.size();
    }

    @Override
    protected synchronized void onStop() {
      upstream.cancel();
      for (int j = 0; j < count; j++) {
        Operators.onDiscard(filling[j], context());
        filling[j] = null;
      }
      count = 0;
    }

    @Override
    protected void replenish(long released) {
      long want = 4L * chunkSize - (requestedUpstream - released);
      if (want > 0) {
        requestedUpstream += want;
        upstream.request(want);
      }
    }
  }

  static <T> Flux<T> chunks(Flux<T> source, int parallelism, boolean ordered, Scheduler scheduler, int chunkSize,
      IntPredicate inline, UnaryOperator<T> fn) {
    return new Flux<T>() {
      @Override
      public void subscribe(CoreSubscriber<? super T> actual) {
        source.subscribe(new Chunker<>(actual, parallelism, ordered, scheduler, chunkSize, inline, fn));
      }
    };
  }

  static List<Item> items(int n) {
    List<Item> items = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      items.add(new Item(i));
    }
    return items;
  }

  /** The elements the upstream delivered, as the map's input. */
  static Flux<Item> source(List<Item> items) {
    return Flux.fromIterable(items).doOnNext(it -> it.delivered.set(true));
  }

  /** Every element was emitted or discarded exactly once (the source discards what it did not deliver). */
  static void assertEachEmittedOrDiscardedOnce(List<Item> items) {
    try {
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> items.stream()
          .allMatch(it -> it.emitted.get() + it.discarded.get() == 1));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      // the assertion below names the elements
    }
    assertThat(items.stream().filter(it -> it.emitted.get() + it.discarded.get() != 1)
        .map(it -> it.value + ":" + it.delivered + "/" + it.emitted + "/" + it.discarded).toList()).isEmpty();
    assertThat(items).allMatch(it -> it.emitted.get() + it.discarded.get() == 1);
  }

  @Test
  void emitsInInputOrderWhateverTheParallelismAndThePlacement() {
    List<IntPredicate> placements = List.of(n -> false, n -> true, n -> n % 3 == 1);
    for (int parallelism : new int[] {1, 2, 4}) {
      for (IntPredicate inline : placements) {
        List<Integer> out = chunks(Flux.range(0, 500), parallelism, true, Schedulers.parallel(), 7, inline, i -> {
          OrderedParallelTest.spin(i * 17 + parallelism);
          return -i;
        }).collectList().block(Duration.ofMinutes(1));
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
          expected.add(-i);
        }
        assertThat(out).isEqualTo(expected);
      }
    }
  }

  @Test
  void finishOrderEmitsAChunkThatFinishesFirstFirst() throws InterruptedException {
    CountDownLatch laterChunkEmitted = new CountDownLatch(1);
    AtomicBoolean waited = new AtomicBoolean();
    List<Integer> out = new CopyOnWriteArrayList<>();
    Flux<Integer> flux = chunks(Flux.range(0, 40), 2, false, Schedulers.boundedElastic(), 10, n -> false, i -> {
      if (i == 0) {
        try {
          waited.set(laterChunkEmitted.await(1, TimeUnit.MINUTES)); // held until a later chunk went out
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return i;
    });
    StepVerifier.create(flux.doOnNext(i -> {
      out.add(i);
      if (i >= 10) {
        laterChunkEmitted.countDown();
      }
    })).expectNextCount(40).verifyComplete();
    assertTrue(waited.get(), "the first chunk waited for a later one to be emitted");
    assertThat(out.get(0)).isGreaterThanOrEqualTo(10);
    assertThat(out).containsExactlyInAnyOrderElementsOf(Flux.range(0, 40).collectList().block());
    // each chunk's results stay in order
    List<Integer> first = out.stream().filter(i -> i < 10).toList();
    assertThat(first).isSorted();
  }

  @Test
  void anInlineChunkMapsOnTheThreadThatHandsItOver() {
    Thread caller = Thread.currentThread();
    List<Thread> mappers = new CopyOnWriteArrayList<>();
    Scheduler refusing = Schedulers.fromExecutor(r -> {
      throw new AssertionError("an inline chunk went to a worker");
    });
    List<Integer> out = chunks(Flux.range(0, 100), 2, true, refusing, 8, n -> true, i -> {
      mappers.add(Thread.currentThread());
      return i * 2;
    }).collectList().block(Duration.ofMinutes(1));
    assertThat(out).hasSize(100).isSorted();
    assertThat(mappers).hasSize(100).allMatch(t -> t == caller);
  }

  @Test
  void cancelEmitsOrDiscardsEveryElementExactlyOnce() {
    for (int round = 0; round < 40; round++) {
      List<Item> items = items(300);
      int take = 1 + round * 7 % 150;
      boolean ordered = round % 2 == 0;
      int seed = round;
      List<Item> got = chunks(source(items), 3, ordered, Schedulers.parallel(), 5, n -> n % 4 == seed % 4,
          it -> {
            OrderedParallelTest.spin(it.value + seed);
            return it;
          })
          .doOnDiscard(Item.class, it -> it.discarded.incrementAndGet())
          .take(take, true)
          .doOnNext(it -> it.emitted.incrementAndGet())
          .collectList().block(Duration.ofMinutes(1));
      assertThat(got).hasSize(take);
      assertEachEmittedOrDiscardedOnce(items);
    }
  }

  @Test
  void aTaskFailureComesAfterTheResultsBeforeItAndDiscardsTheRest() {
    for (boolean ordered : new boolean[] {true, false}) {
      List<Item> items = items(200);
      IllegalStateException boom = new IllegalStateException("boom");
      List<Item> got = new CopyOnWriteArrayList<>();
      StepVerifier.create(chunks(source(items), 2, ordered, Schedulers.parallel(), 6, n -> n % 2 == 0,
          it -> {
            if (it.value == 37) {
              throw boom;
            }
            return it;
          })
          .doOnDiscard(Item.class, it -> it.discarded.incrementAndGet())
          .doOnNext(it -> {
            it.emitted.incrementAndGet();
            got.add(it);
          }))
          .thenConsumeWhile(it -> true)
          .verifyErrorSatisfies(e -> assertThat(e).isSameAs(boom));
      if (ordered) {
        assertThat(got).extracting(it -> it.value).isEqualTo(Flux.range(0, 37).collectList().block());
      }
      assertThat(got).extracting(it -> it.value).contains(36); // the failing chunk's results before the failure
      assertEachEmittedOrDiscardedOnce(items);
    }
  }

  @Test
  void aRejectedChunkEndsTheFluxWithTheRejection() {
    List<Item> items = items(50);
    Scheduler refusing = Schedulers.fromExecutor(r -> {
      throw new RejectedExecutionException("no workers");
    });
    StepVerifier.create(chunks(source(items), 2, true, refusing, 4, n -> false, it -> it)
            .doOnDiscard(Item.class, it -> it.discarded.incrementAndGet())
            .doOnNext(it -> it.emitted.incrementAndGet()))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(RejectedExecutionException.class))
        .verify(Duration.ofMinutes(1));
    assertThat(items).allMatch(it -> it.emitted.get() == 0);
    assertThat(items.subList(0, 4)).allMatch(it -> it.delivered.get()); // the first chunk, handed over and rejected
    assertEachEmittedOrDiscardedOnce(items);
  }

  @Test
  void aCancelEndsAWorkersWaitForMemoryWithoutAnInterrupt() throws InterruptedException {
    MemoryManager memory = new MemoryManager();
    memory.setLimit(1 << 20);
    memory.setMaxWait(Duration.ofMinutes(10)); // a wait would outlast the test
    var held = memory.pool("consumer").allocate(1 << 20);
    AtomicReference<Thread> worker = new AtomicReference<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean interrupted = new AtomicBoolean();
    CountDownLatch done = new CountDownLatch(1);
    reactor.core.Disposable subscription = chunks(Flux.just(1), 1, true, Schedulers.boundedElastic(), 1, n -> false,
        i -> {
          worker.set(Thread.currentThread());
          try {
            memory.pool("task").allocate(4096).close();
          } catch (RuntimeException e) {
            failure.set(e);
          } finally {
            interrupted.set(Thread.currentThread().isInterrupted());
            done.countDown();
          }
          return i;
        }).subscribe();
    Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> waitsForMemory(worker.get()));
    subscription.dispose();
    assertTrue(done.await(1, TimeUnit.MINUTES), "the wait ended");
    assertThat(failure.get()).isInstanceOf(MemoryLimitException.class)
        .hasMessageContaining("the pass was cancelled while it waited for memory");
    assertThat(interrupted).as("interrupted").isFalse();
    held.close();
    memory.checkNoOutstanding();
  }

  private static boolean waitsForMemory(Thread t) {
    return t != null && Arrays.stream(t.getStackTrace()).anyMatch(
        f -> f.getClassName().equals(MemoryManager.class.getName()) && f.getMethodName().equals("await"));
  }
}
