package dev.sluice.core;

import dev.sluice.core.internal.AtomicOutput;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;

/** A {@link PipelineState} in a file: read whole, and replaced atomically (temporary file, force, rename). */
final class PipelineStateFiles {
  private PipelineStateFiles() {}

  /** {@link PipelineState#read(Path)}. */
  static PipelineState read(Path file) {
    Objects.requireNonNull(file, "file");
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new DatasetIOException(file.toString(), "no such checkpoint file", e);
    } catch (IOException e) {
      throw new DatasetIOException(file.toString(), "cannot read the checkpoint: " + e.getMessage(), e);
    }
    return PipelineStateJson.fromJson(new String(bytes, StandardCharsets.UTF_8), file.toString());
  }

  /** {@link PipelineState#write(Path)}. */
  static void write(PipelineState state, Path file) {
    Objects.requireNonNull(file, "file");
    Path dir = file.toAbsolutePath().getParent();
    byte[] bytes = (state.toJson() + "\n").getBytes(StandardCharsets.UTF_8);
    try (AtomicOutput out = AtomicOutput.file(file)) {
      try (FileChannel ch = FileChannel.open(out.temp(), StandardOpenOption.WRITE)) {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
        ch.force(true);
      }
      out.commit();
    } catch (IOException | UncheckedIOException e) {
      String why = dir == null || Files.isDirectory(dir) ? e.getMessage() : "the directory " + dir + " does not exist";
      throw new DatasetIOException(file.toString(), "cannot write the checkpoint: " + why, e);
    }
  }
}
