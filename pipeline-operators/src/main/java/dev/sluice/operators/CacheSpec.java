package dev.sluice.operators;

import dev.sluice.core.Schema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How {@link Pipeline#cache(CacheSpec)} caches: where, under which name, within which budget.
 * Immutable; each method returns a new spec.
 *
 * <pre>{@code
 * Pipeline.from(Parquet.open(file))
 *     .map(Decode::image)
 *     .cache(CacheSpec.named("decode-v3").maxBytes(8L << 30))
 *     .shuffle().shard(world, rank).batch(256)
 * }</pre>
 *
 * <p>The cache's key is a fingerprint of the source (files with sizes and modification times,
 * schema, projection), of every operator before the cache (its configuration) and of the name
 * given here, which stands for the user functions before it: a lambda has no stable identity, so a
 * pipeline that maps before {@code cache} must be named, and the name changed when the function
 * changes. A different key is a different cache directory, never stale data.
 */
public final class CacheSpec {
  /** The default bound of every wait on the cache (a lock, another process's block): 10 seconds. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
  /** The {@link #maxBytes()} of a spec without a budget. */
  public static final long UNLIMITED = Long.MAX_VALUE;

  private static final CacheSpec DEFAULTS = new CacheSpec(null, null, UNLIMITED, 0, DEFAULT_TIMEOUT, null, null);

  private final String name;
  private final Path directory;
  private final long maxBytes;
  private final int blockRows;
  private final Duration timeout;
  private final Schema schema;
  private final CacheMonitor monitor;

  private CacheSpec(String name, Path directory, long maxBytes, int blockRows, Duration timeout, Schema schema,
      CacheMonitor monitor) {
    this.name = name;
    this.directory = directory;
    this.maxBytes = maxBytes;
    this.blockRows = blockRows;
    this.timeout = timeout;
    this.schema = schema;
    this.monitor = monitor;
  }

  /** No name, the default directory, no budget, automatic block size, {@link #DEFAULT_TIMEOUT}. */
  public static CacheSpec defaults() {
    return DEFAULTS;
  }

  /**
   * The defaults with a name for what the operators before the cache compute (required when a
   * {@code map}, {@code filter} or other user function comes before it).
   *
   * @param name any non-blank text; change it when a function before the cache changes
   */
  public static CacheSpec named(String name) {
    return DEFAULTS.name(name);
  }

  /** This spec with {@code newName} (see {@link #named(String)}). */
  public CacheSpec name(String newName) {
    Objects.requireNonNull(newName, "name");
    if (newName.isBlank()) {
      throw new IllegalArgumentException("name must not be blank");
    }
    return new CacheSpec(newName, directory, maxBytes, blockRows, timeout, schema, monitor);
  }

  /**
   * This spec keeping its caches under {@code root} instead of
   * {@code /dev/shm/sluice-<user>/} ({@link #defaultDirectory()}). The directory is created with
   * mode 0700 when missing; one that belongs to another user or that other users may read is
   * refused.
   */
  public CacheSpec directory(Path root) {
    return new CacheSpec(name, Objects.requireNonNull(root, "root"), maxBytes, blockRows, timeout, schema, monitor);
  }

  /**
   * This spec with a budget: the cache's segments never take more than {@code bytes}; beyond it,
   * further blocks are served from upstream uncached (and counted), never an error in the middle of
   * an epoch. The free space of the directory is checked against the budget (or against the
   * cache's size when that is smaller and known) when the pipeline is assembled.
   *
   * @param bytes &gt; 0, or {@link #UNLIMITED}
   */
  public CacheSpec maxBytes(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("maxBytes > 0 required but it was " + bytes);
    }
    return new CacheSpec(name, directory, bytes, blockRows, timeout, schema, monitor);
  }

  /**
   * This spec with {@code rows} consecutive elements per block, the unit that is filled, published
   * and read (default: about 4 MiB of rows when the rows have a fixed size, else 1,024).
   *
   * @param rows in [1, 1,048,576]
   */
  public CacheSpec blockRows(int rows) {
    if (rows < 1 || rows > 1 << 20) {
      throw new IllegalArgumentException("blockRows in [1, 1048576] required but it was " + rows);
    }
    return new CacheSpec(name, directory, maxBytes, rows, timeout, schema, monitor);
  }

  /**
   * This spec bounding every wait on the cache by {@code wait}: a lock of the index, a block
   * another live process is filling. When a wait times out the pass serves that block from
   * upstream, counts it ({@link CacheStats#fallbacks()}) and logs one warning.
   *
   * @param wait &gt; 0
   */
  public CacheSpec timeout(Duration wait) {
    Objects.requireNonNull(wait, "wait");
    if (wait.isNegative() || wait.isZero()) {
      throw new IllegalArgumentException("timeout > 0 required but it was " + wait);
    }
    return new CacheSpec(name, directory, maxBytes, blockRows, wait, schema, monitor);
  }

  /**
   * This spec declaring the fields of the cached examples, for an upstream that cannot declare
   * them itself (after a {@code map}); without it they are inferred from the first element.
   */
  public CacheSpec schema(Schema fields) {
    return new CacheSpec(name, directory, maxBytes, blockRows, timeout, Objects.requireNonNull(fields, "fields"), monitor);
  }

  /** This spec reporting its counts to {@code counters}. */
  public CacheSpec monitor(CacheMonitor counters) {
    return new CacheSpec(name, directory, maxBytes, blockRows, timeout, schema, Objects.requireNonNull(counters, "counters"));
  }

  /** The name, or null. */
  public String name() {
    return name;
  }

  /** The directory caches live under: the one given, else {@link #defaultDirectory()}. */
  public Path directory() {
    return directory != null ? directory : defaultDirectory();
  }

  /** The budget in bytes, {@link #UNLIMITED} without one. */
  public long maxBytes() {
    return maxBytes;
  }

  /** Elements per block, or 0 for automatic. */
  public int blockRows() {
    return blockRows;
  }

  /** The bound of every wait. */
  public Duration timeout() {
    return timeout;
  }

  /** The declared fields, or null. */
  public Schema schema() {
    return schema;
  }

  /** The monitor, or null. */
  public CacheMonitor monitor() {
    return monitor;
  }

  /**
   * {@code /dev/shm/sluice-<user>} where {@code /dev/shm} exists (shared memory: every process of
   * the node maps the same pages), else {@code sluice-<user>} in {@code java.io.tmpdir}.
   */
  public static Path defaultDirectory() {
    String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
    Path shm = Path.of("/dev/shm");
    Path base = Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    return base.resolve("sluice-" + user);
  }

  @Override
  public String toString() {
    return "CacheSpec(" + (name == null ? "" : "name=" + name + ", ") + "directory=" + directory()
        + (maxBytes == UNLIMITED ? "" : ", maxBytes=" + maxBytes) + (blockRows == 0 ? "" : ", blockRows=" + blockRows)
        + ", timeout=" + timeout + ")";
  }
}
