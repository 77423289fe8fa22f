package dev.sluice.io.arrow;

import dev.sluice.io.ExistingOutput;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongConsumer;

/**
 * How {@link Arrow#write} writes. An immutable value; {@link #builder()} makes one.
 *
 * @param format the file or the stream format (default {@link IpcFormat#FILE})
 * @param compression the buffer compression (default {@link ArrowCompression#NONE}, which readers
 *     share with the file)
 * @param batchRows rows per record batch when writing examples, &gt; 0 (default
 *     {@link #DEFAULT_BATCH_ROWS}); batches given to the writer keep their own size
 * @param metadata key-value metadata of the schema (empty by default)
 * @param progress told the number of rows written each time some are
 * @param existing what writing to a file does when the file exists (default
 *     {@link ExistingOutput#REPLACE})
 */
public record ArrowWriteOptions(IpcFormat format, ArrowCompression compression, int batchRows,
    Map<String, String> metadata, LongConsumer progress, ExistingOutput existing) {
  /** Default rows per record batch when writing examples. */
  public static final int DEFAULT_BATCH_ROWS = 65_536;

  /** Options; throws {@link IllegalArgumentException} for {@code batchRows <= 0}. */
  public ArrowWriteOptions {
    Objects.requireNonNull(format, "format");
    Objects.requireNonNull(compression, "compression");
    Objects.requireNonNull(progress, "progress");
    Objects.requireNonNull(existing, "existing");
    metadata = Map.copyOf(metadata);
    if (batchRows <= 0) {
      throw new IllegalArgumentException("batchRows > 0 required but it was " + batchRows);
    }
  }

  /** The file format, uncompressed, record batches of {@link #DEFAULT_BATCH_ROWS} rows. */
  public static ArrowWriteOptions defaults() {
    return builder().build();
  }

  /** A builder starting from the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds {@link ArrowWriteOptions}. */
  public static final class Builder {
    private IpcFormat format = IpcFormat.FILE;
    private ArrowCompression compression = ArrowCompression.NONE;
    private int batchRows = DEFAULT_BATCH_ROWS;
    private Map<String, String> metadata = Map.of();
    private LongConsumer progress = rows -> { };
    private ExistingOutput existing = ExistingOutput.REPLACE;

    private Builder() {}

    /** The IPC format. */
    public Builder format(IpcFormat f) {
      this.format = f;
      return this;
    }

    /** The buffer compression. */
    public Builder compression(ArrowCompression c) {
      this.compression = c;
      return this;
    }

    /** Rows per record batch when writing examples. */
    public Builder batchRows(int rows) {
      this.batchRows = rows;
      return this;
    }

    /** Key-value metadata of the schema. */
    public Builder metadata(Map<String, String> m) {
      this.metadata = m;
      return this;
    }

    /** A listener told the rows written each time some are. */
    public Builder progress(LongConsumer listener) {
      this.progress = listener;
      return this;
    }

    /** What writing to a file does when the file exists. */
    public Builder existing(ExistingOutput e) {
      this.existing = e;
      return this;
    }

    /** The options. */
    public ArrowWriteOptions build() {
      return new ArrowWriteOptions(format, compression, batchRows, metadata, progress, existing);
    }
  }
}
