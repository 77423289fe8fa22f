package dev.sluice.operators.internal.cache;

import java.nio.file.Path;
import java.util.concurrent.locks.LockSupport;
import net.openhft.chronicle.map.ChronicleMap;
import net.openhft.chronicle.map.ExternalMapQueryContext;

/**
 * A child process that opens a cache's index as one more user, takes the write lock of block 0's
 * entry and keeps it until it is killed: what a process killed inside an index operation leaves.
 * Prints {@code LOCKED} once it holds the lock.
 */
public final class IndexLockHolder {
  private IndexLockHolder() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    long blocks = Long.parseLong(args[1]);
    CacheIndex index = CacheIndex.open(dir, blocks + 8, 10_000_000_000L);
    ChronicleMap<Long, byte[]> map = index.mapForTests();
    ExternalMapQueryContext<Long, byte[], ?> c = map.queryContext(0L);
    c.writeLock().lock();
    System.out.println("LOCKED");
    System.out.flush();
    while (true) {
      LockSupport.park();
    }
  }
}
