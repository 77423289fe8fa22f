package dev.sluice.operators.internal.cache;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.internal.Schemas;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What every pass of one cache shares: the upstream, the spec, the key and directory, the block
 * geometry, the schema (declared, given or inferred from the first element) and the store, opened
 * on first use.
 */
final class CacheState {
  /** Rows of about this many bytes make a block when the rows have a fixed size. */
  static final long BLOCK_BYTES = 4L << 20;
  /** Rows per block when their size is not known in advance. */
  static final int DEFAULT_BLOCK_ROWS = 1024;

  final Upstream upstream;
  final CacheSpec spec;
  final Geometry geometry;
  final String key;
  final Path dir;
  final CacheListener listener;
  final String owner;
  private final Schema known;
  private volatile Schema schema;
  private volatile CacheStore store;

  CacheState(Upstream upstream, CacheSpec spec, CacheListener listener) {
    this.upstream = upstream;
    this.spec = spec;
    this.listener = listener;
    Schema known = spec.schema() != null ? spec.schema() : upstream.declaredSchema();
    int rows = spec.blockRows() > 0 ? spec.blockRows() : autoBlockRows(known);
    if (spec.blockRows() <= 0 && upstream.mode() != Upstream.Mode.RANDOM_ACCESS) {
      rows = aligned(rows, upstream);
    }
    this.geometry = upstream.mode() == Upstream.Mode.RANDOM_ACCESS ? Geometry.of(rows, upstream.size())
        : Geometry.of(rows, upstream.splits());
    String text = upstream.fingerprint() + "blocks " + rows + "\n"
        + (spec.schema() != null ? "declared " + spec.schema() + "\n" : "");
    this.key = sha256(text);
    this.dir = spec.directory().resolve("cache-" + key.substring(0, 24));
    this.known = known;
    this.schema = known;
    this.owner = "cache(" + dir + ")";
    if (!SealedManifest.exists(dir)) {
      CacheIndex.warmUpInBackground(); // a sealed cache is read without its index
    }
  }

  /**
   * {@code rows} rounded up to a multiple of the largest block alignment of the upstream's splits
   * ({@link dev.sluice.core.SplitDataset#blockAlignment}), so that no cache block cuts a unit the
   * upstream decodes whole and a filling pass decodes each unit once.
   */
  private static int aligned(int rows, Upstream upstream) {
    long align = 1;
    for (dev.sluice.core.Split s : upstream.splits()) {
      if (s.hasKnownRowCount() && s.rowCount() > 0) {
        align = Math.max(align, upstream.blockAlignment(s));
      }
    }
    long r = (rows + align - 1) / align * align;
    return (int) Math.min(r, Integer.MAX_VALUE - 8);
  }

  private static int autoBlockRows(Schema schema) {
    long rowBytes = schema == null ? -1 : schema.fixedRowBytes();
    if (rowBytes <= 0) {
      return DEFAULT_BLOCK_ROWS;
    }
    return (int) Math.max(16, Math.min(1 << 20, BLOCK_BYTES / rowBytes));
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The fields when the spec or the upstream declares them, without reading anything; else null. */
  Schema knownSchema() {
    return known;
  }

  /** The fields of the cached examples: declared, given, or inferred from the first element. */
  Schema schema() {
    Schema s = schema;
    if (s == null) {
      synchronized (this) {
        s = schema;
        if (s == null) {
          s = infer();
          schema = s;
        }
      }
    }
    return s;
  }

  private Schema infer() {
    Example first = null;
    if (upstream.mode() == Upstream.Mode.RANDOM_ACCESS) {
      if (upstream.size() > 0) {
        first = upstream.element(0);
      }
    } else {
      for (Split sp : upstream.splits()) {
        if (sp.rowCount() > 0) {
          first = upstream.range(sp, 0, 1, PipelineContext.defaults()).blockFirst();
          break;
        }
      }
    }
    return first == null ? Schema.of(List.<TensorSpec>of()) : Schemas.infer(first);
  }

  /**
   * The store, opened on first use; null when this pass cannot use the cache (the index did not
   * answer in time), after a warning and a fallback counted.
   */
  CacheStore store(PassCounters pass) {
    CacheStore s = store;
    if (s != null && s.isOpen()) {
      return s;
    }
    if (pass.storeUnavailable()) {
      return null;
    }
    synchronized (this) {
      if (store != null && store.isOpen()) {
        return store;
      }
      JvmFlags.check(dir.toString());
      PrivateDirs.ensure(spec.directory());
      Schema fields = schema();
      try {
        store = CacheRegistry.open(dir, fields, geometry, key, description(fields), owner, openTimeoutNanos());
      } catch (CacheIndex.Timeout t) {
        pass.warnOnce("open", dir + ": " + t.getMessage() + "; this pass reads from upstream without the cache");
        pass.fallback();
        pass.storeIsUnavailable();
        return null;
      }
      return store;
    }
  }

  /** A new pass's counters. */
  PassCounters newPass() {
    return new PassCounters(listener, spec.maxBytes());
  }

  /**
   * One pass over {@code view}, which counts into {@code counts}: opens the store (then calls
   * {@code prepare} with it, when it opened) and ends the counts when the pass closes.
   */
  CachedDataset.Pass pass(PassCounters counts, Dataset<Example> view, Consumer<CacheStore> prepare) {
    try {
      CacheStore s = store(counts);
      if (s != null) {
        prepare.accept(s);
      }
    } catch (RuntimeException e) {
      counts.close();
      throw e;
    }
    return new CachedDataset.Pass() {
      @Override
      public Dataset<Example> dataset() {
        return view;
      }

      @Override
      public void close() {
        counts.close();
      }
    };
  }

  long timeoutNanos() {
    return spec.timeout().toNanos();
  }

  /**
   * The bound of the wait for another process that creates or recovers the index: a live process
   * doing bounded work (a dead one's file lock is gone), which takes seconds on a loaded machine, so
   * six times the timeout and at least a minute.
   */
  long openTimeoutNanos() {
    return Math.max(TimeUnit.MINUTES.toNanos(1), 6 * spec.timeout().toNanos());
  }

  /** The rows of block {@code block} of a random-access upstream, computed into a batch from {@code pool}. */
  Batch computeBlock(long block, BufferPool pool) {
    long first = geometry.blockStart(block);
    int rows = geometry.blockSize(block);
    try (BatchBuilder b = BatchBuilder.create(schema(), rows, pool)) {
      upstream.fill(first, rows, b);
      return b.build();
    }
  }

  private String description(Schema fields) {
    StringBuilder sb = new StringBuilder("{\n");
    field(sb, "format", CacheStore.FORMAT).append(",\n");
    sb.append("  \"version\": 1,\n");
    field(sb, "key", key).append(",\n");
    field(sb, "mode", upstream.mode().name().toLowerCase(Locale.ROOT).replace('_', '-')).append(",\n");
    sb.append("  \"blockRows\": ").append(geometry.blockRows()).append(",\n");
    sb.append("  \"blocks\": ").append(geometry.blockCount()).append(",\n");
    sb.append("  \"rows\": ").append(geometry.rows()).append(",\n");
    field(sb, "schema", fields.toString()).append(",\n");
    field(sb, "created", Instant.now().toString()).append(",\n");
    sb.append("  \"upstream\": [");
    String[] lines = (upstream.fingerprint()).split("\n");
    for (int i = 0; i < lines.length; i++) {
      sb.append(i == 0 ? "\n    " : ",\n    ").append(quote(lines[i]));
    }
    return sb.append("\n  ]\n}\n").toString();
  }

  private static StringBuilder field(StringBuilder sb, String name, String value) {
    return sb.append("  ").append(quote(name)).append(": ").append(quote(value));
  }

  /** {@code s} as a JSON string. */
  static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }

  /** Checks the directories and the free space when the pipeline is assembled. */
  void checkAtAssembly() {
    JvmFlags.check(dir.toString());
    Path root = spec.directory();
    if (Files.exists(root)) {
      PrivateDirs.check(root);
    }
    if (Files.exists(dir)) {
      PrivateDirs.check(dir);
    }
    SpaceCheck.check(this);
  }

  @Override
  public String toString() {
    return owner;
  }
}
