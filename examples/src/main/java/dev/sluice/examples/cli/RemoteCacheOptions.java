package dev.sluice.examples.cli;

import dev.sluice.io.RemoteCache;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --remote-cache DIR} and {@code --remote-cache-max-bytes BYTES}: the node-local cache of remote files. */
final class RemoteCacheOptions {
  /** The budget when {@code --remote-cache-max-bytes} is not given. */
  static final long DEFAULT_MAX_BYTES = 10L << 30;

  @Option(names = "--remote-cache", paramLabel = "DIR", description = "Download the files of a remote shard set, "
      + "Arrow file, Parquet dataset, npy file, npy stack or directory of samples (hdfs://, s3a://, ...) whole into DIR, shared by the node's processes, and read "
      + "them there (mapped); the next files start downloading ahead of the reader")
  Path dir;

  @Option(names = "--remote-cache-max-bytes", paramLabel = "BYTES", converter = ByteSize.class,
      description = "The most bytes --remote-cache DIR holds (default 10g): least recently used files no process is "
          + "reading are deleted to make room")
  Long maxBytes;

  /**
   * The cache the options name, or null without {@code --remote-cache}.
   *
   * @throws IllegalArgumentException for {@code --remote-cache-max-bytes} without {@code --remote-cache}
   */
  RemoteCache cache() {
    if (dir == null) {
      if (maxBytes != null) {
        throw new IllegalArgumentException("--remote-cache-max-bytes applies to --remote-cache DIR, which is not given");
      }
      return null;
    }
    return RemoteCache.at(dir, maxBytes == null ? DEFAULT_MAX_BYTES : maxBytes);
  }
}
