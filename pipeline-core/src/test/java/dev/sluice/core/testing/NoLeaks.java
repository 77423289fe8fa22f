package dev.sluice.core.testing;

import dev.sluice.core.MemoryManager;
import dev.sluice.core.internal.PassTasks;
import dev.sluice.core.internal.TrackedScheduler;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.core.scheduler.Schedulers;

/**
 * JUnit 5 extension: fails a test that leaves off-heap bytes outstanding in
 * {@link MemoryManager#shared()}, or whose pipeline passes scheduled a task that their iterator's
 * {@code close()} cannot wait for. Use with {@code @ExtendWith(NoLeaks.class)}.
 *
 * <p>After an asynchronous cancel, discard hooks run on the worker thread after {@code cancel()}
 * returns: the test itself must wait (a {@code doFinally} latch) before it ends.
 *
 * <p>While a test runs, a Reactor schedule hook watches every task handed to a Reactor scheduler:
 * one scheduled on behalf of a pass ({@link PassTasks#current()} set) that did not come through a
 * {@link TrackedScheduler} is an asynchronous stage whose work a closed iterator would not wait
 * for, and fails the test with the stack trace of the scheduling call.
 */
public final class NoLeaks implements BeforeEachCallback, AfterEachCallback {
  private static final String HOOK = "sluice-untracked-pass-task";
  private static final Queue<Throwable> UNTRACKED = new ConcurrentLinkedQueue<>();

  @Override
  public void beforeEach(ExtensionContext context) {
    long before = MemoryManager.shared().outstandingBytes();
    if (before != 0) {
      throw new IllegalStateException("a previous test leaked off-heap memory: "
          + MemoryManager.shared().outstandingBytesByStage());
    }
    UNTRACKED.clear();
    Schedulers.onScheduleHook(HOOK, NoLeaks::checkTracked);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    Schedulers.resetOnScheduleHook(HOOK);
    MemoryManager.shared().checkNoOutstanding();
    Throwable untracked = UNTRACKED.poll();
    if (untracked != null) {
      throw new AssertionError((UNTRACKED.size() + 1) + " tasks of pipeline passes went to schedulers that do not "
          + "count them for their pass (the first one's scheduling call is the cause)", untracked);
    }
  }

  private static Runnable checkTracked(Runnable task) {
    if (PassTasks.current() != null && !TrackedScheduler.isPassTask(task)) {
      UNTRACKED.add(new IllegalStateException("a task scheduled on behalf of a pass without TrackedScheduler: " + task));
    }
    return task;
  }

  /** Asserts that {@code manager} has no bytes outstanding, naming the stages that do. */
  public static void assertNoOutstanding(MemoryManager manager) {
    manager.checkNoOutstanding();
  }
}
