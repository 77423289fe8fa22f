package dev.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.npy.NpyStack;
import dev.sluice.io.npy.internal.NpyWriter;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Split sharding and split-order shuffle on a real npy stack: its chunks are the splits. The stack
 * is also random-access (which the pipeline would prefer), so the test hides that behind a
 * split-only view.
 */
@ExtendWith(NoLeaks.class)
class SplitShardNpyStackTest {
  @TempDir Path tmp;

  /** Writes chunks {@code 0.npy ..} of int64 values equal to the global row index. */
  static Path stack(Path dir, long... sizes) throws IOException {
    Files.createDirectories(dir);
    long next = 0;
    for (int c = 0; c < sizes.length; c++) {
      byte[] header = NpyWriter.header("<i8", new long[] {sizes[c]}, 0);
      ByteBuffer data = ByteBuffer.allocate((int) (8 * sizes[c])).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < sizes[c]; i++) {
        data.putLong(next++);
      }
      byte[] all = new byte[header.length + data.capacity()];
      System.arraycopy(header, 0, all, 0, header.length);
      System.arraycopy(data.array(), 0, all, header.length, data.capacity());
      Files.write(dir.resolve(c + ".npy"), all);
    }
    return dir;
  }

  @Test
  void ranksReadOnlyTheirRangesWithTheIndexPathsCounts() throws IOException {
    long[] sizes = {7, 0, 5, 11, 3};
    long n = LongStream.of(sizes).sum();
    try (NpyStack stack = Npy.openStack(stack(tmp.resolve("s"), sizes))) {
      assertEquals(5, stack.splits().size());
      PipelineContext ctx = PipelineContext.defaults().withSeed(4);
      // 8 ranks: more ranks than non-empty chunks
      SplitShardChecks.assertRanksPartition(stack, n, new int[] {1, 2, 3, 8}, ctx,
          e -> e.tensor(stack.schema().field(0).name()).getLong(0));
      List<Long> e0 = Pipeline.from(new SplitShardChecks.SplitView(stack)).shuffle().flux(ctx)
          .map(Example::index).collectList().block();
      List<Long> e1 = Pipeline.from(new SplitShardChecks.SplitView(stack)).shuffle().flux(ctx.nextEpoch())
          .map(Example::index).collectList().block();
      assertNotEquals(e0, e1);
      assertEquals(LongStream.range(0, n).boxed().toList(), e1.stream().sorted().toList());
    }
  }
}
