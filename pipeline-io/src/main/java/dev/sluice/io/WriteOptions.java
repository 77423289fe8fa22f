package dev.sluice.io;

import java.util.Objects;
import java.util.function.LongConsumer;

/**
 * Settings for {@link DatasetFormat#write}; each format uses what applies to it.
 *
 * @param numShards number of output shards or files (formats that shard), ≥ 1
 * @param workers parallel writer threads, ≥ 1
 * @param codec compression codec name (Parquet, shards), or null for the format's default
 * @param rowGroupBytes target row group size in bytes (Parquet), or 0 for the format's default
 * @param progress told the number of rows written each time some are (from any writer thread, so
 *     it must be thread-safe); never null
 * @param existing what to do when the output path already holds something (default
 *     {@link ExistingOutput#REPLACE})
 */
public record WriteOptions(int numShards, int workers, String codec, long rowGroupBytes, LongConsumer progress,
    ExistingOutput existing) {
  private static final LongConsumer NO_PROGRESS = rows -> { };

  /** Write options; throws {@link IllegalArgumentException} naming the first value out of range. */
  public WriteOptions {
    if (numShards < 1) {
      throw new IllegalArgumentException("numShards >= 1 required but it was " + numShards);
    }
    if (workers < 1) {
      throw new IllegalArgumentException("workers >= 1 required but it was " + workers);
    }
    if (rowGroupBytes < 0) {
      throw new IllegalArgumentException("rowGroupBytes >= 0 required but it was " + rowGroupBytes);
    }
    Objects.requireNonNull(progress, "progress");
    Objects.requireNonNull(existing, "existing");
  }

  /** Write options that replace an existing output. */
  public WriteOptions(int numShards, int workers, String codec, long rowGroupBytes, LongConsumer progress) {
    this(numShards, workers, codec, rowGroupBytes, progress, ExistingOutput.REPLACE);
  }

  /** Write options without a progress listener. */
  public WriteOptions(int numShards, int workers, String codec, long rowGroupBytes) {
    this(numShards, workers, codec, rowGroupBytes, NO_PROGRESS);
  }

  /** One shard, one worker, the format's default codec and row-group size. */
  public static WriteOptions defaults() {
    return new WriteOptions(1, 1, null, 0);
  }

  /** These options with {@code n} output shards or files. */
  public WriteOptions withNumShards(int n) {
    return new WriteOptions(n, workers, codec, rowGroupBytes, progress, existing);
  }

  /** These options with {@code n} writer threads. */
  public WriteOptions withWorkers(int n) {
    return new WriteOptions(numShards, n, codec, rowGroupBytes, progress, existing);
  }

  /** These options with codec {@code c} (null for the format's default). */
  public WriteOptions withCodec(String c) {
    return new WriteOptions(numShards, workers, c, rowGroupBytes, progress, existing);
  }

  /** These options with row groups of about {@code b} bytes (0 for the format's default). */
  public WriteOptions withRowGroupBytes(long b) {
    return new WriteOptions(numShards, workers, codec, b, progress, existing);
  }

  /** These options with a progress listener (see {@link #progress()}). */
  public WriteOptions withProgress(LongConsumer listener) {
    return new WriteOptions(numShards, workers, codec, rowGroupBytes, listener, existing);
  }

  /** These options with policy {@code e} for an output path that already holds something. */
  public WriteOptions withExisting(ExistingOutput e) {
    return new WriteOptions(numShards, workers, codec, rowGroupBytes, progress, e);
  }
}
