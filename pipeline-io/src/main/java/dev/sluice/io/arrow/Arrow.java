package dev.sluice.io.arrow;

import dev.sluice.core.DatasetIOException;
import dev.sluice.io.arrow.internal.ArrowFileDataset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Arrow IPC files and streams ({@code .arrow}, {@code .arrows}, {@code .feather} version 2, Hugging
 * Face {@code datasets} caches): read zero-copy from a memory mapping, or in order from a pipe.
 * The type mapping, the conversions and the errors are described in {@code docs/formats/arrow.md}.
 *
 * <pre>{@code
 * try (ArrowDataset data = Arrow.open(Path.of("train.arrow"))) {
 *   Example e = data.get(17);                        // views of the mapping
 *   Pipeline.from(data).shuffle().batch(256)...      // batch() gathers rows in bulk
 * }
 * }</pre>
 */
public final class Arrow {
  private Arrow() {}

  /** Opens {@code file} (the IPC file or stream format, recognized from its first bytes) with every column. */
  public static ArrowDataset open(Path file) {
    return open(file, ArrowOptions.defaults());
  }

  /**
   * Opens {@code file} (the IPC file or stream format, recognized from its first bytes): maps it,
   * reads its schema and the metadata of every record batch (never a body).
   *
   * @throws dev.sluice.core.DatasetFormatException naming the file and the position when it is not
   *     Arrow IPC, is truncated or damaged
   * @throws dev.sluice.core.UnsupportedFormatException for a big-endian file, or a selected column
   *     Sluice cannot read (every column when none is selected), naming it and its type
   * @throws IllegalArgumentException naming a selected column the file does not have
   */
  public static ArrowDataset open(Path file, ArrowOptions options) {
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(options, "options");
    if (Files.isDirectory(file)) {
      throw new DatasetIOException(file.toString(), "is a directory, not an Arrow IPC file", null);
    }
    return ArrowFileDataset.open(file, options);
  }
}
