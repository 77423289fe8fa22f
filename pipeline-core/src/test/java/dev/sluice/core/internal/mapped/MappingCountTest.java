package dev.sluice.core.internal.mapped;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MappingCountTest {
  @Test
  void mappingsDroppedByTheirReadersAreCollectedBeforeTheyPileUp(@TempDir Path dir) throws IOException {
    Path file = Files.write(dir.resolve("f"), new byte[8192]);
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      long sum = 0;
      // far more mappings than the bound, each dropped at once, as a process that opens and
      // closes many small datasets does; the heap sees too little garbage to collect on its own
      for (int i = 0; i < 3 * MappedReads.COLLECT_ABOVE; i++) {
        sum += MappedReads.map(channel, (i % 2) * 4096, 4096).get(0);
        // released asynchronously after a collection, but always well below the kernel's 65,530
        assertTrue(MappedReads.liveMappings() < 40_000,
            "mappings not collected: " + MappedReads.liveMappings() + " after " + i);
      }
      assertTrue(sum == 0);
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> MappedReads.liveMappings() <= MappedReads.COLLECT_ABOVE);
  }
}
