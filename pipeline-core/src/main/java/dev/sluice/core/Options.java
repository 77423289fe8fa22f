package dev.sluice.core;

import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Objects;

/**
 * Pipeline-wide settings, as tf.data's {@code Options}: immutable, built with {@link #builder()}.
 *
 * @param deterministic whether parallel operators must keep element order (default true)
 * @param memory the memory manager batches are allocated from (default {@link MemoryManager#shared()})
 * @param nullPolicy what a null in a non-nullable position does (default {@link NullPolicy#FILL})
 * @param metrics the registry every stage reports its {@code sluice.stage.*} meters to, or null (the
 *     default) for none: a pipeline without a registry, and without a flight recording that enables
 *     Sluice's events, records nothing and has no measuring operator in its passes
 * @param name the pipeline's name, the {@code pipeline} tag of its meters and events (default
 *     {@value #DEFAULT_NAME})
 * @param prefetchPark how long an idle {@code prefetch} consumer parks on its worker thread for the
 *     next element before it gives the worker back, &gt;= 0 (zero: at once); default 1 ms, or the
 *     system property {@value #PREFETCH_PARK_PROPERTY} (microseconds) when set
 * @param prefetchSpin whether and how long an idle {@code prefetch} consumer spins for the next
 *     element before it parks; default {@link PrefetchSpin#adaptive()}, or
 *     {@link PrefetchSpin#fixed} with the system property {@value #PREFETCH_SPIN_PROPERTY}
 *     (microseconds) when set
 * @param mapChunks where a parallel {@code map} maps its chunks; default
 *     {@link ChunkPlacement#ADAPTIVE}, or {@link ChunkPlacement#WORKERS} when the system property
 *     {@value #MAP_INLINE_PROPERTY} is {@code false}
 * @param blockShuffleThreshold the data size, in bytes, above which {@code shuffle()} on a
 *     random-access source is a block shuffle (contiguous blocks of rows in a permuted order, mixed
 *     in a window) instead of the global permutation, whose every row is a random read once the file
 *     no longer fits the page cache; &gt;= 0; default {@link #defaultBlockShuffleThreshold()} (half
 *     the physical memory)
 * @param readCacheBytes the budget of the process-wide {@link ReadCache} this pipeline asks for
 *     while each of its passes runs, &gt;= 0 (zero: no read cache), or {@link #READ_CACHE_DEFAULT}
 *     (the default) to ask for none; while several pipelines run, the largest budget asked for
 *     applies, and when none asks, {@link ReadCache#budget()}'s default (the system property
 *     {@value ReadCache#PROPERTY}, else a quarter of the memory limit, else 1 GiB)
 * @param pageCacheBytes the budget of the process-wide page cache of the Parquet readers (the
 *     decompressed pages that reads of part of a row group cut, with their decoded levels, and the
 *     decoded dictionary pages, kept on the heap) this pipeline asks for while each of its passes
 *     runs, &gt;= 0 (zero: no page is kept), or {@link #PAGE_CACHE_DEFAULT} (the default) to ask for
 *     none; while several pipelines run, the largest budget asked for applies, and when none asks,
 *     64 MiB
 * @param shuffleBlockBytes the bytes of rows a block of the block shuffle of a random-access source
 *     holds at least ({@code shuffle()} above {@link #blockShuffleThreshold()}, or
 *     {@code shuffle(RandomAccessShuffle.BLOCKS)}), as Mosaic Streaming's {@code shuffle_block_size}:
 *     the source is cut into runs of this many bytes of rows (at most a 256th of its rows), and each
 *     block of the shuffle is a whole number of runs, read whole; smaller blocks mix better and read
 *     more randomly. &gt; 0; default {@link #DEFAULT_SHUFFLE_BLOCK_BYTES} (2 MiB). A checkpoint
 *     records the rows of a run, so a state taken with another block size resumes only when its
 *     runs hold the same rows
 */
public record Options(boolean deterministic, MemoryManager memory, NullPolicy nullPolicy, MeterRegistry metrics,
    String name, Duration prefetchPark, PrefetchSpin prefetchSpin, ChunkPlacement mapChunks,
    long blockShuffleThreshold, long readCacheBytes, long pageCacheBytes, long shuffleBlockBytes) {
  /** The name of a pipeline whose options give none. */
  public static final String DEFAULT_NAME = "pipeline";
  /** The system property that sets the default of {@link #prefetchPark()}, in microseconds. */
  public static final String PREFETCH_PARK_PROPERTY = "sluice.prefetch.parkMicros";
  /** The system property that, when set, fixes the default {@link #prefetchSpin()}, in microseconds. */
  public static final String PREFETCH_SPIN_PROPERTY = "sluice.prefetch.spinMicros";
  /** The system property that, {@code false}, makes {@link ChunkPlacement#WORKERS} the default. */
  public static final String MAP_INLINE_PROPERTY = "sluice.map.inline";

  /** The {@link #readCacheBytes()} of a pipeline that asks for no read cache budget of its own. */
  public static final long READ_CACHE_DEFAULT = -1;

  /** The {@link #pageCacheBytes()} of a pipeline that asks for no page cache budget of its own. */
  public static final long PAGE_CACHE_DEFAULT = -1;

  /** The default {@link #shuffleBlockBytes()}: 2 MiB. */
  public static final long DEFAULT_SHUFFLE_BLOCK_BYTES = 2L << 20;

  private static final Duration DEFAULT_PREFETCH_PARK = Duration.ofMillis(1);

  /**
   * Options with the given values; {@code memory}, {@code nullPolicy}, {@code name},
   * {@code prefetchPark}, {@code prefetchSpin} and {@code mapChunks} must not be null, {@code name}
   * must not be blank, {@code prefetchPark} and {@code blockShuffleThreshold} not negative,
   * {@code readCacheBytes} not negative or {@link #READ_CACHE_DEFAULT}, {@code pageCacheBytes} not
   * negative or {@link #PAGE_CACHE_DEFAULT}, {@code shuffleBlockBytes} positive; {@code metrics} may
   * be null (no registry).
   */
  public Options {
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(nullPolicy, "nullPolicy");
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank but it was '" + name + "'");
    }
    checkNotNegative("prefetchPark", prefetchPark);
    Objects.requireNonNull(prefetchSpin, "prefetchSpin");
    Objects.requireNonNull(mapChunks, "mapChunks");
    checkThreshold(blockShuffleThreshold);
    checkReadCache(readCacheBytes);
    checkPageCache(pageCacheBytes);
    checkShuffleBlock(shuffleBlockBytes);
  }

  /**
   * Options with the given values and the default {@link #shuffleBlockBytes()}
   * ({@link #DEFAULT_SHUFFLE_BLOCK_BYTES}).
   */
  public Options(boolean deterministic, MemoryManager memory, NullPolicy nullPolicy, MeterRegistry metrics,
      String name, Duration prefetchPark, PrefetchSpin prefetchSpin, ChunkPlacement mapChunks,
      long blockShuffleThreshold, long readCacheBytes, long pageCacheBytes) {
    this(deterministic, memory, nullPolicy, metrics, name, prefetchPark, prefetchSpin, mapChunks,
        blockShuffleThreshold, readCacheBytes, pageCacheBytes, DEFAULT_SHUFFLE_BLOCK_BYTES);
  }

  /**
   * Options with the given values and no page cache budget of their own
   * ({@link #PAGE_CACHE_DEFAULT}).
   */
  public Options(boolean deterministic, MemoryManager memory, NullPolicy nullPolicy, MeterRegistry metrics,
      String name, Duration prefetchPark, PrefetchSpin prefetchSpin, ChunkPlacement mapChunks,
      long blockShuffleThreshold, long readCacheBytes) {
    this(deterministic, memory, nullPolicy, metrics, name, prefetchPark, prefetchSpin, mapChunks,
        blockShuffleThreshold, readCacheBytes, PAGE_CACHE_DEFAULT);
  }

  /**
   * Options with the given values and no read cache budget of their own
   * ({@link #READ_CACHE_DEFAULT}).
   */
  public Options(boolean deterministic, MemoryManager memory, NullPolicy nullPolicy, MeterRegistry metrics,
      String name, Duration prefetchPark, PrefetchSpin prefetchSpin, ChunkPlacement mapChunks,
      long blockShuffleThreshold) {
    this(deterministic, memory, nullPolicy, metrics, name, prefetchPark, prefetchSpin, mapChunks,
        blockShuffleThreshold, READ_CACHE_DEFAULT);
  }

  /**
   * Options with the given values and the default {@link #blockShuffleThreshold()}.
   */
  public Options(boolean deterministic, MemoryManager memory, NullPolicy nullPolicy, MeterRegistry metrics,
      String name, Duration prefetchPark, PrefetchSpin prefetchSpin, ChunkPlacement mapChunks) {
    this(deterministic, memory, nullPolicy, metrics, name, prefetchPark, prefetchSpin, mapChunks,
        defaultBlockShuffleThreshold());
  }

  /**
   * Half the physical memory of the machine (or of the container the JVM runs in), the default
   * {@link #blockShuffleThreshold()}: a dataset larger than that is taken not to stay in the page
   * cache between epochs. {@code Long.MAX_VALUE} when the JVM cannot tell.
   */
  public static long defaultBlockShuffleThreshold() {
    return PhysicalMemory.HALF;
  }

  /** Half the physical memory, read once. */
  private static final class PhysicalMemory {
    static final long HALF = half();

    private static long half() {
      java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
      if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
        long total = sun.getTotalMemorySize();
        if (total > 0) {
          return total / 2;
        }
      }
      return Long.MAX_VALUE;
    }
  }

  private static long checkReadCache(long bytes) {
    if (bytes < 0 && bytes != READ_CACHE_DEFAULT) {
      throw new IllegalArgumentException("readCacheBytes >= 0 required but it was " + bytes);
    }
    return bytes;
  }

  private static long checkPageCache(long bytes) {
    if (bytes < 0 && bytes != PAGE_CACHE_DEFAULT) {
      throw new IllegalArgumentException("pageCacheBytes >= 0 required but it was " + bytes);
    }
    return bytes;
  }

  private static long checkShuffleBlock(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("shuffleBlockBytes > 0 required but it was " + bytes);
    }
    return bytes;
  }

  private static long checkThreshold(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("blockShuffleThreshold >= 0 required but it was " + bytes);
    }
    return bytes;
  }

  /**
   * Options with the given values and the default tuning ({@link #prefetchPark()},
   * {@link #prefetchSpin()}, {@link #mapChunks()} as in {@link #defaults()}).
   */
  public Options(boolean deterministic, MemoryManager memory, NullPolicy nullPolicy, MeterRegistry metrics,
      String name) {
    this(deterministic, memory, nullPolicy, metrics, name, defaultPrefetchPark(), defaultPrefetchSpin(),
        defaultMapChunks());
  }

  /**
   * Deterministic, the shared memory manager, {@link NullPolicy#FILL}, no metrics, named
   * {@value #DEFAULT_NAME}, and the tuning defaults, which the system properties
   * {@value #PREFETCH_PARK_PROPERTY}, {@value #PREFETCH_SPIN_PROPERTY} and {@value #MAP_INLINE_PROPERTY}
   * set when given (read on each call: this is the one place they are read).
   *
   * @throws IllegalArgumentException when one of those properties is set to a value out of range
   */
  public static Options defaults() {
    return new Options(true, MemoryManager.shared(), NullPolicy.FILL, null, DEFAULT_NAME);
  }

  /** A builder starting from {@link #defaults()}. */
  public static Builder builder() {
    return new Builder(defaults());
  }

  private static Duration defaultPrefetchPark() {
    String value = System.getProperty(PREFETCH_PARK_PROPERTY);
    if (value == null) {
      return DEFAULT_PREFETCH_PARK;
    }
    return Duration.ofNanos(microsProperty(PREFETCH_PARK_PROPERTY, value) * 1_000L);
  }

  private static PrefetchSpin defaultPrefetchSpin() {
    String value = System.getProperty(PREFETCH_SPIN_PROPERTY);
    if (value == null) {
      return PrefetchSpin.adaptive();
    }
    return PrefetchSpin.fixed(Duration.ofNanos(microsProperty(PREFETCH_SPIN_PROPERTY, value) * 1_000L));
  }

  private static ChunkPlacement defaultMapChunks() {
    return Boolean.parseBoolean(System.getProperty(MAP_INLINE_PROPERTY, "true"))
        ? ChunkPlacement.ADAPTIVE : ChunkPlacement.WORKERS;
  }

  private static long microsProperty(String property, String value) {
    long micros;
    try {
      micros = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("-D" + property + " must be a whole number of microseconds but it was '"
          + value + "'", e);
    }
    if (micros < 0 || micros > Long.MAX_VALUE / 1_000L) {
      throw new IllegalArgumentException("-D" + property + " must be in [0, " + Long.MAX_VALUE / 1_000L
          + "] microseconds but it was " + micros);
    }
    return micros;
  }

  private static Duration checkNotNegative(String what, Duration value) {
    Objects.requireNonNull(value, what);
    if (value.isNegative()) {
      throw new IllegalArgumentException(what + " >= 0 required but it was " + value);
    }
    return value;
  }

  /**
   * Whether and how long an idle {@code prefetch} consumer spins for the next element before it
   * parks. Spinning answers an element that comes within the spin without a park and a wake-up, at
   * the price of the core it spins on.
   */
  public sealed interface PrefetchSpin permits PrefetchSpin.Adaptive, PrefetchSpin.Fixed {
    /**
     * Spin up to 50 µs only when the process may use more processors
     * ({@code Runtime.availableProcessors()}) than the pass keeps threads busy, and then only while
     * spinning pays (most recent waits ended within the spin); the default.
     *
     * @return the adaptive policy
     */
    static PrefetchSpin adaptive() {
      return new Adaptive();
    }

    /**
     * Always spin up to {@code budget}, however many threads the pass keeps busy.
     *
     * @param budget the most an idle consumer spins, &gt;= 0 (zero: never spin)
     * @return the fixed policy
     */
    static PrefetchSpin fixed(Duration budget) {
      return new Fixed(budget);
    }

    /** {@link PrefetchSpin#adaptive()}. */
    record Adaptive() implements PrefetchSpin {}

    /**
     * {@link PrefetchSpin#fixed(Duration)}.
     *
     * @param budget the most an idle consumer spins, &gt;= 0 (zero: never spin)
     */
    record Fixed(Duration budget) implements PrefetchSpin {
      /** A fixed spin; {@code budget} must not be null or negative. */
      public Fixed {
        checkNotNegative("budget", budget);
      }
    }
  }

  /** Where a parallel {@code map} maps a chunk of elements. */
  public enum ChunkPlacement {
    /**
     * A chunk whose mapping is measured to cost less than a hop to a worker (or little next to
     * producing its inputs) maps on the thread that completed it; others go to the workers. The
     * default.
     */
    ADAPTIVE,
    /** Every chunk goes to a worker of the map's scheduler (to compare against {@link #ADAPTIVE}). */
    WORKERS
  }

  /** A builder starting from these options. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** What a source does with a null value. */
  public enum NullPolicy {
    /** Deliver a fill value (zeros or empty) and mark the row invalid in the column's validity. */
    FILL,
    /** Fail the read with a {@link DatasetFormatException} naming the row. */
    FAIL
  }

  /** Builds {@link Options}. */
  public static final class Builder {
    private boolean deterministic;
    private MemoryManager memory;
    private NullPolicy nullPolicy;
    private MeterRegistry metrics;
    private String name;
    private Duration prefetchPark;
    private PrefetchSpin prefetchSpin;
    private ChunkPlacement mapChunks;
    private long blockShuffleThreshold;
    private long readCacheBytes;
    private long pageCacheBytes;
    private long shuffleBlockBytes;

    private Builder(Options from) {
      this.deterministic = from.deterministic;
      this.memory = from.memory;
      this.nullPolicy = from.nullPolicy;
      this.metrics = from.metrics;
      this.name = from.name;
      this.prefetchPark = from.prefetchPark;
      this.prefetchSpin = from.prefetchSpin;
      this.mapChunks = from.mapChunks;
      this.blockShuffleThreshold = from.blockShuffleThreshold;
      this.readCacheBytes = from.readCacheBytes;
      this.pageCacheBytes = from.pageCacheBytes;
      this.shuffleBlockBytes = from.shuffleBlockBytes;
    }

    /** Whether parallel operators keep element order; returns this builder. */
    public Builder deterministic(boolean value) {
      this.deterministic = value;
      return this;
    }

    /** The memory manager batches are allocated from; returns this builder. */
    public Builder memory(MemoryManager value) {
      this.memory = Objects.requireNonNull(value, "memory");
      return this;
    }

    /** What a null in a non-nullable position does; returns this builder. */
    public Builder nullPolicy(NullPolicy value) {
      this.nullPolicy = Objects.requireNonNull(value, "nullPolicy");
      return this;
    }

    /**
     * The registry every stage of the pipeline reports its meters to (docs/metrics.md); returns this
     * builder.
     */
    public Builder metrics(MeterRegistry registry) {
      this.metrics = Objects.requireNonNull(registry, "registry");
      return this;
    }

    /** No metrics registry (the default); returns this builder. */
    public Builder withoutMetrics() {
      this.metrics = null;
      return this;
    }

    /** The pipeline's name, the {@code pipeline} tag of its meters, not blank; returns this builder. */
    public Builder name(String value) {
      Objects.requireNonNull(value, "name");
      if (value.isBlank()) {
        throw new IllegalArgumentException("name must not be blank but it was '" + value + "'");
      }
      this.name = value;
      return this;
    }

    /**
     * How long an idle {@code prefetch} consumer parks on its worker thread for the next element
     * (woken by the producer's next element) before it gives the worker back; zero gives it back at
     * once. Returns this builder.
     *
     * @param value &gt;= 0; default 1 ms (or {@code -D}{@value Options#PREFETCH_PARK_PROPERTY} µs)
     */
    public Builder prefetchPark(Duration value) {
      this.prefetchPark = checkNotNegative("prefetchPark", value);
      return this;
    }

    /**
     * Whether and how long an idle {@code prefetch} consumer spins for the next element before it
     * parks; returns this builder.
     *
     * @param value {@link PrefetchSpin#adaptive()} (the default) or {@link PrefetchSpin#fixed}
     *     (the default when {@code -D}{@value Options#PREFETCH_SPIN_PROPERTY} is set)
     */
    public Builder prefetchSpin(PrefetchSpin value) {
      this.prefetchSpin = Objects.requireNonNull(value, "prefetchSpin");
      return this;
    }

    /**
     * Where a parallel {@code map} maps its chunks; returns this builder.
     *
     * @param value {@link ChunkPlacement#ADAPTIVE} (the default) or {@link ChunkPlacement#WORKERS}
     *     (the default when {@code -D}{@value Options#MAP_INLINE_PROPERTY}{@code =false})
     */
    public Builder mapChunks(ChunkPlacement value) {
      this.mapChunks = Objects.requireNonNull(value, "mapChunks");
      return this;
    }

    /**
     * The data size above which {@code shuffle()} on a random-access source is a block shuffle;
     * returns this builder. An explicit {@code shuffle(RandomAccessShuffle)} ignores it.
     *
     * @param bytes &gt;= 0 (0: always blocks; {@code Long.MAX_VALUE}: always the global
     *     permutation); default half the physical memory ({@link #defaultBlockShuffleThreshold()})
     */
    public Builder blockShuffleThreshold(long bytes) {
      this.blockShuffleThreshold = checkThreshold(bytes);
      return this;
    }

    /**
     * The budget of the process-wide {@link ReadCache} (the block cache of positioned reads) this
     * pipeline asks for while each of its passes runs; returns this builder. The cache is shared by
     * every open file of the process: while several pipelines run, the largest budget asked for
     * applies; once none runs, the default again ({@link ReadCache#budget()}).
     *
     * @param bytes &gt;= 0 (0: no read cache), or {@link Options#READ_CACHE_DEFAULT} to ask for none
     */
    public Builder readCacheBytes(long bytes) {
      this.readCacheBytes = checkReadCache(bytes);
      return this;
    }

    /**
     * The budget of the process-wide page cache of the Parquet readers (decompressed pages that
     * reads of part of a row group cut, and decoded dictionary pages, on the heap) this pipeline
     * asks for while each of its passes runs; returns this builder. While several pipelines run,
     * the largest budget asked for applies; once none runs, the default again (64 MiB). A page
     * weighing more than a quarter of the budget is not kept.
     *
     * @param bytes &gt;= 0 (0: no page is kept), or {@link Options#PAGE_CACHE_DEFAULT} to ask for none
     */
    public Builder pageCacheBytes(long bytes) {
      this.pageCacheBytes = checkPageCache(bytes);
      return this;
    }

    /**
     * The bytes of rows a block of the block shuffle of a random-access source holds at least
     * (Mosaic Streaming's {@code shuffle_block_size}); returns this builder. The source is cut into
     * runs of this many bytes of rows, at most a 256th of its rows, and every block is a whole
     * number of runs, read whole: smaller blocks mix better and read more randomly, larger ones
     * read more sequentially. The global permutation and split sources ignore it.
     *
     * @param bytes &gt; 0; default {@link Options#DEFAULT_SHUFFLE_BLOCK_BYTES} (2 MiB)
     */
    public Builder shuffleBlockBytes(long bytes) {
      this.shuffleBlockBytes = checkShuffleBlock(bytes);
      return this;
    }

    /** The options set so far. */
    public Options build() {
      return new Options(deterministic, memory, nullPolicy, metrics, name, prefetchPark, prefetchSpin, mapChunks,
          blockShuffleThreshold, readCacheBytes, pageCacheBytes, shuffleBlockBytes);
    }
  }
}
