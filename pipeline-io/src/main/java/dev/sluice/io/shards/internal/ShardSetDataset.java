package dev.sluice.io.shards.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.internal.Fingerprints;
import dev.sluice.core.internal.Resources;
import dev.sluice.core.internal.RowRange;
import dev.sluice.core.internal.shardfile.FieldLayout;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.core.internal.shardfile.ShardFileReader;
import dev.sluice.core.internal.shardfile.ShardRows;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.io.internal.JsonFiles;
import dev.sluice.io.internal.RemoteFiles;
import dev.sluice.io.internal.RemoteInput;
import dev.sluice.io.internal.cache.CachedFile;
import dev.sluice.io.internal.cache.CopyCheck;
import dev.sluice.io.internal.cache.FileCache;
import dev.sluice.io.RemoteCache;
import dev.sluice.io.shards.ShardInfo;
import dev.sluice.io.shards.ShardSet;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;

/** A shard set opened from its directory: every shard open and checked, rows indexed across them. */
public final class ShardSetDataset implements ShardSet {
  /** The memory-manager stage {@link #readBatches} allocates from. */
  public static final String STAGE = "shards";

  private final Path dir;
  private final String location; // the directory or URI, for messages
  private final String remoteFingerprint; // null for a local set
  private final ShardMetadata meta;
  private final ShardRows rows;
  private final List<Split> splits;
  private final Map<Split, Integer> splitNumbers = new HashMap<>();
  private final List<CachedFile> cached; // per shard, when read through the remote cache; else empty
  private volatile boolean closed;

  private ShardSetDataset(Path dir, String location, String remoteFingerprint, ShardMetadata meta,
      List<ShardFileReader> readers, List<CachedFile> cached) {
    this.cached = cached;
    this.dir = dir;
    this.location = location;
    this.remoteFingerprint = remoteFingerprint;
    this.meta = meta;
    this.rows = new ShardRows(location, this, readers, meta.schema().size());
    List<Split> s = new ArrayList<>(readers.size());
    String dirName = dir.getFileName() == null ? dir.toString() : dir.getFileName().toString();
    for (int k = 0; k < readers.size(); k++) {
      Split split = new Split(dirName + "/" + readers.get(k).name(), readers.get(k).rows());
      s.add(split);
      splitNumbers.put(split, k);
    }
    this.splits = List.copyOf(s);
  }

  /**
   * Opens the shard set in {@code dir}: reads {@code metadata.json}, opens every shard and checks its
   * header and footer; closes what it opened when anything fails.
   *
   * @param maxChunkBytes the largest single mapping, in [1, {@link Integer#MAX_VALUE}]
   */
  public static ShardSetDataset open(Path dir, long maxChunkBytes) {
    return open(dir, maxChunkBytes, IoMode.MMAP);
  }

  /** {@link #open(Path, long)} with every shard read in {@code mode}. */
  public static ShardSetDataset open(Path dir, long maxChunkBytes, IoMode mode) {
    ShardMetadata meta = ShardMetadata.read(dir);
    List<FieldLayout> layouts = FieldLayout.of(meta.schema().fields());
    List<ShardFileReader> readers = new ArrayList<>(meta.shards().size());
    try {
      List<ShardInfo> shards = meta.shards();
      for (int k = 0; k < shards.size(); k++) {
        readers.add(ShardFileReader.open(dir.resolve(shards.get(k).file()), layouts, maxChunkBytes,
            new Listed(shards.get(k), k, shards.size()), mode));
      }
      return new ShardSetDataset(dir, dir.toString(), null, meta, List.copyOf(readers), List.of());
    } catch (RuntimeException e) {
      Resources.closeAfter(e, readers);
      throw e;
    }
  }

  /**
   * Opens the remote shard set {@code dir} (a Hadoop URI): {@code metadata.json} read into memory,
   * every shard read with positioned reads and checked as a local one is (size, header, footer,
   * block table; the CRC32C of each block before its rows are delivered).
   *
   * @param maxChunkBytes the largest single read, in [1, {@link Integer#MAX_VALUE}]
   */
  public static ShardSetDataset open(URI dir, long maxChunkBytes) {
    return open(dir, maxChunkBytes, null);
  }

  /**
   * {@link #open(URI, long)} with the shards read through the node-local {@code cache} (null: read
   * remotely): each shard's header and footer are checked remotely on open; its first row read
   * downloads it whole (its frame checked against {@code metadata.json} before it is published).
   */
  public static ShardSetDataset open(URI dir, long maxChunkBytes, RemoteCache cache) {
    String base = dir.toString().endsWith("/") ? dir.toString().substring(0, dir.toString().length() - 1)
        : dir.toString();
    URI metaUri = URI.create(base + "/" + ShardMetadata.FILE_NAME);
    StringBuilder fingerprint = new StringBuilder("shards\n");
    byte[] json;
    try (RemoteInput in = RemoteFiles.open(metaUri)) {
      ByteBuffer b = in.region(0, in.size(), ShardMetadata.FILE_NAME);
      json = new byte[b.remaining()];
      b.get(json);
      fingerprint.append(in.fingerprint());
    }
    ShardMetadata meta = ShardMetadata.parse(Path.of(metaUri.getPath()), metaUri.toString(),
        JsonFiles.readObject(metaUri.toString(), json));
    List<FieldLayout> layouts = FieldLayout.of(meta.schema().fields());
    List<ShardFileReader> readers = new ArrayList<>(meta.shards().size());
    List<CachedFile> cached = List.of();
    try {
      List<ShardInfo> shards = meta.shards();
      if (cache != null) {
        List<URI> uris = new ArrayList<>();
        List<CopyCheck> checks = new ArrayList<>();
        for (int k = 0; k < shards.size(); k++) {
          uris.add(URI.create(base + "/" + shards.get(k).file()));
          Listed listed = new Listed(shards.get(k), k, shards.size());
          checks.add((resource, ch, size) -> listed.checkFrame(resource, ShardFile.read(resource, ch, size)));
        }
        cached = FileCache.of(cache).open(uris, checks);
      }
      for (int k = 0; k < shards.size(); k++) {
        String name = shards.get(k).file();
        RemoteInput in = cache != null ? cached.get(k) : RemoteFiles.open(URI.create(base + "/" + name));
        fingerprint.append(in.fingerprint());
        readers.add(ShardFileReader.open(in.resource(), name, in, in.size(), in, layouts, maxChunkBytes,
            new Listed(shards.get(k), k, shards.size())));
        if (in instanceof CachedFile c) {
          c.opened();
        }
      }
      return new ShardSetDataset(Path.of(dir.getPath()), base, fingerprint.toString(), meta, List.copyOf(readers),
          cached);
    } catch (RuntimeException e) {
      Resources.closeAfter(e, readers);
      Resources.closeAfter(e, cached.subList(readers.size(), cached.size()));
      throw e;
    }
  }

  /** What {@code metadata.json} says of shard {@code number}, checked when the shard is opened. */
  private record Listed(ShardInfo info, int number, int shardCount) implements ShardFileReader.Expectations {
    @Override
    public RuntimeException missing(String resource, NoSuchFileException e) {
      return new DatasetFormatException(resource, null, "missing: metadata.json lists it as shard " + number + " of "
          + shardCount, e);
    }

    @Override
    public void checkSize(String resource, long size) {
      if (size < info.bytes()) {
        throw new DatasetFormatException(resource, "byte " + size, "truncated: metadata.json says " + info.bytes()
            + " bytes but the file has " + size);
      }
      if (size > info.bytes()) {
        throw new DatasetFormatException(resource, "byte " + info.bytes(), "extended: metadata.json says "
            + info.bytes() + " bytes but the file has " + size + " (" + (size - info.bytes()) + " bytes more)");
      }
    }

    @Override
    public void checkFrame(String resource, ShardFile.Frame frame) {
      String checksum = ShardFile.checksumText(frame.checksum());
      if (!checksum.equals(info.checksum())) {
        throw new DatasetFormatException(resource, "footer", "checksum mismatch (expected " + info.checksum()
            + " as metadata.json says, found " + checksum + ")");
      }
      if (frame.rows() != info.rows()) {
        throw new DatasetFormatException(resource, "footer", "holds " + frame.rows() + " rows but metadata.json says "
            + info.rows());
      }
    }

    @Override
    public String layoutSource() {
      return ShardMetadata.FILE_NAME;
    }
  }

  @Override
  public Path path() {
    return dir;
  }

  @Override
  public List<ShardInfo> shards() {
    return meta.shards();
  }

  @Override
  public Schema schema() {
    return meta.schema();
  }

  @Override
  public long size() {
    return rows.size();
  }

  private void checkOpen() {
    if (closed) {
      throw new DatasetClosedException(location);
    }
  }

  @Override
  public Example get(long index) {
    checkOpen();
    return rows.get(index);
  }

  /**
   * Copies the rows into the batch field by field: a batch inside one shard with that shard's bulk
   * copies (one per run of consecutive rows), a batch spread over several shards grouped by shard,
   * after loading the first cache lines of every row so that their misses overlap. Variable-length
   * values are located (and their offsets checked) first, so the batch's values grow once.
   */
  @Override
  public void gather(long[] indices, int from, int count, BatchBuilder target) {
    checkOpen();
    rows.gather(indices, from, count, target);
  }

  @Override
  public List<Split> splits() {
    checkOpen();
    return splits;
  }

  /** Shards read through the node's remote cache download ahead in this order; otherwise ignored. */
  @Override
  public void readNext(List<Split> next) {
    if (cached.isEmpty()) {
      return;
    }
    List<CachedFile> order = new ArrayList<>(next.size());
    for (Split s : next) {
      Integer k = splitNumbers.get(s);
      if (k != null) {
        order.add(cached.get(k));
      }
    }
    CachedFile.readNext(order);
  }

  private int shardNumber(Split split) {
    Integer k = splitNumbers.get(split);
    if (k == null) {
      throw new IllegalArgumentException("split " + split + " is not a shard of " + this);
    }
    return k;
  }

  @Override
  public Flux<Example> read(Split split, long fromRow, long toRow) {
    return Flux.defer(() -> {
      int k = shardNumber(split);
      split.checkRows(fromRow, toRow);
      long first = rows.start(k) + Math.min(fromRow, split.rowCount());
      long end = rows.start(k) + Math.min(toRow, split.rowCount());
      return RowRange.flux(this, first, end);
    });
  }

  /** Rows of one shard gathered into batches (bulk copies) from the memory-manager stage {@value #STAGE}. */
  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int batchSize) {
    return readBatches(split, fromRow, toRow, batchSize, batchSize);
  }

  /** As {@link #readBatches(Split, long, long, int)} with a first batch of {@code firstBatchSize} rows. */
  @Override
  public Flux<Batch> readBatches(Split split, long fromRow, long toRow, int firstBatchSize, int batchSize) {
    BatchSplitDataset.checkBatchSizes(firstBatchSize, batchSize);
    return Flux.defer(() -> {
      int k = shardNumber(split);
      split.checkRows(fromRow, toRow);
      long first = rows.start(k) + Math.min(fromRow, split.rowCount());
      long end = rows.start(k) + Math.min(toRow, split.rowCount());
      BufferPool pool = MemoryManager.shared().pool(STAGE);
      return Flux.<Batch, long[]>generate(() -> new long[] {first}, (state, sink) -> {
        long pos = state[0];
        if (pos >= end) {
          sink.complete();
          return state;
        }
        int n = (int) Math.min(pos == first ? firstBatchSize : batchSize, end - pos);
        sink.next(RowRange.batch(this, schema(), pos, n, pool));
        state[0] = pos + n;
        return state;
      });
    });
  }

  /** Checks every byte of every shard against its stored checksums. */
  @Override
  public Verified verify() {
    checkOpen();
    rows.verify();
    long blocks = 0;
    long bytes = 0;
    for (ShardFileReader r : rows.readers()) {
      blocks += r.blockCount();
      bytes += r.fileBytes();
    }
    return new Verified("shard files", rows.readers().size(), blocks, bytes, "CRC32C");
  }

  @Override
  public void close() {
    closed = true;
    rows.close();
  }

  /** Its {@code metadata.json} and shard files (path, size, modification time) and its schema. */
  @Override
  public String fingerprint() {
    if (remoteFingerprint != null) {
      return remoteFingerprint + Fingerprints.schema(schema());
    }
    StringBuilder sb = new StringBuilder("shards\n").append(Fingerprints.file(dir.resolve(ShardMetadata.FILE_NAME)));
    for (ShardInfo s : meta.shards()) {
      sb.append(Fingerprints.file(dir.resolve(s.file())));
    }
    return sb.append(Fingerprints.schema(schema())).toString();
  }

  @Override
  public String toString() {
    return "shards(" + location + ", " + rows.readers().size() + " shards, rows=" + size() + ")";
  }
}
