package dev.sluice.io;

/**
 * Settings for {@link DatasetFormat#write}; each format uses what applies to it.
 *
 * @param numShards number of output shards or files (formats that shard), ≥ 1
 * @param workers parallel writer threads, ≥ 1
 * @param codec compression codec name (Parquet, shards), or null for the format's default
 * @param rowGroupBytes target row group size in bytes (Parquet), or 0 for the format's default
 */
public record WriteOptions(int numShards, int workers, String codec, long rowGroupBytes) {
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
  }

  /** One shard, one worker, the format's default codec and row-group size. */
  public static WriteOptions defaults() {
    return new WriteOptions(1, 1, null, 0);
  }

  /** These options with {@code n} output shards or files. */
  public WriteOptions withNumShards(int n) {
    return new WriteOptions(n, workers, codec, rowGroupBytes);
  }

  /** These options with {@code n} writer threads. */
  public WriteOptions withWorkers(int n) {
    return new WriteOptions(numShards, n, codec, rowGroupBytes);
  }

  /** These options with codec {@code c} (null for the format's default). */
  public WriteOptions withCodec(String c) {
    return new WriteOptions(numShards, workers, c, rowGroupBytes);
  }

  /** These options with row groups of about {@code b} bytes (0 for the format's default). */
  public WriteOptions withRowGroupBytes(long b) {
    return new WriteOptions(numShards, workers, codec, b);
  }
}
