package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
