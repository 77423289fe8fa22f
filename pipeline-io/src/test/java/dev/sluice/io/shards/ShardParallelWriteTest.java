package dev.sluice.io.shards;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Example;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.shards.ShardTestData.ExampleList;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shards written in parallel: the set lists them in shard order whatever order they finish in, and
 * the first shard to fail is the error the write throws.
 */
@ExtendWith(NoLeaks.class)
class ShardParallelWriteTest {
  private static final int ROWS = 100;
  private static final int SHARDS = 4;

  @TempDir
  Path dir;

  /**
   * {@code base} whose row {@code waiter} is read only once row {@code signal} has been asked for
   * (or 30 s passed: {@code waited} tells), and whose row {@code broken} (-1: none) then throws;
   * the waiter then also waits until the thread that threw is idle again (its shard's task ended).
   */
  private static ExampleList gated(ExampleList base, long waiter, long signal, long broken, AtomicBoolean waited) {
    CountDownLatch reached = new CountDownLatch(1);
    AtomicReference<Thread> thrower = new AtomicReference<>();
    return new ExampleList(base.schema(), base.rows) {
      @Override
      public Example get(long index) {
        if (index == signal) {
          if (index == broken) {
            thrower.set(Thread.currentThread());
            reached.countDown();
            throw new IllegalStateException("row " + index + " is broken");
          }
          reached.countDown();
        }
        if (index == waiter) {
          try {
            waited.set(reached.await(30, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          }
          Thread t = thrower.get();
          if (t != null) {
            Awaitility.await().atMost(Duration.ofSeconds(30))
                .until(() -> t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING
                || t.getState() == Thread.State.TERMINATED);
          }
        }
        return super.get(index);
      }
    };
  }

  @Test
  void shardsFinishingOutOfOrderAreListedInShardOrder() {
    ExampleList data = ShardTestData.mixed(ROWS, 3);
    List<ShardInfo> sequential = Shards.write(data, dir.resolve("seq"),
        WriteOptions.defaults().withNumShards(SHARDS).withWorkers(1));
    AtomicBoolean waited = new AtomicBoolean();
    // shard 0 cannot finish before the last shard has read its last row
    List<ShardInfo> parallel = Shards.write(gated(data, 0, ROWS - 1, -1, waited), dir.resolve("par"),
        WriteOptions.defaults().withNumShards(SHARDS).withWorkers(SHARDS));
    assertTrue(waited.get(), "the shards ran at once, the last one ahead of the first");
    assertEquals(sequential, parallel, "the same shards, bytes and checksums, in shard order");
    try (ShardSet set = Shards.open(dir.resolve("par"))) {
      assertEquals(parallel, set.shards());
      assertEquals(ROWS, set.size());
    }
  }

  @Test
  void theFirstShardToFailIsTheErrorThrown() throws Exception {
    ExampleList data = ShardTestData.mixed(ROWS, 4);
    for (int round = 0; round < 5; round++) {
      AtomicBoolean waited = new AtomicBoolean();
      // the last shard fails and ends while the first waits: the first then stops, and is not the error
      Path out = dir.resolve("out" + round);
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> Shards.write(
          gated(data, 1, 80, 80, waited), out, WriteOptions.defaults().withNumShards(SHARDS).withWorkers(SHARDS)));
      assertEquals("row 80 is broken", e.getMessage());
      assertFalse(Files.exists(out), "nothing at the shard set's path");
    }
    try (Stream<Path> s = Files.list(dir)) {
      assertEquals(List.of(), s.toList(), "no temporary left behind");
    }
  }
}
