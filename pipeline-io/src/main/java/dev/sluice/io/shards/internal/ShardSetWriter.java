package dev.sluice.io.shards.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
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
import dev.sluice.core.internal.AtomicOutput;
import dev.sluice.core.internal.Fatal;
import dev.sluice.core.internal.OrderedParallel;
import dev.sluice.core.internal.RowRange;
import dev.sluice.core.internal.shardfile.FieldLayout;
import dev.sluice.core.internal.shardfile.ShardFile;
import dev.sluice.core.internal.shardfile.ShardFileWriter;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.internal.Outputs;
import dev.sluice.io.shards.ShardInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import java.util.stream.Stream;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
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
   * Writes every row of {@code source} into the shard set {@code dir} and returns its metadata. The
   * set is built in a temporary directory beside {@code dir} and renamed to {@code dir} when every
   * shard and the {@code metadata.json} are complete; a failure deletes it. A dataset already at
   * {@code dir} is handled as {@link WriteOptions#existing()} says.
   *
   * @throws IllegalArgumentException when the source's rows do not fit its schema, or {@code dir}
   *     holds something other than a dataset
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
    List<String> names = new ArrayList<>(n);
    for (int k = 0; k < n; k++) {
      names.add(String.format(Locale.ROOT, "shard-%05d.shard", k));
    }
    try (AtomicOutput out = Outputs.directory(dir, options.existing())) {
      Path temp = out.temp();
      List<ShardInfo> infos = parallel() ? writeParallel(temp, names) : writeSequential(temp, names);
      ShardMetadata meta = new ShardMetadata(null, schema, infos);
      writeMetadata(temp, meta);
      Outputs.commit(out, options.existing(), dir.toString());
      return meta;
    } catch (IOException e) {
      throw new DatasetIOException(dir.resolve(ShardMetadata.FILE_NAME).toString(), "cannot write: "
          + Outputs.reason(e), e);
    }
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

  /**
   * The shards written by {@code options.workers()} tasks at once ({@link OrderedParallel}), their
   * entries in shard order. The first shard to fail stops the others at their next batch, and its
   * error is the one thrown (the others then fail with a cancellation that is not reported).
   */
  private List<ShardInfo> writeParallel(Path temp, List<String> names) {
    long total = rows();
    int n = names.size();
    AtomicBoolean failed = new AtomicBoolean();
    AtomicReference<Throwable> firstFailure = new AtomicReference<>();
    Scheduler workers = Schedulers.newBoundedElastic(options.workers(), Integer.MAX_VALUE, "sluice-shard-writer");
    try {
      return OrderedParallel.<Integer, ShardInfo>flatMap(Flux.range(0, n), (k, out) -> {
        try {
          out.accept(Fatal.supplier("writing " + names.get(k),
              () -> writeShard(temp, names.get(k), start(total, n, k), start(total, n, k + 1), failed)).get());
        } catch (RuntimeException | Error e) {
          if (failed.compareAndSet(false, true)) {
            firstFailure.set(e);
          }
          throw e;
        }
      }, options.workers(), workers, info -> { })
          .collectList()
          .block();
    } catch (RuntimeException e) {
      failed.set(true);
      Throwable first = firstFailure.get();
      if (first instanceof Error err) {
        throw err;
      }
      throw unwrap(first instanceof RuntimeException r ? r : e);
    } finally {
      workers.disposeGracefully().block();
    }
  }

  private ShardInfo writeShard(Path temp, String name, long from, long to, AtomicBoolean failed) {
    LongConsumer progress = options.progress();
    try (ShardFileWriter w = ShardFileWriter.create(temp.resolve(name), dir.resolve(name).toString(), layouts,
        to - from, pool)) {
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

  private List<ShardInfo> writeSequential(Path temp, List<String> names) {
    long total = rows();
    int n = names.size();
    List<ShardInfo> out = new ArrayList<>(n);
    try (Stream<Example> stream = source.flux().toStream(256)) {
      Iterator<Example> it = stream.iterator();
      long seen = 0;
      for (int k = 0; k < n; k++) {
        long rows = start(total, n, k + 1) - start(total, n, k);
        try (ShardFileWriter w = ShardFileWriter.create(temp.resolve(names.get(k)), dir.resolve(names.get(k)).toString(),
            layouts, rows, pool)) {
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

  private static void writeMetadata(Path temp, ShardMetadata meta) throws IOException {
    Path file = temp.resolve(ShardMetadata.FILE_NAME);
    Files.write(file, meta.toJson(), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.force(true);
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
