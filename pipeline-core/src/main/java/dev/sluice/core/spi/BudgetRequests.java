package dev.sluice.core.spi;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * A register of budgets in bytes asked for while something runs (a pipeline's pass): while any
 * request is open, {@link #largest()} is the largest of them, and once every request is closed the
 * owner of the register falls back to its own default. The process-wide caches size themselves
 * with one register each: the read cache of positioned reads ({@link dev.sluice.core.ReadCache}) and
 * the page cache of the Parquet readers ({@link #PAGE_CACHE}). Thread-safe.
 */
public final class BudgetRequests {
  /**
   * The budgets of the Parquet readers' page cache that running pipelines ask for
   * ({@link dev.sluice.core.Options#pageCacheBytes()}).
   */
  public static final BudgetRequests PAGE_CACHE = new BudgetRequests();

  private final Map<Object, Long> open = new IdentityHashMap<>();
  private volatile long largest = -1;

  /** A register with no request open. */
  public BudgetRequests() {}

  /**
   * Asks for {@code bytes} until the returned request is closed (closing is idempotent).
   *
   * @param bytes the budget asked for, &gt;= 0
   * @return the open request
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

  /**
   * The largest budget of the open requests.
   *
   * @return the largest budget in bytes, or -1 when no request is open
   */
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
