package dev.sluice.io.shards.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchBuilder;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.BufferPool;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.Fatal;
import dev.sluice.core.internal.RowRange;
import dev.sluice.core.internal.shardfile.FieldLayout;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.core.internal.shardfile.ShardFileWriter;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.shards.ShardInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;
import java.util.stream.Stream;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Writes a dataset into a shard set: shard {@code k} of {@code N} holds the rows
 * {@code [k·⌊n/N⌋ + min(k, n mod N), …)} in source order (the first {@code n mod N} shards hold one
 * row more), so the set reads back in the source's order and the bytes of every file depend only on
 * the input and {@code N}, never on the number of workers.
 *
 * <p>A random-access source, and a split source whose splits know their row counts, is read by
 * each shard's writer for its own range, so {@code W} shards are written at once on a bounded
 * elastic scheduler of {@code W} threads; any other source is counted in a first pass and then
 * written shard after shard in one second pass. Memory stays bounded either way: one batch and the
 * staging buffers per writer.
 */
public final class ShardSetWriter {
  /** The memory-manager stage the writers' batches and staging buffers come from. */
  public static final String STAGE = "shards-write";
  private static final long BATCH_BYTES = 1 << 20;

  private final Dataset<Example> source;
  private final Path dir;
  private final WriteOptions options;
  private final Schema schema;
  private final List<FieldLayout> layouts;
  private final BufferPool pool = MemoryManager.shared().pool(STAGE);
  private final int batchRows;

  private ShardSetWriter(Dataset<Example> source, Path dir, WriteOptions options, Schema schema) {
    this.source = source;
    this.dir = dir;
    this.options = options;
    this.schema = schema;
    this.layouts = FieldLayout.of(schema.fields());
    long est = 1;
    for (TensorSpec f : schema.fields()) {
      est += f.isFixedLength() ? f.rowBytes() + 1 : 64;
    }
    this.batchRows = (int) Math.max(1, Math.min(4096, BATCH_BYTES / est));
  }

  /**
   * Writes every row of {@code source} into the shard set {@code dir} (created if needed) and
   * returns its metadata. A shard set already in {@code dir} is replaced: its {@code metadata.json}
   * is removed first, and its shard files that the new set does not overwrite once the new
   * {@code metadata.json} is in place.
   *
   * @throws IllegalArgumentException when the source's rows do not fit its schema, or {@code dir}
   *     holds a {@code metadata.json} that is not a shard set's
   * @throws UnsupportedOperationException for nested fields
   */
  public static ShardMetadata write(Dataset<Example> source, Path dir, WriteOptions options) {
    if (options.codec() != null && !options.codec().isBlank() && !options.codec().equalsIgnoreCase("none")
        && !options.codec().equalsIgnoreCase("uncompressed")) {
      throw new IllegalArgumentException("shards are stored uncompressed (rows are mapped in place); codec '"
          + options.codec() + "' does not apply");
    }
    Schema schema = schemaOf(source);
    return new ShardSetWriter(source, dir, options, schema).run();
  }

  private static Schema schemaOf(Dataset<Example> source) {
    if (source instanceof HasSchema h && h.schema() != null) {
      return h.schema();
    }
    Example first = source instanceof RandomAccessDataset<Example> ra
        ? (ra.size() > 0 ? ra.get(0) : null) : source.flux().next().block();
    if (first == null) {
      throw new IllegalArgumentException("cannot write an empty dataset without a schema: nothing tells the fields "
          + "(implement HasSchema)");
    }
    List<TensorSpec> specs = new ArrayList<>();
    for (Map.Entry<String, Tensor> e : first.fields().entrySet()) {
      if (e.getValue() == null) {
        throw new IllegalArgumentException("field '" + e.getKey() + "' of example " + first.index() + " is null;"
            + " give the dataset a schema (HasSchema) to write nullable fields");
      }
      specs.add(new TensorSpec(e.getKey(), e.getValue().dtype(), e.getValue().shape()));
    }
    return Schema.of(specs);
  }

  private ShardMetadata run() {
    int n = options.numShards();
    Set<String> previous = prepareDirectory();
    List<String> names = new ArrayList<>(n);
    for (int k = 0; k < n; k++) {
      names.add(String.format(Locale.ROOT, "shard-%05d.shard", k));
    }
    List<ShardInfo> infos;
    boolean ok = false;
    try {
      infos = parallel() ? writeParallel(names) : writeSequential(names);
      ShardMetadata meta = new ShardMetadata(null, schema, infos);
      writeMetadata(meta);
      ok = true;
      previous.removeAll(names);
      for (String stale : previous) {
        Files.deleteIfExists(dir.resolve(stale));
      }
      return meta;
    } catch (IOException e) {
      throw new DatasetIOException(dir.toString(), "cannot write: " + e, e);
    } finally {
      if (!ok) {
        for (String name : names) {
          try {
            Files.deleteIfExists(dir.resolve(name));
          } catch (IOException ignored) {
            // best effort: without a metadata.json the files are no shard set
          }
        }
      }
    }
  }

  /** Creates the directory and removes a previous set's metadata; returns that set's shard files. */
  private Set<String> prepareDirectory() {
    Set<String> previous = new HashSet<>();
    try {
      Files.createDirectories(dir);
      Path meta = dir.resolve(ShardMetadata.FILE_NAME);
      if (Files.exists(meta)) {
        if (!ShardMetadata.looksLikeOurs(meta)) {
          throw new IllegalArgumentException(dir + " holds a metadata.json that is not a Sluice shard set's; write"
              + " the shard set into another directory");
        }
        try {
          for (ShardInfo s : ShardMetadata.read(dir).shards()) {
            previous.add(s.file());
          }
        } catch (RuntimeException unreadable) {
          // a damaged set is replaced all the same; its files are overwritten where the names agree
        }
        Files.delete(meta);
      }
    } catch (IOException e) {
      throw new DatasetIOException(dir.toString(), "cannot prepare the output directory: " + e, e);
    }
    return previous;
  }

  private boolean parallel() {
    return source instanceof RandomAccessDataset<?> || knownSplits() != null;
  }

  private List<Split> knownSplits() {
    if (source instanceof SplitDataset<?> sd) {
      List<Split> splits = sd.splits();
      if (splits.stream().allMatch(Split::hasKnownRowCount)) {
        return splits;
      }
    }
    return null;
  }

  private long rows() {
    if (source instanceof RandomAccessDataset<?> ra) {
      return ra.size();
    }
    List<Split> splits = knownSplits();
    if (splits != null) {
      return splits.stream().mapToLong(Split::rowCount).sum();
    }
    Long n = source.flux().count().block();
    return n == null ? 0 : n;
  }

  /** First row of shard {@code k} of {@code shards} over {@code rows} rows. */
  static long start(long rows, int shards, int k) {
    return k * (rows / shards) + Math.min(k, rows % shards);
  }

  private List<ShardInfo> writeParallel(List<String> names) {
    long total = rows();
    int n = names.size();
    AtomicBoolean failed = new AtomicBoolean();
    Scheduler workers = Schedulers.newBoundedElastic(options.workers(), Integer.MAX_VALUE, "sluice-shard-writer");
    try {
      return Flux.range(0, n)
          .flatMapSequential(k -> Mono.fromSupplier(Fatal.supplier("writing " + names.get(k),
              () -> writeShard(dir.resolve(names.get(k)), start(total, n, k), start(total, n, k + 1), failed)))
              .subscribeOn(workers), options.workers(), 1)
          .doOnError(e -> failed.set(true))
          .collectList()
          .block();
    } catch (RuntimeException e) {
      failed.set(true);
      throw unwrap(e);
    } finally {
      workers.disposeGracefully().block();
    }
  }

  private ShardInfo writeShard(Path file, long from, long to, AtomicBoolean failed) {
    LongConsumer progress = options.progress();
    try (ShardFileWriter w = ShardFileWriter.create(file, layouts, to - from, pool)) {
      batches(from, to).doOnNext(b -> {
        try (b) {
          if (failed.get()) {
            throw new CancellationException("another shard failed");
          }
          w.write(b);
        }
        progress.accept(b.size());
      }).blockLast();
      return info(w.finish());
    }
  }

  /** The entry of {@code metadata.json} for a completed shard. */
  private static ShardInfo info(ShardFile.Summary s) {
    return new ShardInfo(s.file(), s.rows(), s.bytes(), ShardFile.checksumText(s.checksum()));
  }

  /** Rows {@code [from, to)} of the source as batches. */
  @SuppressWarnings("unchecked")
  private Flux<Batch> batches(long from, long to) {
    if (source instanceof RandomAccessDataset<?> ra) {
      RandomAccessDataset<Example> data = (RandomAccessDataset<Example>) ra;
      return Flux.generate(() -> from, Fatal.<Long, Batch>generator("reading rows for a shard", (pos, sink) -> {
        if (pos >= to) {
          sink.complete();
          return pos;
        }
        int count = (int) Math.min(batchRows, to - pos);
        sink.next(RowRange.batch(data, schema, pos, count, pool));
        return pos + count;
      }));
    }
    SplitDataset<Example> sd = (SplitDataset<Example>) source;
    List<Flux<Batch>> parts = new ArrayList<>();
    long at = 0;
    for (Split s : knownSplits()) {
      long a = Math.max(from, at);
      long b = Math.min(to, at + s.rowCount());
      if (a < b) {
        long lo = a - at;
        long hi = b - at;
        parts.add(sd instanceof BatchSplitDataset<Example> batches ? batches.readBatches(s, lo, hi, batchRows)
            : sd.read(s, lo, hi).buffer(batchRows).map(this::collate));
      }
      at += s.rowCount();
    }
    return Flux.concat(parts);
  }

  private Batch collate(List<Example> rows) {
    try (BatchBuilder b = BatchBuilder.create(schema, rows.size(), pool)) {
      for (Example e : rows) {
        b.append(e);
      }
      return b.build();
    }
  }

  private List<ShardInfo> writeSequential(List<String> names) {
    long total = rows();
    int n = names.size();
    List<ShardInfo> out = new ArrayList<>(n);
    try (Stream<Example> stream = source.flux().toStream(256)) {
      Iterator<Example> it = stream.iterator();
      long seen = 0;
      for (int k = 0; k < n; k++) {
        long rows = start(total, n, k + 1) - start(total, n, k);
        try (ShardFileWriter w = ShardFileWriter.create(dir.resolve(names.get(k)), layouts, rows, pool)) {
          long left = rows;
          while (left > 0) {
            int m = (int) Math.min(batchRows, left);
            List<Example> chunk = new ArrayList<>(m);
            for (int i = 0; i < m; i++) {
              if (!it.hasNext()) {
                throw new IllegalArgumentException("the source ended after " + (seen + i) + " rows but its first pass"
                    + " counted " + total + "; a dataset must give the same rows on every pass");
              }
              chunk.add(it.next());
            }
            try (Batch b = collate(chunk)) {
              w.write(b);
            }
            seen += m;
            left -= m;
            options.progress().accept(m);
          }
          out.add(info(w.finish()));
        }
      }
      if (it.hasNext()) {
        throw new IllegalArgumentException("the source gave more rows than the " + total + " its first pass counted;"
            + " a dataset must give the same rows on every pass");
      }
    } catch (RuntimeException e) {
      throw unwrap(e);
    }
    return out;
  }

  private void writeMetadata(ShardMetadata meta) throws IOException {
    Path temp = Files.createTempFile(dir, "." + ShardMetadata.FILE_NAME + ".", ".tmp");
    try {
      Files.write(temp, meta.toJson());
      try (var ch = java.nio.channels.FileChannel.open(temp, java.nio.file.StandardOpenOption.WRITE)) {
        ch.force(true);
      }
      Files.move(temp, dir.resolve(ShardMetadata.FILE_NAME), StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  private static RuntimeException unwrap(RuntimeException e) {
    Throwable t = Exceptions.unwrap(e);
    if (t instanceof RuntimeException r) {
      return r;
    }
    if (t instanceof Error err) {
      throw err;
    }
    return e;
  }
}
