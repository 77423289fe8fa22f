package dev.sluice.io.remote;

import dev.sluice.io.Checksums;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * A process reading a remote shard set through a remote cache, for {@link RemoteCacheProcessesTest}:
 * {@code <cacheDir> <uri> <log> <goFile> [<blockAfterBytes> <marker>]}. Prints {@code ready}, waits
 * for {@code goFile} to exist, then prints {@code sha <checksum of every row>}.
 */
public final class RemoteCacheChild {
  private RemoteCacheChild() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> conf = new HashMap<>(CountedFileSystem.settings());
    conf.put("fs.counted.log", args[2]);
    if (args.length > 5) {
      conf.put("fs.counted.block.after", args[4]);
      conf.put("fs.counted.blocked.marker", args[5]);
    }
    RemoteFiles.configure(conf);
    System.out.println("ready");
    System.out.flush();
    Path go = Path.of(args[3]);
    while (!Files.exists(go)) {
      LockSupport.parkNanos(1_000_000L);
    }
    try (ShardSet r = Shards.open(URI.create(args[1]), RemoteCache.at(Path.of(args[0]), 1L << 30))) {
      System.out.println("sha " + Checksums.sha256(r));
    }
  }
}
