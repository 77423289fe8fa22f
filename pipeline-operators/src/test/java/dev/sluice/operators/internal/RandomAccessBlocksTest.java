package dev.sluice.operators.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.RandomAccessDataset;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The block view of a random-access source cuts it into runs of {@code Options.shuffleBlockBytes}
 * bytes of rows, and the block shuffle's blocks are whole runs.
 */
class RandomAccessBlocksTest {
  /** 8 bytes a row: 7.6 MiB, so a run is capped at 3906 rows (a 256th). */
  private static final RandomAccessDataset<Example> DATA = Datasets.range(1_000_000);

  @Test
  void aRunHoldsTheBlockSizeInRowsCappedAtA256thOfTheRows() {
    long rowBytes = RandomAccessBlocks.rowBytes(Schemas.declared(DATA));
    for (long bytes : new long[] {1, 8, 100, 4096, 8192, 24_576}) {
      long expected = Math.max(1, Math.min(bytes / rowBytes, DATA.size() / RandomAccessBlocks.MIN_BLOCKS));
      assertEquals(expected, RandomAccessBlocks.of(DATA, null, bytes).blockRows(), bytes + " bytes");
    }
    assertEquals(DATA.size() / RandomAccessBlocks.MIN_BLOCKS, RandomAccessBlocks.of(DATA, null, 2L << 20).blockRows(),
        "the default 2 MiB is capped on a small dataset");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RandomAccessBlocks.of(DATA, null, 0));
    assertEquals("shuffleBlockBytes > 0 required but it was 0", e.getMessage());
  }

  @Test
  void theBlocksOfTheShuffleAreWholeRunsOfTheOption() {
    for (int world : new int[] {1, 4, 16}) {
      List<SplitPlan.Segment> previous = null;
      for (long bytes : new long[] {4096, 12_288, 24_576}) {
        RandomAccessBlocks<?> view = RandomAccessBlocks.of(DATA, null, bytes);
        long run = view.blockRows();
        assertEquals(bytes / 8, run);
        List<SplitPlan.Segment> blocks = BlockPlan.blocks(view, view.splits(), world, 0);
        long next = 0;
        for (SplitPlan.Segment b : blocks) {
          assertEquals(next, b.fromRow(), "blocks follow each other");
          assertEquals(0, b.fromRow() % run, "world " + world + ", " + bytes + " bytes: " + b + " starts on a run");
          assertTrue(b.toRow() == DATA.size() || b.rows() % run == 0, b + " is whole runs");
          assertTrue(b.toRow() == DATA.size() || b.rows() >= BlockPlan.target(DATA.size(), world, 0),
              b + " holds at least the block target");
          next = b.toRow();
        }
        assertEquals(DATA.size(), next, "the blocks cover every row");
        if (previous != null) {
          assertNotEquals(previous, blocks, "another block size, other blocks");
        }
        previous = blocks;
      }
    }
  }
}
