package dev.sluice.io.shards;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.shards.internal.ShardMetadata;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * The {@code shards} entry of the format registry. Probe: a directory whose {@code metadata.json}
 * names the format {@code "sluice-shards"} in its first bytes (an npy stack's {@code metadata.json}
 * does not). Writes with {@link Shards#write}.
 */
public final class ShardsFormat implements DatasetFormat {
  @Override
  public String name() {
    return "shards";
  }

  @Override
  public boolean probe(Path path) throws IOException {
    Path meta = path.resolve(ShardMetadata.FILE_NAME);
    return Files.isDirectory(path) && Files.isRegularFile(meta) && ShardMetadata.looksLikeOurs(meta);
  }

  @Override
  public Dataset<Example> open(Path path) {
    return Shards.open(path);
  }

  @Override
  public boolean canWrite() {
    return true;
  }

  /** A shard set in directory {@code out}: {@link WriteOptions#numShards()} shards on {@link WriteOptions#workers()} writers. */
  @Override
  public void write(Dataset<Example> dataset, Path out, WriteOptions options) {
    Shards.write(dataset, out, options);
  }

  @Override
  public Set<IoMode> ioModes() {
    return Set.of(IoMode.MMAP, IoMode.READ);
  }

  @Override
  public Dataset<Example> open(Path path, List<String> columns, IoMode io) {
    Dataset<Example> ds = Shards.open(path, io);
    return columns.isEmpty() ? ds : dev.sluice.io.internal.Projection.of(ds, columns);
  }
}
