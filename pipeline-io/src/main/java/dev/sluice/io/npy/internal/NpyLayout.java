package dev.sluice.io.npy.internal;

import dev.sluice.core.DatasetIOException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** How a path holds NumPy data: one file, a directory of aligned named arrays, or an npy stack. */
public enum NpyLayout {
  /** One {@code .npy} file. */
  FILE,
  /** A directory of equal-length named {@code .npy} arrays, one dataset of aligned fields. */
  ALIGNED,
  /** A directory of numbered chunks {@code 0.npy … k.npy} along axis 0. */
  STACK;

  private static final Pattern CHUNK = Pattern.compile("[0-9]+\\.npy");

  /** The layout of {@code path}, or null when it holds no NumPy data. Reads at most 6 bytes of one file. */
  public static NpyLayout of(Path path) throws IOException {
    if (Files.isRegularFile(path)) {
      return hasMagic(path) ? FILE : null;
    }
    if (!Files.isDirectory(path)) {
      return null;
    }
    List<Path> npy = npyFiles(path);
    if (npy.isEmpty() || !hasMagic(npy.get(0))) {
      return null;
    }
    for (Path p : npy) {
      if (isChunk(p)) {
        return STACK;
      }
    }
    return ALIGNED;
  }

  static boolean hasMagic(Path file) throws IOException {
    byte[] head = new byte[NpyHeader.MAGIC.length];
    int n = 0;
    try (InputStream in = Files.newInputStream(file)) {
      while (n < head.length) {
        int r = in.read(head, n, head.length - n);
        if (r < 0) {
          break;
        }
        n += r;
      }
    }
    return NpyHeader.hasMagic(head, n);
  }

  /** True for a chunk name such as {@code 12.npy}. */
  public static boolean isChunk(Path p) {
    return isChunk(p.getFileName().toString());
  }

  /** True for a chunk file name such as {@code 12.npy}. */
  public static boolean isChunk(String fileName) {
    return CHUNK.matcher(fileName).matches();
  }

  /** The regular {@code .npy} files of {@code dir}, sorted by file name. */
  public static List<Path> npyFiles(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      List<Path> out = new ArrayList<>();
      s.filter(p -> p.getFileName().toString().endsWith(".npy") && Files.isRegularFile(p)).forEach(out::add);
      out.sort(Comparator.comparing(p -> p.getFileName().toString()));
      return out;
    } catch (IOException e) {
      throw new DatasetIOException(dir.toString(), "cannot list: " + e, e);
    }
  }

  /** The file name without {@code .npy}. */
  public static String stem(Path file) {
    String n = file.getFileName().toString();
    return n.endsWith(".npy") ? n.substring(0, n.length() - 4) : n;
  }

  /** The last segment of a file name or URI without {@code .npy}. */
  public static String stem(String fileOrUri) {
    String n = fileOrUri.substring(fileOrUri.lastIndexOf('/') + 1);
    return n.endsWith(".npy") ? n.substring(0, n.length() - 4) : n;
  }
}
