package dev.sluice.spark.internal;

import dev.sluice.core.Schema;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardWriter;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;

/**
 * The job side of a write: tasks write shards into a staging directory inside the target; the
 * driver's commit moves the committed attempts' shards into place and replaces {@code metadata.json}
 * last, by one atomic rename, before deleting the replaced dataset's shards; abort deletes the
 * staging directory and leaves a dataset already at the target untouched.
 */
public final class ShardBatchWrite implements BatchWrite {
  /** Rows per shard file unless the {@code shardRows} option says otherwise. */
  public static final int DEFAULT_SHARD_ROWS = 65_536;
  static final String STAGING_PREFIX = "_sluice-staging-";

  private final URI target;
  private final String job;
  private final String staging;
  private final Schema schema;
  private final int shardRows;
  private final boolean truncate;
  private final StructType sparkSchema;
  private final HashMap<String, String> options;

  ShardBatchWrite(URI target, StructType sparkSchema, HashMap<String, String> options, int shardRows, boolean truncate,
      String queryId) {
    this.target = target;
    this.sparkSchema = sparkSchema;
    this.options = options;
    Schema schema = SchemaMapping.toShards(sparkSchema, options);
    this.job = queryId;
    this.staging = STAGING_PREFIX + queryId;
    this.schema = schema;
    this.shardRows = shardRows;
    this.truncate = truncate;
  }

  /** Builds the write: checks the options and the schema before any task starts. */
  public static final class Builder implements WriteBuilder, SupportsTruncate {
    private final URI target;
    private final LogicalWriteInfo info;
    private boolean truncate;

    Builder(URI target, LogicalWriteInfo info) {
      this.target = target;
      this.info = info;
    }

    @Override
    public WriteBuilder truncate() {
      truncate = true;
      return this;
    }

    @Override
    public Write build() {
      HashMap<String, String> opts = lowerKeys(info.options().asCaseSensitiveMap());
      String codec = info.options().get("codec");
      if (codec != null && !codec.equalsIgnoreCase("none") && !codec.equalsIgnoreCase("uncompressed")) {
        throw new IllegalArgumentException("sluice: codec '" + codec + "': shards are stored uncompressed (rows"
            + " are mapped in place); use codec none or leave it out");
      }
      int shardRows = info.options().getInt("shardRows", DEFAULT_SHARD_ROWS);
      if (shardRows <= 0) {
        throw new IllegalArgumentException("sluice: shardRows > 0 required but it was " + shardRows);
      }
      if (!truncate && exists(target)) {
        throw new IllegalArgumentException("sluice: " + target + " already holds a shard set; a shard set cannot be"
            + " appended to: use mode(\"overwrite\")");
      }
      ShardBatchWrite write = new ShardBatchWrite(target, info.schema(), opts, shardRows, truncate,
          info.queryId().replaceAll("[^A-Za-z0-9-]", "_"));
      return new Write() {
        @Override
        public BatchWrite toBatch() {
          return write;
        }
      };
    }

    private static HashMap<String, String> lowerKeys(Map<String, String> opts) {
      HashMap<String, String> out = new HashMap<>();
      opts.forEach((k, v) -> out.put(k.toLowerCase(java.util.Locale.ROOT), v));
      opts.forEach(out::put);
      return out;
    }
  }

  static FileSystem fs(URI uri) {
    try {
      // a private instance: Hadoop's local file system would otherwise leave a .crc file beside each file
      FileSystem fs = FileSystem.newInstance(uri, new Configuration());
      fs.setWriteChecksum(false);
      fs.setVerifyChecksum(false);
      return fs;
    } catch (IOException e) {
      throw new UncheckedIOException("sluice: cannot reach " + uri + ": " + e.getMessage(), e);
    }
  }

  private static boolean exists(URI target) {
    try (FileSystem fs = fs(target)) {
      return fs.exists(new Path(new Path(target), "metadata.json"));
    } catch (IOException e) {
      throw new UncheckedIOException("sluice: cannot read " + target + ": " + e.getMessage(), e);
    }
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
    return new Factory(target.toString(), job, sparkSchema, options, shardRows);
  }

  @Override
  public boolean useCommitCoordinator() {
    return true;
  }

  /**
   * Publishes the committed attempts' shards as the dataset at the target: moves them (unique
   * names) from staging into the directory, writes {@code metadata.json} under a temporary name and
   * replaces the current one with a single atomic rename, then deletes the shard files the new
   * {@code metadata.json} does not list (those of the dataset it replaced). Until the rename a
   * reader sees the old dataset whole; after it, the new one. A failure before the rename removes
   * what it moved and leaves the old dataset as it was.
   */
  @Override
  public void commit(WriterCommitMessage[] messages) {
    Path dir = new Path(target);
    Path stage = new Path(dir, staging);
    List<ShardMessage> parts = new ArrayList<>();
    for (WriterCommitMessage m : messages) {
      if (m != null) {
        parts.add((ShardMessage) m);
      }
    }
    parts.sort(Comparator.comparingInt(ShardMessage::partition));
    List<ShardInfo> shards = new ArrayList<>();
    Set<String> keep = new HashSet<>();
    for (ShardMessage p : parts) {
      for (ShardInfo s : p.infos()) {
        shards.add(s);
        keep.add(s.file());
      }
    }
    try (FileSystem fs = fs(target)) {
      publish(fs, dir, stage, shards);
      if (truncate) {
        for (FileStatus st : fs.listStatus(dir)) {
          String name = st.getPath().getName();
          if (name.endsWith(".shard") && !keep.contains(name)) {
            fs.delete(st.getPath(), false);
          }
        }
      }
      fs.delete(stage, true);
    } catch (IOException e) {
      throw new UncheckedIOException("sluice: cannot commit the shard set " + target + ": " + e.getMessage(), e);
    }
  }

  /** Moves the shards into {@code dir} and renames the new metadata.json into place; undoes the moves on failure. */
  private void publish(FileSystem fs, Path dir, Path stage, List<ShardInfo> shards) throws IOException {
    List<Path> moved = new ArrayList<>();
    Path temp = new Path(dir, ".metadata.json." + UUID.randomUUID());
    boolean published = false;
    try {
      for (ShardInfo s : shards) {
        Path to = new Path(dir, s.file());
        if (fs.exists(to)) {
          throw new IOException(to + " already exists; the job's shard names are unique, so another job wrote it");
        }
        if (!fs.rename(new Path(stage, s.file()), to)) {
          throw new IOException("cannot move " + s.file() + " from " + stage + " into place");
        }
        moved.add(to);
      }
      try (OutputStream out = fs.create(temp, false)) {
        out.write(ShardWriter.metadataJson(schema, shards));
      }
      replace(fs, temp, new Path(dir, "metadata.json"));
      published = true;
    } finally {
      if (!published) {
        fs.delete(temp, false);
        for (Path p : moved) {
          fs.delete(p, false);
        }
      }
    }
  }

  /**
   * Renames {@code from} to {@code to}, replacing {@code to} in one atomic step: {@code rename(2)}
   * on a local file system, {@code FileContext.rename(..., OVERWRITE)} elsewhere (atomic on HDFS).
   */
  static void replace(FileSystem fs, Path from, Path to) throws IOException {
    if ("file".equals(fs.getUri().getScheme())) {
      Files.move(new File(from.toUri().getPath()).toPath(), new File(to.toUri().getPath()).toPath(),
          StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } else {
      FileContext.getFileContext(fs.getUri(), fs.getConf()).rename(from, to, Options.Rename.OVERWRITE);
    }
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    Path dir = new Path(target);
    try (FileSystem fs = fs(target)) {
      fs.delete(new Path(dir, staging), true);
      if (fs.exists(dir) && fs.listStatus(dir).length == 0) {
        fs.delete(dir, false);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("sluice: cannot delete the staging files of " + target + ": " + e.getMessage(), e);
    }
  }

  /** Creates the tasks' writers on the executors. */
  record Factory(String target, String job, StructType sparkSchema, HashMap<String, String> options, int shardRows)
      implements DataWriterFactory {
    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
      return new ShardDataWriter(URI.create(target), job, sparkSchema, SchemaMapping.toShards(sparkSchema, options),
          shardRows, partitionId, taskId);
    }
  }
}
