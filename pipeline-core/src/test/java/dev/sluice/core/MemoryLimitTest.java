package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.PooledBuffer;
import dev.sluice.core.spi.WaitCancellation;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The limit of a memory manager: reuse and trimming first, then waiting, then a clear failure. */
class MemoryLimitTest {
  private static final long MIB = 1L << 20;

  @Test
  void unlimitedByDefaultAndTheHighWaterMarkFollowsWhatIsHeld() {
    MemoryManager m = new MemoryManager();
    assertThat(m.limit()).isEqualTo(MemoryManager.UNLIMITED);
    PooledBuffer a = m.pool("a").allocate(3 * MIB); // a 4 MiB size class
    PooledBuffer b = m.pool("b").allocate(100);      // 4 KiB
    assertThat(m.reservedBytes()).isEqualTo(4 * MIB + 4096);
    a.close();
    b.close();
    assertThat(m.outstandingBytes()).isZero();
    assertThat(m.reservedBytes()).isEqualTo(4 * MIB + 4096); // kept for reuse
    assertThat(m.highWaterMark()).isEqualTo(4 * MIB + 4096);
    m.trim();
    assertThat(m.reservedBytes()).isZero();
    m.resetHighWaterMark();
    assertThat(m.highWaterMark()).isZero();
  }

  @Test
  void aBufferLargerThanTheLimitFailsAtOnceNamingTheStage() {
    MemoryManager m = new MemoryManager();
    m.setLimit(8 * MIB);
    assertThatThrownBy(() -> m.pool("batch").allocate(9 * MIB))
        .isInstanceOf(MemoryLimitException.class)
        .hasMessageContaining("stage 'batch' asked for 9.0 MiB")
        .hasMessageContaining("a buffer of 16.0 MiB")
        .hasMessageContaining("memory limit is 8.0 MiB");
    assertThat(m.reservedBytes()).isZero();
  }

  @Test
  void keptBuffersAreDroppedBeforeTheyPushAnAllocationOverTheLimit() {
    MemoryManager m = new MemoryManager();
    m.setLimit(8 * MIB);
    m.pool("decode").allocate(4 * MIB).close();
    m.pool("decode").allocate(2 * MIB).close();
    assertThat(m.reservedBytes()).isEqualTo(6 * MIB); // both kept
    try (PooledBuffer b = m.pool("batch").allocate(4 * MIB)) {
      assertThat(b.size()).isEqualTo(4 * MIB);
      assertThat(m.reservedBytes()).isLessThanOrEqualTo(8 * MIB);
    }
    assertThat(m.highWaterMark()).isLessThanOrEqualTo(8 * MIB);
  }

  @Test
  void anAllocationOverTheLimitWaitsUntilMemoryComesBack() throws Exception {
    MemoryManager m = new MemoryManager();
    m.setLimit(4 * MIB);
    PooledBuffer held = m.pool("batch").allocate(3 * MIB);
    CountDownLatch started = new CountDownLatch(1);
    CompletableFuture<PooledBuffer> waiting = CompletableFuture.supplyAsync(() -> {
      started.countDown();
      return m.pool("batch").allocate(2 * MIB);
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(waiting).isNotDone(); // the allocation cannot fit while 4 MiB are held
    held.close();
    try (PooledBuffer b = waiting.get(10, TimeUnit.SECONDS)) {
      assertThat(b.size()).isEqualTo(2 * MIB);
    }
    assertThat(m.highWaterMark()).isLessThanOrEqualTo(4 * MIB);
  }

  @Test
  void whenNothingComesBackTheAllocationFailsWithTheStagesHoldingMemory() {
    MemoryManager m = new MemoryManager();
    m.setLimit(4 * MIB);
    m.setMaxWait(Duration.ofMillis(50));
    try (PooledBuffer held = m.pool("prefetch").allocate(3 * MIB)) {
      assertThatThrownBy(() -> m.pool("batch").allocate(MIB))
          .isInstanceOfSatisfying(MemoryLimitException.class, e -> {
            assertThat(e.limit()).isEqualTo(4 * MIB);
            assertThat(e.requested()).isEqualTo(MIB);
            assertThat(e.outstandingByStage()).containsEntry("prefetch", 3 * MIB);
          })
          .hasMessageContaining("memory limit of 4.0 MiB (4194304 bytes) reached: stage 'batch' needs 1.0 MiB")
          .hasMessageContaining("prefetch 3.0 MiB")
          .hasMessageContaining("nothing came back within 0.0500 s");
    }
  }

  @Test
  void cancellingThePassEndsItsWaitForMemoryWithoutAnInterrupt() throws Exception {
    MemoryManager m = new MemoryManager();
    m.setLimit(4 * MIB);
    m.setMaxWait(Duration.ofMinutes(10)); // a wait would outlast the test
    WaitCancellation pass = new WaitCancellation();
    AtomicBoolean interrupted = new AtomicBoolean();
    try (PooledBuffer held = m.pool("prefetch").allocate(4 * MIB)) {
      CompletableFuture<Throwable> waiting = CompletableFuture.supplyAsync(() -> {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        pass.run(() -> {
          try {
            m.pool("batch").allocate(MIB).close();
          } catch (RuntimeException e) {
            failure.set(e);
          }
          interrupted.set(Thread.currentThread().isInterrupted());
        });
        return failure.get();
      });
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> m.outstandingBytes() == 4 * MIB
          && Thread.getAllStackTraces().values().stream().anyMatch(MemoryLimitTest::waitsForMemory));
      assertThat(waiting).isNotDone();
      pass.cancel();
      assertThat(waiting.get(30, TimeUnit.SECONDS))
          .isInstanceOf(MemoryLimitException.class)
          .hasMessageContaining("stage 'batch' needs 1.0 MiB")
          .hasMessageContaining("the pass was cancelled while it waited for memory to come back")
          .hasCauseInstanceOf(CancellationException.class);
      assertThat(interrupted).isFalse();
      // a cancelled pass does not wait again
      pass.run(() -> assertThatThrownBy(() -> m.pool("batch").allocate(MIB))
          .hasMessageContaining("the pass was cancelled"));
    }
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
    m.checkNoOutstanding();
  }

  private static boolean waitsForMemory(StackTraceElement[] stack) {
    for (StackTraceElement f : stack) {
      if (f.getClassName().equals(MemoryManager.class.getName()) && f.getMethodName().equals("await")) {
        return true;
      }
    }
    return false;
  }

  private static final Schema ROWS = Schema.of(
      new TensorSpec("x", DType.FLOAT32, Shape.of(16)),
      new TensorSpec("label", DType.INT64, Shape.scalar()));

  @Test
  void aBatchWhoseOwnBuffersAreAllThatIsHeldFailsAtOnceInsteadOfWaiting() {
    MemoryManager m = new MemoryManager();
    m.setLimit(71 * 1024); // x takes 64 KiB, label needs 8 KiB more: it can never fit
    m.setMaxWait(Duration.ofMinutes(10));
    long started = System.nanoTime();
    assertThatThrownBy(() -> BatchBuilder.create(ROWS, 1000, m.pool("batch")))
        .isInstanceOf(MemoryLimitException.class)
        .hasMessageContaining("stage 'batch' needs 8.0 KiB")
        .hasMessageContaining("already holds 64.0 KiB")
        .hasMessageContaining("none can come back");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofMinutes(1));
    assertThat(m.outstandingBytes()).isZero();
  }

  @Test
  void aBatchWaitsWhileBuffersHeldElsewhereCanComeBack() throws Exception {
    MemoryManager m = new MemoryManager();
    m.setLimit(72 * 1024);
    PooledBuffer consumer = m.pool("consumer").allocate(8 * 1024); // a batch the consumer still holds
    CountDownLatch started = new CountDownLatch(1);
    CompletableFuture<Batch> building = CompletableFuture.supplyAsync(() -> {
      started.countDown();
      try (BatchBuilder b = BatchBuilder.create(ROWS, 1000, m.pool("batch"))) {
        return b.build();
      }
    });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> m.outstandingBytesByStage().containsKey("batch"));
    assertThat(building).isNotDone();
    consumer.close();
    try (Batch b = building.get(10, TimeUnit.SECONDS)) {
      assertThat(b.size()).isZero();
    }
    assertThat(m.outstandingBytes()).isZero();
  }

  @Test
  void checkFitsRefusesABatchThatCanNeverBeHeldNamingTheFieldsAndSizes() {
    MemoryManager m = new MemoryManager();
    m.setLimit(71 * 1024);
    assertThatThrownBy(() -> BatchBuilder.checkFits("batch(1000)", ROWS, 1000, m))
        .isInstanceOfSatisfying(MemoryLimitException.class, e -> {
          assertThat(e.limit()).isEqualTo(71 * 1024);
          assertThat(e.requested()).isEqualTo(72 * 1024);
        })
        .hasMessageStartingWith("batch(1000): one batch of 1000 rows needs 72.0 KiB")
        .hasMessageContaining("x 64.0 KiB, label 8.0 KiB");
    BatchBuilder.checkFits("batch(100)", ROWS, 100, m); // 8 KiB + 4 KiB
    assertThat(m.reservedBytes()).isZero(); // a check allocates nothing
  }

  @Test
  void checkFitsRefusesABufferLargerThanAnyBufferCanBe() {
    MemoryManager m = new MemoryManager();
    assertThatThrownBy(() -> BatchBuilder.checkFits("batch(2147483647)", ROWS, Integer.MAX_VALUE, m))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("batch(2147483647): one batch of 2147483647 rows needs")
        .hasMessageContaining("field 'x'")
        .hasMessageContaining("a buffer holds at most 1.0 GiB");
    Schema strings = Schema.of(new TensorSpec("s", DType.STRING, Shape.scalar()));
    assertThatThrownBy(() -> BatchBuilder.checkFits("batch(2147483647)", strings, Long.MAX_VALUE / 4, m))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("field 's'");
  }

  @Test
  void aScopeCountsItsOwnBytesAndSharesTheLimitAndTheBuffers() {
    MemoryManager m = new MemoryManager();
    m.setLimit(8 * MIB);
    MemoryManager scope = m.newScope("pass");
    PooledBuffer own = m.pool("batch").allocate(MIB);
    PooledBuffer pass = scope.pool("batch").allocate(2 * MIB);
    assertThat(scope.outstandingBytes()).isEqualTo(2 * MIB);
    assertThat(m.outstandingBytesByStage()).containsEntry("batch", 3 * MIB);
    assertThat(scope.limit()).isEqualTo(8 * MIB);
    assertThatThrownBy(() -> scope.setLimit(MIB)).isInstanceOf(UnsupportedOperationException.class);
    pass.close();
    own.close();
    assertThat(scope.outstandingBytes()).isZero();
    long allocated = m.pool("batch").allocatedBytesTotal();
    scope.pool("batch").allocate(2 * MIB).close(); // reuses the manager's kept buffer
    assertThat(m.pool("batch").allocatedBytesTotal()).isEqualTo(allocated);
    Awaitility.await().atMost(Duration.ofSeconds(1)).until(() -> m.outstandingBytes() == 0);
  }

  @Test
  void badSettingsAreRefused() {
    MemoryManager m = new MemoryManager();
    assertThatThrownBy(() -> m.setLimit(0)).hasMessage("memory limit > 0 required but it was 0");
    assertThatThrownBy(() -> m.setMaxWait(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
  }
}
