package dev.sluice.io.arrow;

import dev.sluice.core.IoMode;
import dev.sluice.core.MemoryManager;
import java.util.List;
import java.util.Objects;

/**
 * How an Arrow IPC file or stream is read. An immutable value; {@link #builder()} makes one.
 *
 * @param columns the fields to read, in this order (a struct's or a map's name selects every field
 *     under it); empty for every field. A column Sluice cannot read is refused only when selected.
 * @param maxChunkBytes the largest single mapping of a file, in [1, {@link Integer#MAX_VALUE}]
 *     (default {@link #DEFAULT_MAX_CHUNK_BYTES}); a record batch that straddles two chunks is
 *     mapped on its own
 * @param memory the memory manager whose stage {@value #STAGE} holds what decoding cannot share
 *     with the file (default {@link MemoryManager#shared()})
 * @param fixedSizeListNulls how a fixed-size list of items declared nullable is read (default
 *     {@link FixedSizeListNulls#FIXED_DIMENSION})
 * @param io how a file is read (default {@link IoMode#MMAP}): mapped, or with {@link IoMode#READ}
 *     one positioned read per record batch into heap memory, nothing mapped; streams ignore it
 */
public record ArrowOptions(List<String> columns, long maxChunkBytes, MemoryManager memory,
    FixedSizeListNulls fixedSizeListNulls, IoMode io) {
  /** Default largest mapping: 1 GiB. */
  public static final long DEFAULT_MAX_CHUNK_BYTES = 1L << 30;
  /** The memory-manager stage batches are decoded into. */
  public static final String STAGE = "arrow";

  /** Options; throws {@link IllegalArgumentException} naming the first value out of range. */
  public ArrowOptions {
    columns = List.copyOf(columns);
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(fixedSizeListNulls, "fixedSizeListNulls");
    Objects.requireNonNull(io, "io");
    if (maxChunkBytes < 1 || maxChunkBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("maxChunkBytes in [1, " + Integer.MAX_VALUE + "] required but it was "
          + maxChunkBytes);
    }
  }

  /** Every column, 1 GiB mappings, the shared memory manager. */
  public static ArrowOptions defaults() {
    return builder().build();
  }

  /** A builder starting from the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from these options. */
  public Builder toBuilder() {
    return new Builder().columns(columns).maxChunkBytes(maxChunkBytes).memory(memory)
        .fixedSizeListNulls(fixedSizeListNulls).io(io);
  }

  /** Builds {@link ArrowOptions}. */
  public static final class Builder {
    private List<String> columns = List.of();
    private long maxChunkBytes = DEFAULT_MAX_CHUNK_BYTES;
    private MemoryManager memory = MemoryManager.shared();
    private FixedSizeListNulls fixedSizeListNulls = FixedSizeListNulls.FIXED_DIMENSION;
    private IoMode io = IoMode.MMAP;

    private Builder() {}

    /** The fields to read, in this order (empty: every field). */
    public Builder columns(List<String> names) {
      this.columns = Objects.requireNonNull(names, "names");
      return this;
    }

    /** The fields to read, in this order. */
    public Builder columns(String... names) {
      return columns(List.of(names));
    }

    /** The largest single mapping, in bytes. */
    public Builder maxChunkBytes(long bytes) {
      this.maxChunkBytes = bytes;
      return this;
    }

    /** The memory manager batches are decoded into. */
    public Builder memory(MemoryManager manager) {
      this.memory = manager;
      return this;
    }

    /** How a fixed-size list of items declared nullable is read. */
    public Builder fixedSizeListNulls(FixedSizeListNulls policy) {
      this.fixedSizeListNulls = policy;
      return this;
    }

    /** How a file is read: mapped (the default) or with positioned reads. */
    public Builder io(IoMode mode) {
      this.io = mode;
      return this;
    }

    /** The options. */
    public ArrowOptions build() {
      return new ArrowOptions(columns, maxChunkBytes, memory, fixedSizeListNulls, io);
    }
  }
}
