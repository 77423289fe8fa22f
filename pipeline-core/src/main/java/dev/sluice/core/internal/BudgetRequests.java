package dev.sluice.core.internal;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Budgets in bytes asked for while something runs (a pipeline's pass): while any request is open,
 * {@link #largest()} is the largest of them. Thread-safe.
 */
public final class BudgetRequests {
  /** The budget of the Parquet readers' page cache that running pipelines ask for ({@code Options.pageCacheBytes}). */
  public static final BudgetRequests PAGE_CACHE = new BudgetRequests();

  private final Map<Object, Long> open = new IdentityHashMap<>();
  private volatile long largest = -1;

  /** Requests with nothing open. */
  public BudgetRequests() {}

  /**
   * Asks for {@code bytes} until the returned request is closed (closing is idempotent).
   *
   * @throws IllegalArgumentException when {@code bytes} is negative
   */
  public Request request(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("a budget must be >= 0 bytes but it was " + bytes);
    }
    Request r = new Request(this);
    synchronized (open) {
      open.put(r, bytes);
      largest = max();
    }
    return r;
  }

  /** The largest budget of the open requests, or -1 when none is open. */
  public long largest() {
    return largest;
  }

  private void withdraw(Object request) {
    synchronized (open) {
      if (open.remove(request) != null) {
        largest = max();
      }
    }
  }

  private long max() {
    return open.values().stream().mapToLong(Long::longValue).max().orElse(-1);
  }

  /** A budget asked for by {@link #request(long)}, withdrawn by {@link #close()}. */
  public static final class Request implements AutoCloseable {
    private final BudgetRequests owner;

    private Request(BudgetRequests owner) {
      this.owner = owner;
    }

    /** Withdraws this request; idempotent. */
    @Override
    public void close() {
      owner.withdraw(this);
    }
  }
}
