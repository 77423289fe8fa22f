package dev.sluice.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.examples.cli.BenchData.Access;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code sluice bench DIR --matrix}: every cell of formats &times; access (mmap / read, where the
 * format offers both) &times; fixed- / variable-length records (where the format holds both)
 * &times; sequential / shuffled &times; 1 / 2 workers, each measured as a single
 * {@code sluice bench} run would, over datasets generated once under {@code DIR/<format>-<kind>}
 * and kept for later runs. Beside the speed of each shuffled cell it reports how well that shuffle
 * mixes ({@link Quality}: a {@code sluice read --quality} run of {@link #QUALITY_EPOCHS} epochs for
 * rank 0 of {@code world} over the same dataset). Prints one table, a line per access pattern naming
 * the fastest format (and, when that format mixes poorly, the fastest one that mixes well), and
 * optionally draws the table ({@link MatrixChart}).
 */
final class BenchMatrix {
  /** The series the matrix runs when {@code --formats} is not given: bench's generated formats, then HDF5. */
  static final List<String> DEFAULT_FORMATS = java.util.stream.Stream.concat(BenchData.FORMATS.stream(),
      java.util.stream.Stream.of(BenchData.HDF5)).toList();
  /** Records per generated dataset unless {@code --num-samples} says otherwise. */
  static final long DEFAULT_ROWS = 50_000;
  /** The worker counts of the grid. */
  static final List<Integer> WORKERS = List.of(1, 2);
  /** The ranks the shuffle quality is measured for unless {@code --world} says otherwise (rank 0 of them). */
  static final int DEFAULT_WORLD = 4;
  /** Epochs of each shuffle-quality run. */
  static final int QUALITY_EPOCHS = 3;

  private final Path dir;
  private final List<String> formats;
  private final long rows;
  private final int dim;
  private final long seed;
  private final int batch;
  private final int prefetch;
  private final int warmup;
  private final int epochs;
  private final Long memoryLimit;
  private final int world;

  BenchMatrix(Path dir, List<String> formats, long rows, int dim, long seed, int batch, int prefetch, int warmup,
      int epochs, Long memoryLimit, int world) {
    for (String f : formats) {
      if (!DEFAULT_FORMATS.contains(f)) {
        throw new IllegalArgumentException("--formats: the matrix runs " + String.join(", ", DEFAULT_FORMATS)
            + " but not '" + f + "'");
      }
    }
    if (formats.isEmpty()) {
      throw new IllegalArgumentException("--formats must name at least one format");
    }
    this.dir = dir;
    this.formats = List.copyOf(formats);
    this.rows = rows;
    this.dim = dim;
    this.seed = seed;
    this.batch = batch;
    this.prefetch = prefetch;
    this.warmup = warmup;
    this.epochs = epochs;
    this.memoryLimit = memoryLimit;
    OptionChecks.positive("--world", world);
    this.world = world;
  }

  /**
   * One cell of the grid.
   *
   * @param format the series: a format's name, or for HDF5 {@code hdf5} (contiguous) and
   *     {@code hdf5-deflate} (chunked, shuffle + deflate)
   * @param access how its files are read
   * @param fixedLength fixed- or variable-length records
   * @param shuffle a new order every epoch, or the stored order
   * @param workers gather or decode threads
   */
  record Cell(String format, Access access, boolean fixedLength, boolean shuffle, int workers) {
    /** The cell without its format: the chart's category. */
    String setup() {
      return (fixedLength ? "fixed" : "variable") + ", " + (shuffle ? "shuffled" : "sequential") + ", " + workers + "w, "
          + access.label;
    }

    /** The access pattern the recommendation is made for. */
    String pattern() {
      return (shuffle ? "shuffled" : "sequential") + " reads of " + (fixedLength ? "fixed" : "variable") + "-length records";
    }
  }

  /**
   * A measured cell.
   *
   * @param cell the cell
   * @param json the JSON object its {@code sluice bench --json} run printed
   * @param command the arguments of that run
   * @param quality how well its shuffle mixes, for a shuffled cell; null for a sequential one
   */
  record Measured(Cell cell, ObjectNode json, List<String> command, Quality quality) {
    double recordsPerSecond() {
      return json.get("recordsPerSecond").asDouble();
    }

    /** Whether the cell reads in the stored order or its shuffle mixes well. */
    boolean wellMixed() {
      return quality == null || quality.wellMixed();
    }
  }

  /**
   * How well {@code sluice read --shuffle} mixes one dataset: the {@code "quality"} object of a
   * {@code sluice read --quality --json} run of {@link #QUALITY_EPOCHS} epochs for rank 0 of the
   * matrix's world ({@link QualityReport#json}). It mixes well when the largest Jaccard similarity of
   * consecutive epochs is at most twice that of a fresh random part, and the largest |Spearman| is
   * at most 0.1 or, for small epochs, four standard deviations of a uniform shuffle's.
   *
   * @param format the format's name
   * @param fixedLength fixed- or variable-length records
   * @param json the report
   * @param command the arguments of the run
   */
  record Quality(String format, boolean fixedLength, ObjectNode json, List<String> command) {
    double maxJaccard() {
      return figure("maxJaccard");
    }

    double maxAbsSpearman() {
      return figure("maxAbsSpearman");
    }

    double randomJaccard() {
      return figure("randomJaccard");
    }

    /** Rows of the rank's first epoch. */
    long rowsPerEpoch() {
      JsonNode epochs = json.get("epochs");
      return epochs == null || epochs.isEmpty() ? 0 : epochs.get(0).get("rows").asLong();
    }

    boolean wellMixed() {
      double jaccard = maxJaccard();
      double rho = maxAbsSpearman();
      boolean fresh = Double.isNaN(jaccard) || jaccard <= 2 * randomJaccard() + 1e-9;
      boolean unordered = Double.isNaN(rho) || rho <= Math.max(0.1, 4 / Math.sqrt(Math.max(1, rowsPerEpoch() - 1)));
      return fresh && unordered;
    }

    /** A figure of the report, NaN when it is absent. */
    private double figure(String name) {
      JsonNode v = json.get(name);
      return v == null || v.isNull() ? Double.NaN : v.asDouble();
    }

    /** The report with what was measured: format, record kind, epochs, whether it mixes well, the command. */
    ObjectNode describe() {
      ObjectNode o = DatasetRun.object();
      o.put("format", format);
      o.put("fixedLength", fixedLength);
      o.put("rank", json.get("rank").asInt());
      o.put("world", json.get("world").asInt());
      o.put("epochs", json.get("epochs").size());
      o.set("maxJaccard", json.get("maxJaccard"));
      o.set("maxAbsSpearman", json.get("maxAbsSpearman"));
      o.set("randomJaccard", json.get("randomJaccard"));
      o.put("wellMixed", wellMixed());
      o.put("command", String.join(" ", command));
      return o;
    }
  }

  /** The grid in the order it runs: by format, then record kind, shuffle, workers and access. */
  List<Cell> cells() {
    List<Cell> cells = new ArrayList<>();
    for (String f : series()) {
      for (boolean fixed : new boolean[] {true, false}) {
        if (!fixed && !BenchData.holdsVariableLength(f)) {
          continue;
        }
        for (boolean shuffle : new boolean[] {false, true}) {
          for (int w : WORKERS) {
            for (Access a : BenchData.accessModes(BenchData.formatOf(f))) {
              cells.add(new Cell(f, a, fixed, shuffle, w));
            }
          }
        }
      }
    }
    return cells;
  }

  /**
   * Runs the grid; prints the table (or, with {@code json}, one JSON line) and draws {@code plot}
   * when given.
   *
   * @return the measured cells
   */
  List<Measured> run(PrintWriter out, Path plot, boolean json) {
    long started = System.nanoTime();
    if (!json && skipped() != null) {
      out.println("hdf5: skipped, " + skipped());
      out.flush();
    }
    List<Measured> measured = measure(json ? null : out);
    List<Recommendation> best = recommendations(measured);
    if (plot != null) {
      MatrixChart.write(MatrixChart.chart(measured, title()), plot);
    }
    if (json) {
      ObjectNode o = DatasetRun.object();
      o.put("rows", rows);
      o.put("dim", dim);
      o.put("epochs", epochs);
      ArrayNode cells = o.putArray("cells");
      measured.forEach(m -> cells.add(m.json()));
      ArrayNode quality = o.putArray("quality");
      measured.stream().map(Measured::quality).filter(q -> q != null).distinct().forEach(q -> quality.add(q.describe()));
      ArrayNode na = o.putArray("notApplicable");
      for (String[] n : notApplicable()) {
        ObjectNode e = na.addObject();
        e.put("format", n[0]);
        e.put("access", n[1]);
        e.put("reason", n[2]);
      }
      if (skipped() != null) {
        o.put("skipped", skipped());
      }
      ArrayNode fastest = o.putArray("fastest");
      for (Recommendation b : best) {
        ObjectNode n = fastest.addObject();
        n.put("pattern", b.pattern());
        n.put("format", b.best().cell().format());
        n.put("access", b.best().cell().access().label);
        n.put("workers", b.best().cell().workers());
        n.put("recordsPerSecond", DatasetRun.decimal(b.best().recordsPerSecond()));
        n.put("command", String.join(" ", b.best().command()));
        Quality q = b.best().quality();
        if (q != null) {
          n.set("maxJaccard", q.json().get("maxJaccard"));
          n.set("maxAbsSpearman", q.json().get("maxAbsSpearman"));
          n.put("wellMixed", q.wellMixed());
        }
        if (b.bestMixed().isPresent()) {
          Measured m = b.bestMixed().get();
          ObjectNode mixed = n.putObject("fastestWellMixed");
          mixed.put("format", m.cell().format());
          mixed.put("access", m.cell().access().label);
          mixed.put("workers", m.cell().workers());
          mixed.put("recordsPerSecond", DatasetRun.decimal(m.recordsPerSecond()));
          mixed.put("command", String.join(" ", m.command()));
        }
      }
      out.println(DatasetRun.line(o));
    } else {
      for (Recommendation b : best) {
        out.println(b.line());
      }
      out.printf(Locale.ROOT, "%d cells in %.1f s%s%n", measured.size(), (System.nanoTime() - started) / 1e9,
          plot == null ? "" : "; chart: " + plot);
    }
    out.flush();
    return measured;
  }

  /**
   * Generates the datasets that are missing and measures every cell; prints what it generates
   * and the table row by row to {@code table} unless it is null. Each cell is a {@code sluice bench
   * --json} run in a JVM of its own (this JVM's {@code java}, flags and class path), so it starts
   * from the same state as the single run a user would make of it, whatever ran before.
   */
  List<Measured> measure(PrintWriter table) {
    Map<String, Path> data = new LinkedHashMap<>();
    for (String f : series()) {
      for (boolean fixed : new boolean[] {true, false}) {
        if (fixed || BenchData.holdsVariableLength(f)) {
          data.put(key(f, fixed), prepare(f, fixed, table));
        }
      }
    }
    Map<String, Quality> quality = new LinkedHashMap<>();
    for (Map.Entry<String, Path> d : data.entrySet()) {
      String format = d.getKey().substring(0, d.getKey().lastIndexOf('-')); // the series
      boolean fixed = d.getKey().endsWith("-fixed");
      List<String> command = qualityCommand(format, d.getValue());
      ObjectNode report = (ObjectNode) SingleRun.json(command).get("quality");
      quality.put(d.getKey(), new Quality(format, fixed, report, command));
    }
    String rowFormat = "%-12s %-6s %-8s %-10s %7s %13s %13s %13s %9s %11s %8s %8s%n";
    if (table != null) {
      table.printf(Locale.ROOT, rowFormat, "format", "access", "records", "order", "workers", "records/s", "min", "max",
          "MB/s", "CPU s/Mrec", "jaccard", "|rho|");
      table.flush();
    }
    List<Measured> measured = new ArrayList<>();
    for (Cell c : cells()) {
      String key = key(c.format(), c.fixedLength());
      List<String> command = command(c, data.get(key));
      Quality q = c.shuffle() ? quality.get(key) : null;
      Measured m = new Measured(c, SingleRun.json(command), command, q);
      measured.add(m);
      if (table != null) {
        ObjectNode r = m.json();
        table.printf(Locale.ROOT, rowFormat, c.format(), c.access().label, c.fixedLength() ? "fixed" : "variable",
            c.shuffle() ? "shuffled" : "sequential", c.workers(), rate(r.get("recordsPerSecond").asDouble()),
            rate(r.get("recordsPerSecondMin").asDouble()), rate(r.get("recordsPerSecondMax").asDouble()),
            String.format(Locale.ROOT, "%.1f", r.get("bytesPerSecond").asDouble() / 1e6),
            String.format(Locale.ROOT, "%.3f", r.get("cpuSecondsPerMillionRecords").asDouble()),
            q == null ? "-" : figure(q.maxJaccard()), q == null ? "-" : figure(q.maxAbsSpearman()));
        table.flush();
      }
    }
    if (table != null) {
      for (String[] na : notApplicable()) {
        table.printf(Locale.ROOT, "%-12s %-6s %-8s n/a: %s%n", na[0], na[1], "fixed", na[2]);
      }
      table.flush();
    }
    return measured;
  }

  /**
   * The series run: {@link #formats} with {@code hdf5} as its two variants, contiguous
   * ({@code hdf5}) and chunked ({@code hdf5-deflate}); without HDF5 when {@code /usr/bin/python3}
   * with h5py, which writes its files, is missing.
   */
  List<String> series() {
    List<String> out = new ArrayList<>();
    for (String f : formats) {
      if (f.equals(BenchData.HDF5)) {
        if (h5py()) {
          out.add(BenchData.HDF5);
          out.add(BenchData.HDF5_DEFLATE);
        }
      } else {
        out.add(f);
      }
    }
    return out;
  }

  private Boolean h5py; // whether h5py writes the HDF5 series' files; null until asked

  private boolean h5py() {
    if (h5py == null) {
      h5py = BenchData.h5pyMissing() == null;
    }
    return h5py;
  }

  /**
   * Why the HDF5 series are skipped ({@code /usr/bin/python3} with h5py is missing), or null when
   * they run or were not asked for.
   */
  String skipped() {
    return formats.contains(BenchData.HDF5) && !h5py() ? BenchData.h5pyMissing() : null;
  }

  /** The access modes the matrix has no cell for, each as {series, access, reason}. */
  List<String[]> notApplicable() {
    List<String[]> out = new ArrayList<>();
    for (String f : series()) {
      String format = BenchData.formatOf(f);
      if (!format.equals(f) || format.equals(BenchData.HDF5)) {
        for (Access a : Access.values()) {
          if (!BenchData.accessModes(format).contains(a)) {
            out.add(new String[] {f, a.label, format + " offers no " + a.label + " mode: "
                + (f.equals(BenchData.HDF5) ? "contiguous data is always read through a memory mapping"
                    : "chunks are fetched through jhdf's mappings of the file and decoded")});
          }
        }
      }
    }
    return out;
  }

  /**
   * The arguments of the {@code sluice read --quality} run that measures how {@code --shuffle}
   * mixes {@code data}: {@link #QUALITY_EPOCHS} epochs of rank 0 of the matrix's world, batched as
   * the cells are.
   */
  List<String> qualityCommand(String format, Path data) {
    List<String> args = new ArrayList<>(List.of("read", data.toString(), "--format", BenchData.formatOf(format),
        "--shuffle", "--seed",
        Long.toString(seed), "--epochs", Integer.toString(QUALITY_EPOCHS), "--rank", "0", "--world",
        Integer.toString(world), "--batch", Integer.toString(batch), "--prefetch", Integer.toString(prefetch)));
    if (memoryLimit != null) {
      args.addAll(List.of("--memory-limit", Long.toString(memoryLimit)));
    }
    args.addAll(List.of("--quality", "--json"));
    return args;
  }

  private static String figure(double value) {
    return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.3f", value);
  }

  /** The arguments of the single {@code sluice bench} run that measures cell {@code c} over {@code data}. */
  List<String> command(Cell c, Path data) {
    String format = BenchData.formatOf(c.format());
    List<String> args = new ArrayList<>(List.of("bench", data.toString(), "--format", format));
    if (BenchData.accessModes(format).size() > 1) {
      args.addAll(List.of("--io", c.access().label));
    }
    if (c.shuffle()) {
      args.add("--shuffle");
    }
    args.addAll(List.of("--num-workers", Integer.toString(c.workers()), "--batch", Integer.toString(batch),
        "--prefetch", Integer.toString(prefetch), "--warmup", Integer.toString(warmup), "--epochs",
        Integer.toString(epochs), "--seed", Long.toString(seed)));
    if (memoryLimit != null) {
      args.addAll(List.of("--memory-limit", Long.toString(memoryLimit)));
    }
    args.add("--json");
    return args;
  }

  /** The chart's title. */
  String title() {
    return String.format(Locale.ROOT, "sluice bench --matrix: %d records, batch %d, median of %d epochs", rows, batch,
        epochs);
  }

  private static String rate(double recordsPerSecond) {
    return String.format(Locale.ROOT, "%.0f", recordsPerSecond);
  }

  private static String key(String format, boolean fixed) {
    return format + "-" + (fixed ? "fixed" : "variable");
  }

  /**
   * The dataset of one format and record kind: generated under {@code dir} when absent, reused
   * when a previous run left it there with the same number of records.
   */
  private Path prepare(String series, boolean fixed, PrintWriter progress) {
    Path d = dir.resolve(key(series, fixed));
    String format = BenchData.formatOf(series);
    DatasetFormat f = Formats.named(format);
    Path target = !format.equals(series) || format.equals(BenchData.HDF5) ? d.resolve(BenchData.HDF5_FILE)
        : f.writesOneFile() ? d.resolve("part-0." + format) : d;
    if (Files.exists(d) && !OutputPaths.isEmptyDirectory(d)) {
      long found = rowsOf(format, target);
      if (found != rows) {
        throw new IllegalArgumentException(d + " holds " + found + " records from an earlier run but --num-samples is "
            + rows + "; remove it or choose another directory");
      }
      return target;
    }
    long t0 = System.nanoTime();
    Path written = format.equals(BenchData.HDF5)
        ? BenchData.generateHdf5(d, series.equals(BenchData.HDF5_DEFLATE), rows, dim, seed)
        : BenchData.generate(d, format, rows, dim, fixed, seed);
    if (progress != null) {
      progress.printf(Locale.ROOT, "generated %s in %.2f s%n", written, (System.nanoTime() - t0) / 1e9);
      progress.flush();
    }
    return written;
  }

  private static long rowsOf(String format, Path target) {
    Dataset<Example> d = Formats.named(format).open(target);
    try {
      return DatasetRun.knownRows(d);
    } finally {
      DatasetRun.close(d);
    }
  }

  /**
   * The fastest cell of one access pattern, the fastest cell of another format there and, when the
   * fastest cell's shuffle mixes poorly, the fastest cell whose shuffle mixes well.
   *
   * @param pattern the access pattern ("shuffled reads of fixed-length records")
   * @param best its fastest cell
   * @param next the fastest cell of another format, if any
   * @param bestMixed the fastest well-mixed cell when {@code best} is not well mixed, if any
   */
  record Recommendation(String pattern, Measured best, Optional<Measured> next, Optional<Measured> bestMixed) {
    String line() {
      Cell c = best.cell();
      String s = String.format(Locale.ROOT, "fastest for %s: %s (%s, %d worker%s), %.0f records/s", pattern,
          c.format(), c.access().label, c.workers(), c.workers() == 1 ? "" : "s", best.recordsPerSecond());
      if (next.isPresent()) {
        Measured n = next.get();
        s += String.format(Locale.ROOT, ", %.2fx the next format, %s (%.0f records/s)",
            best.recordsPerSecond() / Math.max(1e-9, n.recordsPerSecond()), n.cell().format(), n.recordsPerSecond());
      }
      Quality q = best.quality();
      if (q != null) {
        s += String.format(Locale.ROOT, "; %s: max jaccard %s (random %s), max |rho| %s",
            q.wellMixed() ? "well mixed" : "POORLY MIXED", figure(q.maxJaccard()), figure(q.randomJaccard()),
            figure(q.maxAbsSpearman()));
      }
      if (bestMixed.isPresent()) {
        Measured m = bestMixed.get();
        s += String.format(Locale.ROOT, "; fastest well mixed: %s (%s, %d worker%s), %.0f records/s", m.cell().format(),
            m.cell().access().label, m.cell().workers(), m.cell().workers() == 1 ? "" : "s", m.recordsPerSecond());
      }
      return s;
    }
  }

  /**
   * Per access pattern measured (record kind &times; order), its fastest format, and for a shuffled
   * pattern whose fastest cell mixes poorly, the fastest cell that mixes well.
   */
  static List<Recommendation> recommendations(List<Measured> measured) {
    Map<String, List<Measured>> byPattern = new LinkedHashMap<>();
    for (Measured m : measured) {
      byPattern.computeIfAbsent(m.cell().pattern(), k -> new ArrayList<>()).add(m);
    }
    List<Recommendation> out = new ArrayList<>();
    Comparator<Measured> faster = Comparator.comparingDouble(Measured::recordsPerSecond).reversed();
    for (Map.Entry<String, List<Measured>> e : byPattern.entrySet()) {
      List<Measured> sorted = e.getValue().stream().sorted(faster).toList();
      Measured best = sorted.get(0);
      Optional<Measured> next = sorted.stream().filter(m -> !m.cell().format().equals(best.cell().format())).findFirst();
      Optional<Measured> mixed = best.wellMixed() ? Optional.empty()
          : sorted.stream().filter(Measured::wellMixed).findFirst();
      out.add(new Recommendation(e.getKey(), best, next, mixed));
    }
    return out;
  }
}
