package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** A memory limit backpressures a pipeline instead of letting it grow, and fails clearly when it cannot fit. */
class MemoryBudgetTest {
  private static final long MIB = 1L << 20;
  private static final PipelineContext CTX = PipelineContext.defaults().withSeed(3);
  /** Batches of 1 MiB: 256 rows of float32[1024] (plus their 2 KiB labels). */
  private static final int ROWS = 256;
  private static final int DIM = 1024;

  private static Pipeline<Batch> oneMiBBatches(int batches, MemoryManager memory, int prefetch) {
    Pipeline<Batch> p = Pipeline.from(Datasets.synthetic((long) ROWS * batches, DIM, 5)).shuffle().batch(ROWS)
        .withOptions(Options.builder().memory(memory).build());
    return prefetch > 0 ? p.prefetch(prefetch) : p;
  }

  /** What a consumer saw: per batch, its indices and a digest of its values. */
  private static List<String> consumeSlowly(Pipeline<Batch> pipeline, MemoryManager memory, long heldBackAt) {
    List<String> seen = new ArrayList<>();
    try (PipelineIterator<Batch> batches = pipeline.iterate(CTX)) {
      // the consumer is slow: it starts only once the producer ran as far ahead as it may
      Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
          .until(() -> memory.reservedBytes() >= heldBackAt);
      for (Batch b : batches) {
        try (b) {
          ByteBuffer x = b.column("x").values().data();
          seen.add(Arrays.toString(b.indices()) + "/" + x.hashCode());
        }
      }
    }
    return seen;
  }

  @Test
  void underA64MiBLimitAPipelineOf1MiBBatchesStaysUnderItAndReadsTheSame() {
    MemoryManager unlimited = new MemoryManager();
    List<String> free = consumeSlowly(oneMiBBatches(160, unlimited, 120), unlimited, 100 * MIB);
    assertThat(unlimited.highWaterMark()).isGreaterThan(100 * MIB); // without a limit it runs 120 batches ahead
    unlimited.checkNoOutstanding();
    unlimited.trim();

    MemoryManager limited = new MemoryManager();
    limited.setLimit(64 * MIB);
    List<String> bounded = consumeSlowly(oneMiBBatches(160, limited, 120), limited, 62 * MIB);
    assertThat(limited.highWaterMark()).isLessThanOrEqualTo(64 * MIB).isGreaterThanOrEqualTo(62 * MIB);
    limited.checkNoOutstanding();
    limited.trim();

    assertThat(bounded).hasSize(160).isEqualTo(free);
  }

  @Test
  void aConsumerThatHoldsEveryBatchWithoutPrefetchFailsInsteadOfHanging() {
    MemoryManager memory = new MemoryManager();
    memory.setLimit(4 * MIB);
    memory.setMaxWait(Duration.ofMillis(200));
    List<Batch> held = new ArrayList<>();
    try (PipelineIterator<Batch> batches = oneMiBBatches(10, memory, 0).iterate(CTX)) {
      assertThatThrownBy(() -> {
        while (batches.hasNext()) {
          held.add(batches.next());
        }
      }).isInstanceOf(MemoryLimitException.class)
          .hasMessageContaining("memory limit of 4.0 MiB")
          .hasMessageContaining("stage 'batch' needs 1.0 MiB")
          .hasMessageContaining("batch 3.0 MiB");
    }
    assertThat(held).hasSize(3);
    held.forEach(Batch::close);
    memory.checkNoOutstanding();
    assertThat(memory.highWaterMark()).isLessThanOrEqualTo(4 * MIB);
  }

  @Test
  void aBatchLargerThanTheLimitFailsAtSubscriptionNamingTheStageAndSizes() {
    MemoryManager memory = new MemoryManager();
    memory.setLimit(MIB / 2);
    try (PipelineIterator<Batch> batches = oneMiBBatches(2, memory, 2).iterate(CTX)) {
      assertThatThrownBy(batches::hasNext)
          .isInstanceOf(MemoryLimitException.class)
          .hasMessageStartingWith("batch(256): one batch of 256 rows needs 1.0 MiB")
          .hasMessageContaining("x 1.0 MiB, label 4.0 KiB")
          .hasMessageContaining("the memory limit is 512.0 KiB");
    }
    assertThat(memory.allocatedBytesTotal()).isZero(); // refused before any work
    memory.checkNoOutstanding();
  }

  @Test
  void aLimitThatOneBatchCannotMeetFailsAtOnceInsteadOfWaiting() {
    MemoryManager memory = new MemoryManager();
    memory.setMaxWait(Duration.ofMinutes(10)); // a wait would outlast the test
    memory.setLimit(71 * 1024); // a batch of 1000 rows of float32[16] and int64 needs 64 KiB + 8 KiB
    Options options = Options.builder().memory(memory).build();
    Pipeline<Batch> index = Pipeline.from(Datasets.synthetic(100_000, 16, 5)).batch(1000).withOptions(options);
    Pipeline<Batch> element = Pipeline.from(TestSources.streaming(Datasets.synthetic(100_000, 16, 5)))
        .take(5000).batch(1000).withOptions(options);
    for (Pipeline<Batch> p : List.of(index, index.prefetch(2))) {
      StepVerifier.create(p.flux(CTX))
          .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(MemoryLimitException.class)
              .hasMessageStartingWith("batch(1000): one batch of 1000 rows needs 72.0 KiB"))
          .verify(Duration.ofSeconds(30));
    }
    assertThat(memory.allocatedBytesTotal()).isZero(); // refused before any work
    // a stream of unknown schema: its first batch holds all there is and fails at once instead of waiting
    StepVerifier.create(element.flux(CTX))
        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(MemoryLimitException.class)
            .hasMessageContaining("none can come back"))
        .verify(Duration.ofSeconds(30));
    memory.checkNoOutstanding();
  }

  @Test
  void aBatchOfMoreRowsThanThePassHoldsIsSizedByThePass() {
    List<Batch> batches = Pipeline.from(Datasets.synthetic(1000, 4, 5)).batch(Integer.MAX_VALUE).flux(CTX)
        .collectList().block(Duration.ofSeconds(30));
    assertThat(batches).hasSize(1);
    assertThat(batches.get(0).size()).isEqualTo(1000);
    batches.forEach(Batch::close);
  }

  private static boolean aThreadWaitsForMemory() {
    return Thread.getAllStackTraces().values().stream().anyMatch(stack -> Arrays.stream(stack)
        .anyMatch(f -> f.getClassName().equals(MemoryManager.class.getName()) && f.getMethodName().equals("await")));
  }

  @Test
  void closingWhileTheProducerWaitsForMemoryEndsTheWait() {
    MemoryManager memory = new MemoryManager();
    memory.setLimit(3 * MIB / 2); // one batch fits, the next waits (the default wait is a minute)
    PipelineIterator<Batch> batches = oneMiBBatches(10, memory, 4).iterate(CTX);
    Batch kept = batches.next();
    Awaitility.await().atMost(Duration.ofSeconds(30)).until(MemoryBudgetTest::aThreadWaitsForMemory);
    batches.close();
    assertThat(memory.outstandingBytes()).isEqualTo(MIB + ROWS * 8); // only the batch the consumer holds
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !aThreadWaitsForMemory()); // the cancel ended it
    kept.close();
    memory.checkNoOutstanding();
  }
}
