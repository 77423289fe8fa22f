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

  public static WriteOptions defaults() {
    return new WriteOptions(1, 1, null, 0);
  }

  public WriteOptions withNumShards(int n) {
    return new WriteOptions(n, workers, codec, rowGroupBytes);
  }

  public WriteOptions withWorkers(int n) {
    return new WriteOptions(numShards, n, codec, rowGroupBytes);
  }

  public WriteOptions withCodec(String c) {
    return new WriteOptions(numShards, workers, c, rowGroupBytes);
  }

  public WriteOptions withRowGroupBytes(long b) {
    return new WriteOptions(numShards, workers, codec, b);
  }
}
