package dev.sluice.io.arrow;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.IoMode;
import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.WriteOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The {@code arrow} entry of the format registry. Probe: a file that starts with the magic
 * {@code ARROW1} (the IPC file format, Feather version 2), or with a stream's schema message. A file
 * named {@code .arrow}, {@code .arrows}, {@code .feather} or {@code .ipc} is claimed by name, so
 * that a damaged one is reported by the Arrow reader. Writes with {@link Arrow#write}. Recognizing a
 * file needs nothing beyond pipeline-io; opening and writing one need Arrow Java, and say so with a
 * {@link dev.sluice.core.MissingDependencyException} when it is missing.
 */
public final class ArrowFormat implements DatasetFormat {
  @Override
  public String name() {
    return "arrow";
  }

  @Override
  public boolean probe(Path path) throws IOException {
    if (!Files.isRegularFile(path) || Files.size(path) < 8) {
      return false;
    }
    byte[] head = new byte[8];
    try (InputStream in = Files.newInputStream(path)) {
      if (in.readNBytes(head, 0, 8) < 8) {
        return false;
      }
    }
    if (new String(head, 0, 6, java.nio.charset.StandardCharsets.ISO_8859_1).equals("ARROW1")) {
      return true;
    }
    ByteBuffer b = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN);
    // a stream: the continuation marker and a metadata length, then a schema message (read with
    // Arrow's flatbuffers when Arrow is there; else the file is claimed, so that opening it names
    // the libraries to add)
    return b.getInt(0) == 0xFFFFFFFF && b.getInt(4) > 0 && b.getInt(4) <= Files.size(path) - 8
        && (!OptionalLibrary.ARROW.isPresent() || StreamProbe.isSchemaMessage(path, 8, b.getInt(4)));
  }

  @Override
  public boolean claimsByName(Path path) {
    String n = path.getFileName() == null ? "" : path.getFileName().toString().toLowerCase(Locale.ROOT);
    return Files.isRegularFile(path)
        && (n.endsWith(".arrow") || n.endsWith(".arrows") || n.endsWith(".feather") || n.endsWith(".ipc"));
  }

  @Override
  public Dataset<Example> open(Path path) {
    return Arrow.open(path);
  }

  /** Reads only these columns: a column Sluice cannot read is refused only when selected. */
  @Override
  public Dataset<Example> open(Path path, List<String> columns) {
    return Arrow.open(path, ArrowOptions.builder().columns(columns).build());
  }

  @Override
  public boolean canWrite() {
    return true;
  }

  /** One {@code .arrow} file. */
  @Override
  public boolean writesOneFile() {
    return true;
  }

  /**
   * Writes every example of {@code dataset} to the file {@code out} (replaced or refused if it
   * exists, as {@link WriteOptions#existing()} says; written under a temporary name and renamed): the IPC
   * stream format when its name ends in {@code .arrows}, else the file format. The codec
   * ({@link WriteOptions#codec()}) is {@code none} (default), {@code lz4} ({@code lz4_frame}) or
   * {@code zstd}; record batches hold about {@link WriteOptions#rowGroupBytes()} bytes of
   * fixed-length fields (default {@link ArrowWriteOptions#DEFAULT_BATCH_ROWS} rows).
   */
  @Override
  public void write(Dataset<Example> dataset, Path out, WriteOptions options) {
    String n = out.getFileName() == null ? "" : out.getFileName().toString().toLowerCase(Locale.ROOT);
    int rows = ArrowWriteOptions.DEFAULT_BATCH_ROWS;
    if (options.rowGroupBytes() > 0 && dataset instanceof HasSchema h) {
      long rowBytes = Math.max(1, h.schema().fixedRowBytes());
      rows = (int) Math.max(1, Math.min(Integer.MAX_VALUE, options.rowGroupBytes() / rowBytes));
    }
    Arrow.write(dataset, out, ArrowWriteOptions.builder()
        .format(n.endsWith(".arrows") ? IpcFormat.STREAM : IpcFormat.FILE)
        .compression(ArrowCompression.parse(options.codec()))
        .batchRows(rows)
        .progress(options.progress())
        .existing(options.existing())
        .build());
  }

  @Override
  public Set<IoMode> ioModes() {
    return Set.of(IoMode.MMAP, IoMode.READ);
  }

  @Override
  public Dataset<Example> open(Path path, List<String> columns, IoMode io) {
    return Arrow.open(path, ArrowOptions.builder().columns(columns).io(io).build());
  }
}
