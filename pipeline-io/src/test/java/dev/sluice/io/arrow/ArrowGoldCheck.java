package dev.sluice.io.arrow;

import dev.sluice.core.Example;
import dev.sluice.io.Checksums;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A tool, not a test: reads every {@code generated_*.arrow_file} (and {@code .stream}) under an
 * apache/arrow-testing {@code data/arrow-ipc-stream/integration} directory with Arrow Java and with
 * Sluice, and prints for each whether Sluice's rows equal Arrow Java's (for a big-endian file, Arrow
 * Java's rows of its little-endian twin in {@code 1.0.0-littleendian}), with Sluice's checksum.
 *
 * <p>Run with the test class path: {@code java -cp ... dev.sluice.io.arrow.ArrowGoldCheck DIR}.
 */
public final class ArrowGoldCheck {
  private ArrowGoldCheck() {}

  /** Prints one line per gold file and the counts. */
  public static void main(String[] args) throws Exception {
    Path root = Path.of(args[0]);
    List<Path> files;
    try (Stream<Path> s = Files.walk(root)) {
      files = s.filter(p -> p.getFileName().toString().startsWith("generated_")
          && (p.toString().endsWith(".arrow_file") || p.toString().endsWith(".stream"))).sorted().toList();
    }
    int[] javaReads = new int[2];
    int[] exact = new int[2];
    List<String> notExact = new ArrayList<>();
    for (Path f : files) {
      boolean isFile = f.toString().endsWith(".arrow_file");
      IpcFormat format = isFile ? IpcFormat.FILE : IpcFormat.STREAM;
      String rel = root.relativize(f).toString();
      boolean big = rel.startsWith("1.0.0-bigendian");
      List<Map<String, Object>> expected = null;
      String javaFails = null;
      try {
        expected = ArrowTestFiles.arrowRows(f, format);
      } catch (Throwable e) {
        javaFails = oneLine(e);
      }
      if (big) { // Arrow Java does not byte-swap: the values are those of the little-endian twin
        try {
          expected = ArrowTestFiles.arrowRows(root.resolve("1.0.0-littleendian").resolve(f.getFileName()), format);
        } catch (Throwable e) {
          System.out.println("JAVA-FAILS " + rel + " (its little-endian twin)  " + oneLine(e));
          continue;
        }
      }
      if (javaFails != null) {
        System.out.println("JAVA-FAILS " + rel + "  " + javaFails);
        if (!big) {
          continue;
        }
      } else {
        javaReads[isFile ? 0 : 1]++;
      }
      String verdict = read(f, rel, expected, javaFails, ArrowOptions.defaults(), "");
      if (verdict.startsWith("REFUSED") && verdict.contains("inside a fixed-size list")) {
        verdict = read(f, rel, expected, javaFails,
            ArrowOptions.builder().fixedSizeListNulls(FixedSizeListNulls.NULLABLE_ELEMENTS).build(),
            " (with fixedSizeListNulls(NULLABLE_ELEMENTS))");
      }
      if (verdict.startsWith("EXACT ")) {
        exact[isFile ? 0 : 1]++;
      }
      if (!verdict.startsWith("EXACT") && isFile && javaFails == null) {
        notExact.add(verdict);
      }
      System.out.println(verdict);
    }
    System.out.println("arrow_file: Arrow Java reads " + javaReads[0] + ", Sluice exact " + exact[0]);
    System.out.println("stream: Arrow Java reads " + javaReads[1] + ", Sluice exact " + exact[1]);
    notExact.forEach(l -> System.out.println("  not exact: " + l));
  }

  private static String read(Path f, String rel, List<Map<String, Object>> expected, String javaFails,
      ArrowOptions options, String note) {
    try (ArrowDataset ds = Arrow.open(f, options)) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (long i = 0; i < ds.size(); i++) {
        Example e = ds.get(i);
        rows.add(ArrowTestFiles.sluiceRow(e));
      }
      String sum = Checksums.sha256(ds);
      if (rows.equals(expected)) {
        return (javaFails != null ? "EXACT-BUT-JAVA-FAILS " : "EXACT ") + rel + note + "  " + sum.substring(0, 16);
      }
      return "DIFFERS " + rel + note + "  " + firstDifference(expected, rows);
    } catch (Throwable e) {
      return "REFUSED " + rel + note + "  " + oneLine(e);
    }
  }

  private static String firstDifference(List<Map<String, Object>> want, List<Map<String, Object>> got) {
    if (want.size() != got.size()) {
      return "rows " + got.size() + " vs " + want.size();
    }
    for (int i = 0; i < want.size(); i++) {
      if (!want.get(i).equals(got.get(i))) {
        for (String k : want.get(i).keySet()) {
          Object a = want.get(i).get(k);
          Object b = got.get(i).get(k);
          if (a == null ? b != null : !a.equals(b)) {
            return "row " + i + " field " + k + ": Sluice " + b + " vs Arrow Java " + a;
          }
        }
        return "row " + i + ": Sluice fields " + got.get(i).keySet() + " vs " + want.get(i).keySet();
      }
    }
    return "?";
  }

  private static String oneLine(Throwable e) {
    String m = e.getClass().getSimpleName() + ": " + e.getMessage();
    m = m.replace('\n', ' ');
    return m.length() > 220 ? m.substring(0, 220) : m;
  }
}
