package dev.sluice.io.hdf5;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.io.DatasetFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Locale;

/**
 * The {@code hdf5} entry of the format registry (HDF5 and netCDF-4 files). Probe: a regular file
 * with the HDF5 signature {@code \x89HDF\r\n\x1a\n} at byte 0, 512, 1024, 2048, ... (after a user
 * block). Files named {@code .h5}, {@code .hdf5}, {@code .he5} or {@code .nc} are claimed by name,
 * so that a damaged one gets HDF5's own error. Opens every top-level dataset ({@link Hdf5#open}).
 */
public final class Hdf5Format implements DatasetFormat {
  private static final byte[] SIGNATURE = {(byte) 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

  @Override
  public String name() {
    return "hdf5";
  }

  @Override
  public boolean probe(Path path) throws IOException {
    if (!Files.isRegularFile(path)) {
      return false;
    }
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      long size = ch.size();
      ByteBuffer head = ByteBuffer.allocate(SIGNATURE.length);
      for (long at = 0; at + SIGNATURE.length <= size; at = at == 0 ? 512 : at * 2) {
        head.clear();
        while (head.hasRemaining() && ch.read(head, at + head.position()) > 0) {
          // a positioned read may return fewer bytes
        }
        if (!head.hasRemaining() && ByteBuffer.wrap(SIGNATURE).equals(head.flip())) {
          return true;
        }
      }
      return false;
    }
  }

  @Override
  public boolean claimsByName(Path path) {
    if (!Files.isRegularFile(path) || path.getFileName() == null) {
      return false;
    }
    String n = path.getFileName().toString().toLowerCase(Locale.ROOT);
    return n.endsWith(".h5") || n.endsWith(".hdf5") || n.endsWith(".he5") || n.endsWith(".nc");
  }

  @Override
  public Dataset<Example> open(Path path) {
    return Hdf5.open(path);
  }

  /**
   * Reads only the datasets {@code columns} (top-level names such as {@code x}, or paths such as
   * {@code /group/x}), in that order; every top-level dataset when empty.
   */
  @Override
  public Dataset<Example> open(Path path, List<String> columns) {
    return Hdf5.open(path, columns, Hdf5.DEFAULT_MAX_CHUNK_BYTES);
  }
}
