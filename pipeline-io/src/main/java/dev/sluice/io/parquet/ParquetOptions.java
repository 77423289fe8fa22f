package dev.sluice.io.parquet;

import dev.sluice.core.MemoryManager;
import dev.sluice.core.Options.NullPolicy;
import dev.sluice.core.Shape;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How {@link Parquet#open} reads: an immutable value, built with {@link #builder()}.
 *
 * @param columns the fields to read (output names such as {@code x}, {@code a.b}, {@code m.key}; a
 *     struct's name selects all its fields), in the order given; empty reads every field
 * @param nullPolicy {@link NullPolicy#FILL} (default): a null becomes zeros (or an empty value) and
 *     the row is marked invalid in the column's validity; {@link NullPolicy#FAIL}: a null fails the
 *     read naming the file, row group, column and row
 * @param shapes declared per-row shapes of list columns ({@code "x" -> [64]}): such a list becomes a
 *     fixed-shape tensor, and a row of another length (or a null element) is an error. Hints win
 *     over the file's own declarations ({@code sluice.shape.<name>} footer keys, pyarrow's
 *     FixedSizeList); the hint {@link #VARIABLE} ({@code [-1]}) reads a list as variable-length
 *     whatever the file declares
 * @param pageChecksums whether page CRCs written by the writer are verified
 * @param decodeParallelism row groups decoded at the same time by {@link ParquetDataset#batches},
 *     ≥ 1 (default 1); the memory budget is about {@code decodeParallelism + 1} decoded row groups
 * @param memory the memory manager batches are allocated from (stage {@code parquet})
 * @param localFiles how local files are read: a window of the file mapped per column-chunk read and
 *     unmapped after it ({@link LocalFiles#STREAM}, default) or a mapping of the whole file
 *     ({@link LocalFiles#MAPPED})
 */
public record ParquetOptions(
    List<String> columns,
    NullPolicy nullPolicy,
    Map<String, Shape> shapes,
    PageChecksums pageChecksums,
    int decodeParallelism,
    MemoryManager memory,
    LocalFiles localFiles) {

  /** The shape hint that reads a list column as variable-length whatever its file declares. */
  public static final Shape VARIABLE = Shape.of(-1);

  /** How local (scheme-less) paths are read; Hadoop URIs always go through Hadoop's FileSystem. */
  public enum LocalFiles {
    /**
     * Each column-chunk read maps just its window of the file, copies it once out of the page cache
     * and unmaps it at once (small reads are positional reads): the process holds only the row
     * groups it is reading, so its resident memory stays flat however large the file (default).
     * parquet-java's own {@code LocalInputFile} copies every byte twice ({@code RandomAccessFile}
     * reads go through a temporary C buffer).
     */
    STREAM,
    /**
     * A read-only memory mapping of the whole file: a column chunk is one copy out of the page
     * cache, and repeated passes skip the read system calls. The mapped pages a pass touched count
     * in the process's resident set (reclaimable page cache, but RSS grows with the file) until
     * the GC releases the mapping; a file truncated while mapped fails the read cleanly.
     */
    MAPPED
  }

  /** Whether page checksums (CRC32 in the page header) are checked. */
  public enum PageChecksums {
    /** Page CRCs are not checked (parquet-java's default). */
    IGNORE,
    /** A page whose CRC does not match fails the read naming the file, row group and column. */
    VERIFY
  }

  private static final ParquetOptions DEFAULTS =
      new ParquetOptions(List.of(), NullPolicy.FILL, Map.of(), PageChecksums.IGNORE, 1, MemoryManager.shared(),
          LocalFiles.STREAM);

  /**
   * Options with the given values; throws {@link IllegalArgumentException} naming the first one out
   * of range.
   */
  public ParquetOptions {
    columns = List.copyOf(Objects.requireNonNull(columns, "columns"));
    Objects.requireNonNull(nullPolicy, "nullPolicy");
    shapes = Map.copyOf(Objects.requireNonNull(shapes, "shapes"));
    Objects.requireNonNull(pageChecksums, "pageChecksums");
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(localFiles, "localFiles");
    if (decodeParallelism < 1) {
      throw new IllegalArgumentException("decodeParallelism >= 1 required but it was " + decodeParallelism);
    }
    for (Map.Entry<String, Shape> e : shapes.entrySet()) {
      if (!e.getValue().equals(VARIABLE) && (!e.getValue().isFullyDefined() || e.getValue().rank() == 0)) {
        throw new IllegalArgumentException("shape hint for '" + e.getKey()
            + "' must be a concrete shape of rank >= 1, or [-1], but it was " + e.getValue());
      }
    }
  }

  /**
   * Every column, {@link NullPolicy#FILL}, no shape hints, checksums ignored, one row group decoded
   * at a time, the shared memory manager, {@link LocalFiles#STREAM}.
   */
  public static ParquetOptions defaults() {
    return DEFAULTS;
  }

  /** A builder starting from {@link #defaults()}. */
  public static Builder builder() {
    return new Builder(DEFAULTS);
  }

  /** A builder starting from these options. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Builds {@link ParquetOptions}. */
  public static final class Builder {
    private List<String> columns;
    private NullPolicy nullPolicy;
    private final Map<String, Shape> shapes;
    private PageChecksums pageChecksums;
    private int decodeParallelism;
    private MemoryManager memory;
    private LocalFiles localFiles;

    private Builder(ParquetOptions from) {
      columns = from.columns;
      nullPolicy = from.nullPolicy;
      shapes = new LinkedHashMap<>(from.shapes);
      pageChecksums = from.pageChecksums;
      decodeParallelism = from.decodeParallelism;
      memory = from.memory;
      localFiles = from.localFiles;
    }

    /** Reads only these fields, in this order. */
    public Builder columns(List<String> names) {
      columns = List.copyOf(names);
      return this;
    }

    /** Reads only these fields, in this order. */
    public Builder columns(String... names) {
      return columns(List.of(names));
    }

    /** What a null does ({@link NullPolicy#FILL} or {@link NullPolicy#FAIL}). */
    public Builder nullPolicy(NullPolicy value) {
      nullPolicy = Objects.requireNonNull(value, "nullPolicy");
      return this;
    }

    /**
     * Declares the per-row shape of list column {@code name}, or {@link #VARIABLE} to read it as
     * variable-length whatever the file declares.
     */
    public Builder shape(String name, Shape shape) {
      shapes.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(shape, "shape"));
      return this;
    }

    /** Whether page CRCs are verified. */
    public Builder pageChecksums(PageChecksums value) {
      pageChecksums = Objects.requireNonNull(value, "pageChecksums");
      return this;
    }

    /** Row groups decoded in parallel (and in flight) by {@link ParquetDataset#batches}, ≥ 1. */
    public Builder decodeParallelism(int value) {
      decodeParallelism = value;
      return this;
    }

    /** The memory manager batches are allocated from. */
    public Builder memory(MemoryManager value) {
      memory = Objects.requireNonNull(value, "memory");
      return this;
    }

    /** How local files are read. */
    public Builder localFiles(LocalFiles value) {
      localFiles = Objects.requireNonNull(value, "localFiles");
      return this;
    }

    /** The options set so far; throws {@link IllegalArgumentException} naming a value out of range. */
    public ParquetOptions build() {
      return new ParquetOptions(columns, nullPolicy, shapes, pageChecksums, decodeParallelism, memory, localFiles);
    }
  }
}
