package dev.sluice.operators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryLimitException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.testing.NoLeaks;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * A cancel of a parallel interleave never interrupts an inner source: an interrupt during a
 * {@code FileChannel} read closes the channel, which a source keeps open for its later passes.
 */
@ExtendWith(NoLeaks.class)
class InterleaveCancelTest {

  @ParameterizedTest(name = "deterministic={0}")
  @ValueSource(booleans = {true, false})
  void cancelDoesNotInterruptAnInnerSourceBlockedInARead(boolean deterministic, @TempDir Path dir) throws Exception {
    Path file = dir.resolve("rows.bin");
    Files.write(file, new byte[4096]);
    CountDownLatch reading = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    CountDownLatch produced = new CountDownLatch(1);
    CountDownLatch passEnded = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    AtomicReference<Throwable> readFailed = new AtomicReference<>();
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      // Input 0 reads its file while the consumer waits for it; it emits a batch after the read.
      Flux<Batch> batches = Flux.range(0, 2)
          .transform(Interleave.<Integer, Batch>of(i -> i != 0 ? Flux.<Batch>never() : Flux.<Batch>generate(sink -> {
            reading.countDown();
            try {
              if (!proceed.await(1, TimeUnit.MINUTES)) {
                throw new IllegalStateException("never told to proceed");
              }
              channel.read(ByteBuffer.allocate(4096), 0);
            } catch (InterruptedException e) {
              interrupted.set(true);
              Thread.currentThread().interrupt();
            } catch (IOException e) {
              readFailed.set(e);
            } finally {
              if (Thread.interrupted()) {
                interrupted.set(true);
              }
            }
            sink.next(ElementTestSupport.batchOf(0)); // the late element: released, not leaked
            produced.countDown();
          }), 2, 1, 2, deterministic))
          .doOnDiscard(Batch.class, Batch::close)
          .doFinally(s -> passEnded.countDown());
      Disposable pass = batches.subscribe(Batch::close);
      assertTrue(reading.await(1, TimeUnit.MINUTES));
      pass.dispose();
      assertTrue(passEnded.await(1, TimeUnit.MINUTES), "the pass ended while its inner source still reads");
      proceed.countDown();
      assertTrue(produced.await(1, TimeUnit.MINUTES));
      assertFalse(interrupted.get(), "the cancel interrupted the inner source");
      assertNull(readFailed.get(), "the inner source's read failed");
      assertTrue(channel.isOpen(), "the cancel closed the inner source's channel");
      TestSources.awaitNoOutstanding();
      assertEquals(4096, channel.read(ByteBuffer.allocate(4096), 0), "the channel reads on for the next pass");
    }
  }

  @ParameterizedTest(name = "deterministic={0}")
  @ValueSource(booleans = {true, false})
  void cancelEndsAnInnerSourceWaitForMemoryWithoutAnInterrupt(boolean deterministic) throws Exception {
    MemoryManager memory = new MemoryManager();
    memory.setLimit(1 << 20);
    memory.setMaxWait(Duration.ofMinutes(10)); // a wait would outlast the test
    var held = memory.pool("consumer").allocate(1 << 20); // what the consumer holds fills the limit
    AtomicReference<Thread> worker = new AtomicReference<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean interrupted = new AtomicBoolean();
    CountDownLatch done = new CountDownLatch(1);
    try {
      Disposable pass = Flux.range(0, 2)
          .transform(Interleave.<Integer, Integer>of(i -> i != 0 ? Flux.<Integer>never()
              : Flux.<Integer>generate(sink -> {
            worker.set(Thread.currentThread());
            try {
              memory.pool("inner").allocate(4096).close();
            } catch (RuntimeException e) {
              failure.set(e);
            } finally {
              interrupted.set(Thread.currentThread().isInterrupted());
              done.countDown();
            }
            sink.complete();
          }), 2, 1, 2, deterministic))
          .subscribe();
      Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> waitsForMemory(worker.get()));
      pass.dispose();
      assertTrue(done.await(1, TimeUnit.MINUTES), "the wait ended");
      assertThat(failure.get()).isInstanceOf(MemoryLimitException.class)
          .hasMessageContaining("the pass was cancelled while it waited for memory");
      assertThat(interrupted).as("interrupted").isFalse();
    } finally {
      held.close();
    }
    memory.checkNoOutstanding();
  }

  private static boolean waitsForMemory(Thread t) {
    return t != null && Arrays.stream(t.getStackTrace()).anyMatch(
        f -> f.getClassName().equals(MemoryManager.class.getName()) && f.getMethodName().equals("await"));
  }
}
