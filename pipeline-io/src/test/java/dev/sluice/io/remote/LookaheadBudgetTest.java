package dev.sluice.io.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.cache.CachedFile;
import dev.sluice.io.internal.cache.CopyCheck;
import dev.sluice.io.internal.cache.FileCache;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A download ahead of the reader holds part of the node cache's budget while it runs; a read that
 * then finds the budget full waits for it to end (its copy becomes evictable) instead of failing.
 */
class LookaheadBudgetTest {
  @TempDir
  Path dir;

  private final List<Path> gated = new ArrayList<>();

  @BeforeAll
  static void register() {
    RemoteFiles.configure(CountedFileSystem.settings());
  }

  @AfterEach
  void openGates() {
    for (Path p : gated) {
      CountedFileSystem.Gate g = CountedFileSystem.GATES.remove(p.toString());
      if (g != null) {
        g.open().countDown();
      }
    }
  }

  private Path file(String name, int bytes, long seed) throws IOException {
    byte[] b = new byte[bytes];
    new Random(seed).nextBytes(b);
    Path p = dir.resolve("remote").resolve(name);
    Files.createDirectories(p.getParent());
    Files.write(p, b);
    return p;
  }

  @Test
  void aReadThatFindsTheBudgetHeldByALookaheadDownloadWaitsForItInsteadOfFailing() throws Exception {
    // a small file, then two large ones; the budget holds the small one and one large one, not both large ones
    Path small = file("a-small", 1_000, 1);
    Path ahead = file("b-large", 10_000, 2);
    Path other = file("c-large", 10_000, 3);
    RemoteCache spec = RemoteCache.at(dir.resolve("cache"), 15_000).withLookahead(1);
    FileCache cache = FileCache.of(spec);
    CountedFileSystem.Gate gate = new CountedFileSystem.Gate();
    CountedFileSystem.GATES.put(ahead.toString(), gate);
    gated.add(ahead);
    List<String> waited = Collections.synchronizedList(new ArrayList<>());
    cache.listen(new FileCache.Listener() {
      @Override
      public void waitingForLookahead(String resource) {
        waited.add(resource);
        gate.open().countDown(); // the look-ahead download may end now
      }
    });
    List<URI> uris = List.of(CountedFileSystem.uri(small), CountedFileSystem.uri(ahead), CountedFileSystem.uri(other));
    List<CachedFile> files = cache.open(uris, List.of(CopyCheck.NONE, CopyCheck.NONE, CopyCheck.NONE));
    try {
      files.forEach(CachedFile::opened);
      ByteBuffer first = ByteBuffer.allocate(1_000);
      files.get(0).readFully(0, first); // downloads the small file and starts the next one ahead
      assertThat(gate.arrived().await(1, TimeUnit.MINUTES)).as("the look-ahead download has reserved and started")
          .isTrue();

      // the reader skips the file downloading ahead: its own download needs the budget that one holds
      ByteBuffer third = ByteBuffer.allocate(10_000);
      files.get(2).readFully(0, third);

      assertThat(third.array()).isEqualTo(Files.readAllBytes(other));
      assertThat(waited).containsExactly(uris.get(2).toString());
    } finally {
      gate.open().countDown();
      files.forEach(CachedFile::close);
    }
  }
}
