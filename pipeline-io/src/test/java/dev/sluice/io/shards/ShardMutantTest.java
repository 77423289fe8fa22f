package dev.sluice.io.shards;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetException;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Split;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.shards.ShardTestData.ExampleList;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shard sets with one bit flipped at seeded positions of a shard file: every read path (in order,
 * by gathers of shuffled rows, by splits in batches, by single rows) either fails with a
 * {@link DatasetException} or delivers exactly the rows that were written, never changed rows.
 */
@ExtendWith(NoLeaks.class)
class ShardMutantTest {
  private static final BufferPool POOL = MemoryManager.shared().pool("test.mutants");
  private static final int MUTANTS = 150;

  @TempDir Path dir;

  @Test
  void noReadDeliversAChangedRow() throws IOException {
    Path set = dir.resolve("set");
    ExampleList source = ShardTestData.mixed(60, 11);
    Shards.write(source, set, WriteOptions.defaults().withNumShards(3));
    String expected = Checksums.sha256(source);
    Map<String, byte[]> original = ShardTestData.files(set);
    List<String> shardFiles = original.keySet().stream().filter(n -> n.endsWith(".shard")).toList();
    SplittableRandom rnd = new SplittableRandom(20261127);
    int detected = 0;
    int inBlocks = 0;
    for (int m = 0; m < MUTANTS; m++) {
      String name = shardFiles.get(rnd.nextInt(shardFiles.size()));
      byte[] bytes = original.get(name).clone();
      int at = rnd.nextInt(bytes.length);
      bytes[at] ^= (byte) (1 << rnd.nextInt(8));
      Files.write(set.resolve(name), bytes);
      String mutant = name + " byte " + at;
      boolean changedBlock = insideABlock(set.resolve(name), original.get(name), at);
      inBlocks += changedBlock ? 1 : 0;
      int failed = 0;
      failed += readsTheSameOrFails(mutant, expected, () -> inOrder(set));
      failed += readsTheSameOrFails(mutant, expected, () -> gatheredShuffled(set, source, at));
      failed += readsTheSameOrFails(mutant, expected, () -> bySplits(set, source));
      failed += readsTheSameOrFails(mutant, expected, () -> byRows(set, source));
      if (changedBlock) {
        assertEquals(4, failed, mutant + ": a changed block must fail every read path");
      }
      detected += failed > 0 ? 1 : 0;
      Files.write(set.resolve(name), original.get(name));
    }
    assertTrue(inBlocks > MUTANTS / 2, "most flipped bits land in blocks: " + inBlocks);
    assertTrue(detected >= inBlocks, detected + " mutants detected, " + inBlocks + " in blocks");
  }

  /** Whether byte {@code at} of the unchanged shard lies inside a block (not padding, header or footer). */
  private static boolean insideABlock(Path shard, byte[] unchanged, int at) throws IOException {
    Path copy = shard.resolveSibling(".unchanged");
    Files.write(copy, unchanged);
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(copy)) {
      for (dev.sluice.core.internal.shardfile.ShardFile.Block b
          : dev.sluice.core.internal.shardfile.ShardFile.read(copy.toString(), ch, ch.size()).blocks()) {
        if (at >= b.offset() && at < b.end()) {
          return true;
        }
      }
      return false;
    } finally {
      Files.delete(copy);
    }
  }

  /** 1 when the read fails with a dataset error, 0 when it delivers the written rows; fails the test otherwise. */
  private static int readsTheSameOrFails(String mutant, String expected, Supplier<String> read) {
    String found;
    try {
      found = read.get();
    } catch (DatasetException e) {
      return 1;
    } catch (RuntimeException e) {
      fail(mutant + ": not a dataset error", e);
      return 1;
    }
    assertEquals(expected, found, mutant + ": a read delivered changed rows without an error");
    return 0;
  }

  private static ShardSet open(Path set) {
    return Shards.open(set, 4096); // small mappings: blocks span several
  }

  /** The checksum of the rows as the set streams them. */
  private static String inOrder(Path set) {
    try (ShardSet s = open(set)) {
      return Checksums.sha256(s);
    }
  }

  /** The checksum of every row, gathered in a seeded shuffled order, several files per batch. */
  private static String gatheredShuffled(Path set, ExampleList source, long seed) {
    long[] order = new long[(int) source.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    SplittableRandom rnd = new SplittableRandom(seed);
    for (int i = order.length - 1; i > 0; i--) {
      int j = rnd.nextInt(i + 1);
      long t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    List<Example> rows = new ArrayList<>();
    try (ShardSet s = open(set)) {
      for (int from = 0; from < order.length; from += 7) {
        int n = Math.min(7, order.length - from);
        try (BatchBuilder b = BatchBuilder.create(s.schema(), n, POOL)) {
          s.gather(order, from, n, b);
          try (Batch batch = b.build()) {
            for (int i = 0; i < n; i++) {
              rows.add(batch.copyRow(i));
            }
          }
        }
      }
      return sorted(source, rows);
    }
  }

  /** The checksum of every row, read split by split in batches. */
  private static String bySplits(Path set, ExampleList source) {
    List<Example> rows = new ArrayList<>();
    try (ShardSet s = open(set)) {
      for (Split split : s.splits()) {
        s.readBatches(split, 0, split.rowCount(), 5).doOnNext(batch -> {
          try (batch) {
            for (int i = 0; i < batch.size(); i++) {
              rows.add(batch.copyRow(i));
            }
          }
        }).blockLast();
      }
      return sorted(source, rows);
    }
  }

  /** The checksum of every row, read one by one, last row first. */
  private static String byRows(Path set, ExampleList source) {
    List<Example> rows = new ArrayList<>();
    try (ShardSet s = open(set)) {
      for (long i = s.size() - 1; i >= 0; i--) {
        rows.add(s.get(i));
      }
      return sorted(source, rows);
    }
  }

  private static String sorted(ExampleList source, List<Example> rows) {
    rows.sort(Comparator.comparingLong(Example::index));
    return Checksums.sha256(new ExampleList(source.schema(), rows));
  }
}
