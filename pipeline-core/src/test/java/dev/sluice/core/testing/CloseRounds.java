package dev.sluice.core.testing;

import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineIterator;
import java.util.SplittableRandom;
import java.util.function.BiFunction;

/**
 * Rounds of "take a few batches, close the iterator, check at once": the race between a close and
 * the workers of a pass that are building batches at that moment. Each round builds its pass over a
 * memory manager of its own that keeps no freed buffers (so that every allocation is counted),
 * takes 0 to 3 elements (a seeded draw), and closes the iterator while the stages are still busy.
 * Right after {@code close()} the round's manager and {@link MemoryManager#shared()} must have
 * nothing outstanding; after the last round, no round's manager may have allocated anything after
 * its {@code close()} returned (a worker of a closed pass that was still building a batch).
 */
public final class CloseRounds {
  private CloseRounds() {}

  /**
   * Runs {@code rounds} rounds of {@code pass.apply(round, memory)}.
   *
   * @param pass the iterator of round {@code round} (for example the pass of epoch {@code round}),
   *     allocating from {@code memory}
   */
  public static void closeRightAway(int rounds, long seed,
      BiFunction<Integer, MemoryManager, ? extends PipelineIterator<? extends AutoCloseable>> pass) {
    SplittableRandom random = new SplittableRandom(seed);
    MemoryManager[] memory = new MemoryManager[rounds];
    long[] allocatedAtClose = new long[rounds];
    for (int round = 0; round < rounds; round++) {
      int take = random.nextInt(4);
      memory[round] = new MemoryManager(0);
      try (PipelineIterator<? extends AutoCloseable> it = pass.apply(round, memory[round])) {
        for (int i = 0; i < take && it.hasNext(); i++) {
          close(it.next());
        }
      }
      allocatedAtClose[round] = memory[round].allocatedBytesTotal();
      if (memory[round].outstandingBytes() != 0 || MemoryManager.shared().outstandingBytes() != 0) {
        throw new AssertionError("round " + round + " (took " + take + "): right after close() bytes per stage were "
            + "still outstanding: " + memory[round].outstandingBytesByStage() + " in the pass's manager, "
            + MemoryManager.shared().outstandingBytesByStage() + " in the shared one");
      }
      if (allocatedAtClose[round] == 0 && take > 0) {
        throw new AssertionError("round " + round + ": the pass did not allocate from the manager it was given");
      }
    }
    for (int round = 0; round < rounds; round++) {
      long late = memory[round].allocatedBytesTotal() - allocatedAtClose[round];
      if (late != 0) {
        throw new AssertionError("round " + round + ": " + late + " bytes were allocated after close() returned");
      }
    }
  }

  private static void close(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      throw new AssertionError("closing " + c + " failed", e);
    }
  }
}
