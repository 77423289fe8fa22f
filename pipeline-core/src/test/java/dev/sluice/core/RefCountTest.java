package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.spi.RefCount;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The last release runs the release action exactly once; misuse fails instead of releasing twice. */
class RefCountTest {
  private static final class Counted extends RefCount {
    final AtomicInteger released = new AtomicInteger();

    @Override
    protected void onLastRelease() {
      released.incrementAndGet();
    }
  }

  @Test
  void theLastReleaseRunsTheActionOnce() {
    Counted c = new Counted();
    c.retain();
    c.retain();
    assertThat(c.refCount()).isEqualTo(3);
    assertThat(c.release()).isFalse();
    assertThat(c.release()).isFalse();
    assertThat(c.released).hasValue(0);
    assertThat(c.release()).isTrue();
    assertThat(c.released).hasValue(1);
    assertThat(c.refCount()).isZero();
  }

  @Test
  void retainAfterTheLastReleaseAndReleasePastZeroFail() {
    Counted c = new Counted();
    c.release();
    assertThatThrownBy(c::retain).isInstanceOf(IllegalStateException.class).hasMessageContaining("already released");
    assertThatThrownBy(c::release).isInstanceOf(IllegalStateException.class);
    assertThat(c.released).hasValue(1);
    assertThat(c.refCount()).isZero();
  }

  @Test
  void racingReleasesRunTheActionOnce() throws InterruptedException {
    for (int round = 0; round < 200; round++) {
      Counted c = new Counted();
      int holders = 4;
      for (int i = 1; i < holders; i++) {
        c.retain();
      }
      CountDownLatch go = new CountDownLatch(1);
      Thread[] threads = new Thread[holders];
      for (int i = 0; i < holders; i++) {
        threads[i] = new Thread(() -> {
          try {
            go.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          c.release();
        });
        threads[i].start();
      }
      go.countDown();
      for (Thread t : threads) {
        t.join();
      }
      assertThat(c.released).hasValue(1);
    }
  }
}
