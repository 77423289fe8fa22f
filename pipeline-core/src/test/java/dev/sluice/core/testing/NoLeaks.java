package dev.sluice.core.testing;

import dev.sluice.core.MemoryManager;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension: fails a test that leaves off-heap bytes outstanding in
 * {@link MemoryManager#shared()}. Use with {@code @ExtendWith(NoLeaks.class)}.
 *
 * <p>After an asynchronous cancel, discard hooks run on the worker thread after {@code cancel()}
 * returns: the test itself must wait (a {@code doFinally} latch) before it ends.
 */
public final class NoLeaks implements BeforeEachCallback, AfterEachCallback {

  @Override
  public void beforeEach(ExtensionContext context) {
    long before = MemoryManager.shared().outstandingBytes();
    if (before != 0) {
      throw new IllegalStateException("a previous test leaked off-heap memory: "
          + MemoryManager.shared().outstandingBytesByStage());
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    MemoryManager.shared().checkNoOutstanding();
  }

  /** Asserts that {@code manager} has no bytes outstanding, naming the stages that do. */
  public static void assertNoOutstanding(MemoryManager manager) {
    manager.checkNoOutstanding();
  }
}
