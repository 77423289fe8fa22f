package dev.sluice.operators.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.testing.ChildJvm;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.CacheStats;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chronicle Map keeps its locks in the mapped file: a process killed while holding one leaves it
 * held. A pass must never hang on it: it serves the blocks from upstream, counted as fallbacks,
 * and once no process uses the cache any more the next one to open it resets the locks.
 */
@ExtendWith(NoLeaks.class)
class IndexLockTest {
  @TempDir Path dir;

  private static List<String> elements(Pipeline<Example> p) {
    return p.flux().map(e -> e.index() + "=" + e.tensor("x").getFloat(1)).collectList().block();
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aLockLeftHeldByAKilledProcessNeverHangsAPass() throws Exception {
    RandomAccessDataset<Example> src = Datasets.synthetic(2000, 8, 3);
    CacheMonitor m = new CacheMonitor();
    Pipeline<Example> cached = Pipeline.from(src).cache(CacheSpec.defaults().directory(dir).blockRows(250)
        .timeout(Duration.ofMillis(300)).monitor(m));
    List<String> expected = elements(Pipeline.from(src));
    assertEquals(expected, elements(cached));
    assertEquals(8, m.lastPass().blocksWritten());
    Path cacheDir = onlyCache();
    CacheAdmin.closeInThisProcess(cacheDir);
    Files.delete(cacheDir.resolve(SealedManifest.FILE)); // unsealed: every block is read through the index
    try (ChildJvm holder = ChildJvm.start(IndexLockHolder.class, cacheDir.toString(), "8")) {
      assertEquals("LOCKED", holder.nextLine(90), holder.stderr());
      // this process opens the index while the holder lives, so it does not reset the locks
      assertEquals(expected, elements(cached));
      assertEquals(new CacheStats(0, 2000, 0, 8, 0, 0), m.lastPass());
      holder.kill();
    }
    long started = System.nanoTime();
    assertEquals(expected, elements(cached));
    CacheStats stuck = m.lastPass();
    assertEquals(new CacheStats(0, 2000, 0, 8, 0, 0), stuck, "every block served from upstream, none twice");
    assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(60), "bounded by the timeout, not Chronicle's");
    // the last user closes; the next one to open the cache is alone and resets the locks
    CacheAdmin.closeInThisProcess(cacheDir);
    assertEquals(expected, elements(cached));
    assertEquals(new CacheStats(2000, 0, 0, 0, 0, 0), m.lastPass());
  }

  private Path onlyCache() throws IOException {
    try (DirectoryStream<Path> d = Files.newDirectoryStream(dir, "cache-*")) {
      return d.iterator().next();
    }
  }
}
