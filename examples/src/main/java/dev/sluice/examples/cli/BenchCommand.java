package dev.sluice.examples.cli;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.examples.cli.BenchData.Access;
import dev.sluice.io.DatasetFormat;
import dev.sluice.io.Formats;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * {@code sluice bench}: records/s of {@code [take N ->] [shuffle ->] shard(1 of 1) -> batch B ->
 * prefetch P} over PATH: {@code --warmup} warm-up epochs (one by default), then {@code --epochs}
 * measured epochs, reporting the
 * median, minimum and maximum rate and the process's CPU time per record. When PATH is an empty
 * directory it first generates a dataset there in {@code --format}. {@code --matrix} runs the grid
 * of formats, access modes, record kinds, shuffle and workers ({@link BenchMatrix}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = {
      "Measure records/s and bytes/s of a batched pipeline over PATH (warm-up epochs, then E measured).",
      "When PATH is an empty directory, first generate a dataset there in --format (x float32, label int64).",
      "--matrix runs every format x access (mmap/read) x fixed/variable-length x shuffle x 1/2 workers on data it "
          + "generates under PATH, prints one table with the shuffle quality of each shuffled cell and the fastest "
          + "format per access pattern, and --plot draws it."})
final class BenchCommand implements Callable<Integer> {
  static final long DEFAULT_GENERATED_ROWS = 100_000;

  @Parameters(index = "0", paramLabel = "PATH",
      description = "A dataset file or directory, or a Hadoop FileSystem URI (hdfs://…, s3a://…) read with positioned "
          + "reads; an empty local directory: generate one there (with --matrix: where the grid's datasets are "
          + "generated and kept for later runs).")
  String pathArg;

  @Mixin
  HadoopConfOptions hadoop = new HadoopConfOptions();

  @Mixin
  RemoteCacheOptions remoteCache = new RemoteCacheOptions();

  private Path path;
  private URI remote;

  @Option(names = "--format", paramLabel = "F", completionCandidates = DatasetRun.FormatNames.class,
      description = "Format (${COMPLETION-CANDIDATES}); default: recognized from the contents. Required when "
          + "PATH is an empty directory (generated: npy, shards, parquet, arrow or directory).")
  String format;

  @Option(names = "--num-samples", paramLabel = "N", description = "Use only the first N samples (default: all); "
      + "when generating, the records to write (default: " + DEFAULT_GENERATED_ROWS + "; with --matrix "
      + BenchMatrix.DEFAULT_ROWS + ").")
  Long numSamples;

  @Option(names = "--io", paramLabel = "mmap|read", description = "How the files are read: mmap (a memory mapping; "
      + "the default for npy, shards and arrow) or read (positioned reads into batch memory, nothing mapped; for "
      + "parquet each column chunk copied out with a read: its default). A directory is always read, hdf5 always "
      + "mapped.")
  String io;

  @Option(names = "--use-mmap", description = "The same as --io mmap.")
  boolean useMmap;

  @Option(names = "--fixed-length", description = "Generate fixed-length records (x float32[D]) instead of "
      + "variable-length ones (x float32[-1], D values on average; not npy). On an existing dataset: check that its "
      + "records are fixed-length.")
  boolean fixedLength;

  @Option(names = "--dim", paramLabel = "D", defaultValue = "64", description = "When generating: floats per "
      + "record of x, the mean for variable-length records (default: ${DEFAULT-VALUE}).")
  int dim;

  @Option(names = "--shuffle", description = "Shuffle as sluice read --shuffle does: a new order every epoch.")
  boolean shuffle;

  @Option(names = "--shuffle-mode", paramLabel = "auto|global|blocks", defaultValue = "auto",
      description = "With --shuffle on a random-access source: as sluice read --shuffle-mode (default: ${DEFAULT-VALUE}).")
  String shuffleMode;

  @Option(names = "--seed", paramLabel = "S", defaultValue = "0", description = "Seed (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--num-workers", paramLabel = "W", defaultValue = "1", description = "Gather (index path) or decode "
      + "(columnar path) threads (default: ${DEFAULT-VALUE}).")
  int numWorkers;

  @Option(names = "--batch", paramLabel = "B", defaultValue = "256", description = "Batch size (default: ${DEFAULT-VALUE}).")
  int batch;

  @Option(names = "--prefetch", paramLabel = "P", defaultValue = "4", description = "Batches produced ahead, 0 for none (default: ${DEFAULT-VALUE}).")
  int prefetch;

  @Option(names = "--epochs", paramLabel = "E", defaultValue = "5",
      description = "Measured epochs after the warm-up (default: ${DEFAULT-VALUE}).")
  int epochs;

  @Option(names = "--warmup", paramLabel = "W", defaultValue = "1", description = "Warm-up epochs before the "
      + "measured ones, not counted; more for the rate after the JIT has compiled the pipeline's loops (a few "
      + "seconds on one core) (default: ${DEFAULT-VALUE}).")
  int warmup;

  @Mixin
  ReadCacheOptions caches = new ReadCacheOptions();

  @Option(names = "--memory-limit", paramLabel = "BYTES", converter = ByteSize.class,
      description = "Limit the pooled off-heap memory (batches, decode buffers) to BYTES, e.g. 64m or 1g: the "
          + "pipeline then waits for memory to come back instead of growing past it. Default: no limit.")
  Long memoryLimit;

  @Option(names = "--columns", split = ",", paramLabel = "a,b",
      description = "Read only these fields (default: all); the others are not read.")
  List<String> columns = List.of();

  @Option(names = "--matrix", description = "Run the format grid on data generated under PATH (see above).")
  boolean matrix;

  @Option(names = "--formats", split = ",", paramLabel = "F,G", description = "With --matrix: the formats to "
      + "run (default: npy,shards,parquet,arrow,directory,hdf5; hdf5 runs contiguous and chunked (deflate) files, "
      + "written by /usr/bin/python3 with h5py, and is skipped with one line when h5py is missing).")
  List<String> formats = BenchMatrix.DEFAULT_FORMATS;

  @Option(names = "--world", paramLabel = "W", description = "With --matrix: measure each format's shuffle quality "
      + "(sluice read --quality over " + BenchMatrix.QUALITY_EPOCHS + " epochs) for rank 0 of W ranks (default: "
      + BenchMatrix.DEFAULT_WORLD + ").")
  Integer world;

  @Option(names = "--plot", paramLabel = "FILE.png", description = "With --matrix: draw records/s as a bar chart, "
      + "one series per format, into FILE.png.")
  Path plot;

  @Option(names = "--json", description = "Print a JSON summary as the last line.")
  boolean json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    OptionChecks.positive("--epochs", epochs);
    OptionChecks.nonNegative("--warmup", warmup);
    if (numSamples != null) {
      OptionChecks.nonNegative("--num-samples", numSamples);
    }
    OptionChecks.positive("--batch", batch);
    OptionChecks.positive("--num-workers", numWorkers);
    OptionChecks.nonNegative("--prefetch", prefetch);
    OptionChecks.positive("--dim", dim);
    ReadCommand.shuffleMode(shuffleMode);
    if (given("--shuffle-mode") && !shuffle && !matrix) {
      throw new IllegalArgumentException("--shuffle-mode " + shuffleMode + " needs --shuffle");
    }
    if (given("--shuffle-block") && !shuffle && !matrix) {
      throw new IllegalArgumentException("--shuffle-block needs --shuffle");
    }
    PrintWriter out = spec.commandLine().getOut();
    remote = DatasetRun.remote(pathArg);
    path = remote == null ? DatasetRun.localPath(pathArg) : null;
    hadoop.apply();
    if (matrix && remote != null) {
      throw new IllegalArgumentException("--matrix generates and keeps its datasets in a local directory, but "
          + remote + " is remote");
    }
    if (matrix) {
      refuseWithMatrix("--format", "--io", "--use-mmap", "--fixed-length", "--shuffle", "--shuffle-mode",
          "--shuffle-block", "--num-workers", "--columns");
      BenchMatrix m = new BenchMatrix(path, formats, numSamples == null ? BenchMatrix.DEFAULT_ROWS : numSamples, dim,
          seed, batch, prefetch, warmup, epochs, memoryLimit, world == null ? BenchMatrix.DEFAULT_WORLD : world);
      m.run(out, plot, json);
      return 0;
    }
    for (String matrixOnly : List.of("--formats", "--plot", "--world")) {
      if (given(matrixOnly)) {
        throw new IllegalArgumentException(matrixOnly + " applies to --matrix runs only");
      }
    }
    return DatasetRun.withMemoryLimit(memoryLimit, () -> bench(out));
  }

  private int bench(PrintWriter out) {
    if (remote != null) {
      return benchRemote(out);
    }
    Path data = path;
    DatasetFormat f;
    Long take = numSamples;
    if (!DatasetRun.isStdin(path) && OutputPaths.isEmptyDirectory(path)) {
      if (format == null) {
        throw new IllegalArgumentException(path + " is an empty directory: give --format to generate a dataset there ("
            + String.join(", ", BenchData.FORMATS) + ")");
      }
      long rows = numSamples != null ? numSamples : DEFAULT_GENERATED_ROWS;
      access(format);
      long t0 = System.nanoTime();
      data = BenchData.generate(path, format, rows, dim, fixedLength, seed);
      out.printf(Locale.ROOT, "generated %d %s records (x float32[%s], label int64) as %s in %s in %.2f s%n", rows,
          fixedLength ? "fixed-length" : "variable-length", fixedLength ? Integer.toString(dim) : "~" + dim,
          format, data, (System.nanoTime() - t0) / 1e9);
      f = Formats.named(format);
      take = null;
    } else {
      if (given("--dim")) {
        throw new IllegalArgumentException("--dim applies when bench generates a dataset (PATH an empty directory), "
            + "but " + path + " holds one");
      }
      f = DatasetRun.formatOf(path, format);
    }
    Access access = access(f.name());
    BenchRun run = new BenchRun(data, f, access, take, shuffle, ReadCommand.shuffleMode(shuffleMode), seed,
        numWorkers, batch, prefetch,
        warmup, epochs, columns, null, null, caches);
    if (fixedLength && !DatasetRun.isStdin(path)) {
      checkFixedLength(run);
    }
    return report(out, run, f);
  }

  /** A remote dataset: read with positioned reads ({@code --io read}), never generated. */
  private int benchRemote(PrintWriter out) {
    if (given("--dim")) {
      throw new IllegalArgumentException("--dim applies when bench generates a dataset in an empty local directory, "
          + "but " + remote + " is remote");
    }
    if (useMmap || io != null && !"read".equals(io)) {
      throw new IllegalArgumentException((useMmap ? "--use-mmap" : "--io " + io) + ": " + remote + " is remote and "
          + "cannot be memory-mapped; remote URIs are read with positioned reads (--io read)");
    }
    DatasetFormat f = Formats.named(DatasetRun.formatName(pathArg, format));
    BenchRun run = new BenchRun(Path.of(remote.getPath()), f, Access.READ, numSamples, shuffle,
        ReadCommand.shuffleMode(shuffleMode), seed, numWorkers,
        batch, prefetch, warmup, epochs, columns, remote, remoteCache.cache(), caches);
    if (fixedLength) {
      checkFixedLength(run);
    }
    return report(out, run, f);
  }

  private int report(PrintWriter out, BenchRun run, DatasetFormat f) {
    Access access = run.access();
    BenchRun.Result r = run.measure(json ? null : out, true);
    if (json) {
      out.println(DatasetRun.line(r.json()));
    } else {
      out.printf(Locale.ROOT, "median %.0f records/s (min %.0f, max %.0f), %.1f MB/s over %d epochs; "
          + "process CPU %.3f s per million records (%s, %s)%n", r.recordsPerSecond(), r.min(), r.max(), r.bytesPerSecond() / 1e6,
          r.run().epochs(), r.cpuNanosPerRecord() / 1e3, f.name(), access.label);
    }
    out.flush();
    return 0;
  }

  /**
   * The access {@code --io} or {@code --use-mmap} asks for, else the format's default.
   *
   * @throws IllegalArgumentException when the format does not offer it, or the two options disagree
   */
  private Access access(String formatName) {
    Access a;
    String option;
    if (io != null) {
      a = Access.of("--io", io);
      option = "--io " + io;
      if (useMmap && a != Access.MMAP) {
        throw new IllegalArgumentException("--use-mmap is --io mmap: it cannot be combined with --io " + io);
      }
    } else if (useMmap) {
      a = Access.MMAP;
      option = "--use-mmap";
    } else {
      return BenchData.defaultAccess(formatName);
    }
    if (!BenchData.accessModes(formatName).contains(a)) {
      throw BenchData.accessNotAChoice(option, formatName);
    }
    return a;
  }

  private static void checkFixedLength(BenchRun run) {
    Dataset<Example> d = run.open();
    try {
      if (Boolean.FALSE.equals(BenchData.fixedLength(d))) {
        throw new IllegalArgumentException("--fixed-length: " + (run.remote() != null ? run.remote() : run.path())
            + " holds variable-length records; "
            + "to measure fixed-length ones, run bench on an empty directory with --fixed-length to generate them");
      }
    } finally {
      DatasetRun.close(d);
    }
  }

  private void refuseWithMatrix(String... options) {
    for (String o : options) {
      if (given(o)) {
        throw new IllegalArgumentException(o + " cannot be combined with --matrix, which "
            + (o.equals("--columns") ? "reads every field" : o.equals("--shuffle-block") ? "shuffles with the default "
            + "blocks" : "varies it itself") + " (--formats picks the formats)");
      }
    }
  }

  private boolean given(String option) {
    ParseResult parsed = spec.commandLine().getParseResult();
    return parsed != null && parsed.hasMatchedOption(option);
  }
}
