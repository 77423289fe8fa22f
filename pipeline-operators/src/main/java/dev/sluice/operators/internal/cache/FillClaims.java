package dev.sluice.operators.internal.cache;

import dev.sluice.core.DatasetException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * Who fills which block of one store: the decision a pass takes for a block (read its segment,
 * fill it under a claim, or serve it from upstream) and the end of the claims this process holds.
 *
 * <p>Within this process one thread at a time decides or fills a block (the others wait on it);
 * across processes a block is claimed in the index by {@link Claims#claim} and the claim of a
 * process that is gone ({@link Claims#alive}) or is {@link Claims#stale} is taken over. Every wait
 * is bounded by the pass's timeout; a block that cannot be decided in time is served from upstream
 * for the rest of the pass.
 */
final class FillClaims {
  private final CacheStore store;
  private final OpenSegments segments;
  private final CacheBudget budget;
  private final Map<Long, CompletableFuture<Void>> inProcess = new ConcurrentHashMap<>();

  FillClaims(CacheStore store, OpenSegments segments, CacheBudget budget) {
    this.store = store;
    this.segments = segments;
    this.budget = budget;
  }

  /** What this process already knows of {@code block} in this pass: open here, or served from upstream; else null. */
  private Decision known(long block, PassCounters pass) {
    CacheStore.Segment s = segments.get(block);
    if (s != null) {
      return Decision.hit(s);
    }
    PassCounters.Bypass bypassed = pass.bypassed(block);
    return bypassed == null ? null : Decision.upstream(bypassed);
  }

  /**
   * What to do with {@code block}: read its segment ({@code HIT}), fill it ({@code FILL}: this
   * thread holds the claim and must end it with {@link CacheStore#publish} or {@link #release}), or
   * serve it from upstream ({@code UPSTREAM}).
   */
  Decision decide(long block, PassCounters pass, long timeoutNanos) {
    Decision known = known(block, pass);
    if (known != null) {
      return known;
    }
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      CacheStore.Segment s = segments.get(block);
      if (s != null) {
        return Decision.hit(s);
      }
      CompletableFuture<Void> mine = new CompletableFuture<>();
      CompletableFuture<Void> other = inProcess.putIfAbsent(block, mine);
      if (other != null) { // another thread of this process is deciding or filling the block
        if (!await(other, deadline)) {
          pass.warnOnce("wait", store.dir() + ": block " + block + " has been filled by another thread of this process"
              + " for more than " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms; served from upstream");
          return fallback(block, pass);
        }
        continue;
      }
      boolean handedOver = false;
      try {
        Decision d = decideOwned(block, pass, deadline, timeoutNanos, mine);
        handedOver = d.kind == Decision.Kind.FILL;
        return d;
      } finally {
        if (!handedOver) {
          inProcess.remove(block, mine);
          mine.complete(null);
        }
      }
    }
  }

  /**
   * {@link #decide} when it needs no wait: a published block ({@code HIT}), an absent one this thread
   * now claims ({@code FILL}), one this pass serves from upstream or the budget keeps out
   * ({@code UPSTREAM}); null when another thread or process is filling it, or the index is slow.
   */
  Decision tryDecide(long block, PassCounters pass) {
    Decision known = known(block, pass);
    if (known != null || pass.slowIndex()) {
      return null;
    }
    CompletableFuture<Void> mine = new CompletableFuture<>();
    if (inProcess.putIfAbsent(block, mine) != null) {
      return null;
    }
    boolean handedOver = false;
    try {
      long deadline = System.nanoTime() + 100_000_000L;
      IndexEntry e = store.index().get(block, pass.indexWait(deadline));
      if (e != null && e.published()) {
        try {
          return store.hit(segments.open(block, e, true));
        } catch (DatasetException bad) {
          return null; // decide() rebuilds it
        }
      }
      if (e != null) {
        return null;
      }
      Decision d = absent(block, pass, deadline, mine);
      handedOver = d != null && d.kind == Decision.Kind.FILL;
      return d;
    } catch (CacheIndex.Timeout t) {
      pass.indexWasSlow();
      return null;
    } finally {
      if (!handedOver) {
        inProcess.remove(block, mine);
        mine.complete(null);
      }
    }
  }

  private Decision decideOwned(long block, PassCounters pass, long deadline, long timeoutNanos,
      CompletableFuture<Void> token) {
    long pause = 100_000;
    try {
      while (true) {
        IndexEntry e = store.index().get(block, pass.indexWait(deadline));
        if (e == null) {
          Decision d = absent(block, pass, deadline, token);
          if (d != null) {
            return d;
          }
          continue;
        }
        if (e.published()) {
          try {
            return store.hit(segments.open(block, e, true));
          } catch (DatasetException bad) {
            store.discard(block, e, bad, pass, deadline);
            continue; // rebuilt
          }
        }
        if (e.claimed() && (!Claims.alive(e) || Claims.stale(e, timeoutNanos))) {
          IndexEntry claim = Claims.claim(store.geometry().blockSize(block));
          if (store.index().replace(block, e, claim, pass.indexWait(deadline))) {
            return new Decision(Decision.Kind.FILL, null, claim, null, token);
          }
          continue;
        }
        if (!e.claimed()) {
          pass.warnOnce("entry", store.dir() + ": the index entry of block " + block + " is not a claim nor a"
              + " publication; the block is served from upstream (sluice cache rm removes the cache)");
          return fallback(block, pass);
        }
        if (System.nanoTime() - deadline >= 0) {
          pass.warnOnce("claim", store.dir() + ": block " + block + " has been filled by process " + e.pid()
              + " for more than " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms; blocks another process is"
              + " slow to fill are served from upstream (counted as fallbacks)");
          return fallback(block, pass);
        }
        LockSupport.parkNanos(pause);
        pause = Math.min(pause * 2, 50_000_000);
      }
    } catch (CacheIndex.Timeout t) {
      return indexTimedOut(block, pass, t);
    }
  }

  /**
   * A block the index has no entry for: served from upstream when the budget is reached, else
   * claimed by this thread ({@code FILL}, holding {@code token}); null when another thread or
   * process claimed or published it first.
   */
  private Decision absent(long block, PassCounters pass, long deadline, CompletableFuture<Void> token)
      throws CacheIndex.Timeout {
    if (budget.reached(pass)) {
      pass.bypass(block, PassCounters.Bypass.BUDGET);
      return Decision.upstream(PassCounters.Bypass.BUDGET);
    }
    IndexEntry claim = Claims.claim(store.geometry().blockSize(block));
    return store.index().putIfAbsent(block, claim, pass.indexWait(deadline))
        ? new Decision(Decision.Kind.FILL, null, claim, null, token) : null;
  }

  /** The index did not answer in time: the pass marks it slow and serves the block from upstream, counted as a fallback. */
  Decision indexTimedOut(long block, PassCounters pass, CacheIndex.Timeout t) {
    pass.indexWasSlow();
    pass.warnOnce("lock", store.dir() + ": " + t.getMessage() + " (a process killed while it held the lock leaves"
        + " it held); the blocks it guards are served from upstream for this pass and counted as fallbacks. The"
        + " index is reset when no process uses the cache any more; sluice cache rm removes it");
    return fallback(block, pass);
  }

  /** The block is served from upstream for the rest of the pass, counted as a fallback. */
  private static Decision fallback(long block, PassCounters pass) {
    pass.bypass(block, PassCounters.Bypass.FALLBACK);
    return Decision.upstream(PassCounters.Bypass.FALLBACK);
  }

  /** Ends a claim this thread holds without publishing (the fill failed, was cancelled or was not stored). */
  void release(long block, Decision d, PassCounters pass) {
    try {
      store.index().remove(block, d.claim, pass.slowIndex() ? 1_000_000 : 100_000_000);
    } catch (CacheIndex.Timeout t) {
      pass.indexWasSlow(); // the claim stays; others take it over once it is stale or this process is gone
    } finally {
      finish(block, d);
    }
  }

  /** Ends this process's hold on a block whose claim was published or released: its waiting threads go on. */
  void finish(long block, Decision d) {
    inProcess.remove(block, d.token);
    d.token.complete(null);
  }

  private static boolean await(CompletableFuture<Void> f, long deadline) {
    try {
      f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException e) {
      return true;
    }
  }
}
