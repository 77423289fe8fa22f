package dev.sluice.operators.internal.cache;

import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The index entries this process writes (claims and publications, stamped with its pid and start
 * time) and the test whether another process's claim still holds: a claim is taken over when its
 * owner is gone (or is this process, whose claims this thread holds) or when it is stale.
 */
final class Claims {
  /** A claim older than this is taken over even when its owner lives. */
  private static final long MIN_STALE_MILLIS = 60_000;

  private static final long PID = ProcessHandle.current().pid();
  private static final long STARTED = startMillis(ProcessHandle.current());

  private Claims() {}

  /** A fresh claim by this process on a block of {@code rows} rows, with a new random nonce. */
  static IndexEntry claim(int rows) {
    return new IndexEntry(IndexEntry.CLAIMED, PID, STARTED, System.currentTimeMillis(), rows, 0, 0,
        ThreadLocalRandom.current().nextLong());
  }

  /** This process's publication of a segment of {@code rows} rows, {@code bytes} long, under the claim's nonce. */
  static IndexEntry publication(int rows, long bytes, int checksum, long nonce) {
    return new IndexEntry(IndexEntry.PUBLISHED, PID, STARTED, System.currentTimeMillis(), rows, bytes, checksum, nonce);
  }

  /** Whether the owner of a claim runs: not this process (this thread holds the block here), same start time. */
  static boolean alive(IndexEntry e) {
    if (e.pid() == PID) {
      return false;
    }
    return ProcessHandle.of(e.pid()).map(h -> h.isAlive() && (e.started() == 0 || startMillis(h) == 0
        || startMillis(h) == e.started())).orElse(false);
  }

  /** Whether a claim is older than six pass timeouts (and at least a minute): taken over even when its owner lives. */
  static boolean stale(IndexEntry e, long timeoutNanos) {
    long limit = Math.max(MIN_STALE_MILLIS, 6 * TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
    return System.currentTimeMillis() - e.time() > limit;
  }

  private static long startMillis(ProcessHandle h) {
    return h.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
  }
}
