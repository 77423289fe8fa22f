package dev.sluice.io.arrow;

import java.util.Locale;

/** Buffer compression of Arrow IPC record batches. */
public enum ArrowCompression {
  /** Buffers stored as they are: readers share them with the file, zero-copy. */
  NONE,
  /** Each buffer an LZ4 frame. */
  LZ4_FRAME,
  /** Each buffer a ZSTD frame. */
  ZSTD;

  /**
   * Parses {@code none}, {@code uncompressed}, {@code lz4}, {@code lz4_frame} or {@code zstd} (any
   * case); null means {@link #NONE}.
   *
   * @throws IllegalArgumentException naming the value and the accepted names
   */
  public static ArrowCompression parse(String name) {
    if (name == null || name.isBlank()) {
      return NONE;
    }
    return switch (name.trim().toLowerCase(Locale.ROOT)) {
      case "none", "uncompressed" -> NONE;
      case "lz4", "lz4_frame", "lz4-frame" -> LZ4_FRAME;
      case "zstd" -> ZSTD;
      default -> throw new IllegalArgumentException("Arrow compression must be one of [none, lz4_frame, zstd] but it was '"
          + name + "'");
    };
  }
}
