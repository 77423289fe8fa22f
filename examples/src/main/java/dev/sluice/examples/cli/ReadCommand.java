package dev.sluice.examples.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.SplitDataset;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.CacheStats;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Pipeline;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice read}: one or more epochs of {@code [cache ->] shuffle -> shard -> batch -> prefetch} over PATH,
 * printing a summary line, a JSON summary ({@code --json}) or the source indices in delivery order
 * ({@code --print-indices}).
 */
@Command(name = "read", mixinStandardHelpOptions = true,
    description = "Read PATH through shuffle -> shard -> batch -> prefetch and report what was read.")
final class ReadCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "PATH", description = "A dataset file or directory; - reads an Arrow IPC stream from standard input.")
  Path path;

  @Option(names = "--format", paramLabel = "F", completionCandidates = DatasetRun.FormatNames.class,
      description = "Format (${COMPLETION-CANDIDATES}); default: recognized from the contents.")
  String format;

  @Option(names = "--shuffle", description = "Shuffle: the global permutation on a random-access source; split-order "
      + "shuffle plus a 10,000-row window (with --batch) or buffer on a split source; a 10,000-element buffer on a "
      + "streaming source.")
  boolean shuffle;

  @Option(names = "--buffer", paramLabel = "N", description = "With --shuffle: tf.data's buffer shuffle of N elements "
      + "(after the shard; on a split source after the split-order shuffle, and a window of N rows with --batch).")
  Integer buffer;

  @Option(names = "--seed", paramLabel = "S", defaultValue = "0", description = "Seed, shared by every rank (default: ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--epochs", paramLabel = "E", defaultValue = "1", description = "Epochs, numbered from 0 (default: ${DEFAULT-VALUE}).")
  long epochs;

  @Option(names = "--rank", paramLabel = "R", description = "This rank; default: RANK / SLURM_PROCID or 0.")
  Integer rank;

  @Option(names = "--world", paramLabel = "W", description = "Number of ranks; default: WORLD_SIZE / SLURM_NTASKS or 1.")
  Integer world;

  @Option(names = "--equal", paramLabel = "pad|drop|uneven", defaultValue = "pad",
      description = "Equal-length policy of the shard (default: ${DEFAULT-VALUE}).")
  String equal;

  @Option(names = "--batch", paramLabel = "B", description = "Batch size; default: no batching.")
  Integer batch;

  @Option(names = "--drop-remainder", description = "Drop a last batch smaller than B.")
  boolean dropRemainder;

  @Option(names = "--parallelism", paramLabel = "P", defaultValue = "1", description = "Batches gathered (index path), "
      + "row ranges decoded (columnar path) or batches collated (element path) in parallel, in order (default: ${DEFAULT-VALUE}).")
  int parallelism;

  @Option(names = "--prefetch", paramLabel = "P", defaultValue = "4", description = "Elements produced ahead on another thread, 0 for none (default: ${DEFAULT-VALUE}).")
  int prefetch;

  @Option(names = "--memory-limit", paramLabel = "BYTES", converter = ByteSize.class,
      description = "Limit the pooled off-heap memory (batches, decode buffers) to BYTES, e.g. 64m or 1g: the "
          + "pipeline then waits for memory to come back instead of growing past it. Default: no limit.")
  Long memoryLimit;

  @Option(names = "--cache", arity = "0..1", paramLabel = "DIR", fallbackValue = "",
      description = "Cache the decoded rows where every process of the node can read them: the first pass fills the "
          + "cache, later passes (epochs, ranks, runs) read it. DIR holds the caches (default: /dev/shm/sluice-<user>).")
  String cache;

  @Option(names = "--cache-max-bytes", paramLabel = "BYTES", converter = ByteSize.class,
      description = "With --cache: the cache's budget, e.g. 2g; rows beyond it are read uncached. Default: none.")
  Long cacheMaxBytes;

  @Option(names = "--print-indices", description = "Print '<epoch> <index> ...' per batch (per element without --batch), nothing else.")
  boolean printIndices;

  @Option(names = "--json", description = "Print a JSON summary as the last line.")
  boolean json;

  @Option(names = "--columns", split = ",", paramLabel = "a,b",
      description = "Read only these fields (default: all); the others are not read.")
  List<String> columns = List.of();

  @Option(names = "--metrics", description = "Measure every stage and end with a table of the stages (elements, bytes, "
      + "time busy and waiting for upstream and for downstream, buffers, workers, decodes) and one line naming the "
      + "bottleneck: input-bound at a stage, or consumer-bound.")
  boolean metrics;

  @Option(names = "--step-ms", paramLabel = "N", description = "With --metrics: a simulated consumer that works N ms "
      + "(busy, not sleeping) on every batch (every element without --batch), to see a consumer-bound pass.")
  Double stepMs;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    if (printIndices && json) {
      throw new IllegalArgumentException("--print-indices and --json cannot be combined: --print-indices leaves only index lines on stdout");
    }
    if (printIndices && metrics) {
      throw new IllegalArgumentException("--print-indices and --metrics cannot be combined: --print-indices leaves only index lines on stdout");
    }
    if (stepMs != null && !metrics) {
      throw new IllegalArgumentException("--step-ms " + stepMs + " needs --metrics");
    }
    if (stepMs != null && !(stepMs >= 0 && stepMs <= 60_000)) {
      throw new IllegalArgumentException("--step-ms must be in [0, 60000] ms but was " + stepMs);
    }
    OptionChecks.nonNegative("--epochs", epochs);
    if (batch != null) {
      OptionChecks.positive("--batch", batch);
    }
    OptionChecks.positive("--parallelism", parallelism);
    OptionChecks.nonNegative("--prefetch", prefetch);
    if (buffer != null && !shuffle) {
      throw new IllegalArgumentException("--buffer " + buffer + " needs --shuffle");
    }
    if (buffer != null) {
      OptionChecks.positive("--buffer", buffer);
    }
    if (cacheMaxBytes != null && cache == null) {
      throw new IllegalArgumentException("--cache-max-bytes needs --cache");
    }
    PipelineContext ctx = context(rank, world).withSeed(seed);
    EqualLength policy = policy(equal);
    PrintWriter out = spec.commandLine().getOut();

    return DatasetRun.withMemoryLimit(memoryLimit, () -> read(ctx, policy, out));
  }

  private int read(PipelineContext ctx, EqualLength policy, PrintWriter out) {
    Dataset<Example> data = DatasetRun.open(path, format, columns);
    try {
      Pipeline<Example> p = Pipeline.from(data);
      CacheMonitor monitor = new CacheMonitor();
      if (cache != null) {
        CacheSpec spec = CacheSpec.defaults().monitor(monitor);
        spec = cache.isEmpty() ? spec : spec.directory(Path.of(cache));
        p = p.cache(cacheMaxBytes == null ? spec : spec.maxBytes(cacheMaxBytes));
      }
      if (shuffle && data instanceof RandomAccessDataset) {
        // Global permutation, or a buffer shuffle of the rank's stride with --buffer.
        p = buffer == null ? p.shuffle() : p;
      } else if (shuffle && data instanceof SplitDataset) {
        // Split-order shuffle plus a buffer (10,000 elements, or --buffer N), after the shard.
        p = p.shuffle();
      }
      p = p.shard(ctx.worldSize(), ctx.rank(), policy);
      if (shuffle && buffer != null) {
        p = p.shuffle(buffer);
      } else if (shuffle && !(data instanceof RandomAccessDataset) && !(data instanceof SplitDataset)) {
        p = p.shuffle(STREAMING_SHUFFLE_BUFFER);
      }
      long[] totals = new long[3]; // examples, batches, bytes
      PipelineMetrics measured = metrics ? new PipelineMetrics("read") : null;
      double step = stepMs == null ? 0 : stepMs;
      long rows = DatasetRun.knownRows(data);
      long perRank = rows < 0 ? -1 : (rows + ctx.worldSize() - 1) / ctx.worldSize();
      long started = System.nanoTime();
      try (Progress progress = Progress.start("read", perRank < 0 ? -1 : perRank * epochs, "ex", System.err)) {
        for (long e = 0; e < epochs; e++) {
          PipelineContext epoch = ctx.withEpoch(ctx.epoch() + e);
          if (batch != null) {
            Pipeline<Batch> b = p.batch(batch, dropRemainder, parallelism);
            b = prefetch > 0 ? b.prefetch(prefetch) : b;
            b = measured != null ? measured.measure(b) : b;
            b.flux(epoch).doOnNext(x -> {
              try (x) {
                totals[0] += x.size();
                totals[1]++;
                totals[2] += DatasetRun.bytes(x);
                if (printIndices) {
                  StringBuilder line = new StringBuilder().append(epoch.epoch());
                  for (int i = 0; i < x.size(); i++) {
                    line.append(' ').append(x.index(i));
                  }
                  out.println(line);
                }
                if (step > 0) {
                  PipelineMetrics.busyStep(step);
                }
                progress.step(x.size());
              }
            }).blockLast();
          } else {
            Pipeline<Example> el = prefetch > 0 ? p.prefetch(prefetch) : p;
            el = measured != null ? measured.measure(el) : el;
            el.flux(epoch).doOnNext(x -> {
              totals[0]++;
              totals[2] += DatasetRun.bytes(x);
              if (printIndices) {
                out.println(epoch.epoch() + " " + x.index());
              }
              if (step > 0) {
                PipelineMetrics.busyStep(step);
              }
              progress.step(1);
            }).blockLast();
          }
        }
      }
      long examples = totals[0];
      long batches = totals[1];
      long bytes = totals[2];
      double seconds = (System.nanoTime() - started) / 1e9;
      if (json) {
        if (measured != null) {
          measured.print(out);
        }
        ObjectNode o = DatasetRun.object();
        o.put("examples", examples);
        o.put("batches", batches);
        o.put("epochs", epochs);
        o.put("seconds", DatasetRun.decimal(seconds));
        o.put("bytes", bytes);
        if (cache != null) {
          CacheStats c = monitor.total();
          o.put("cacheHits", c.hits());
          o.put("cacheMisses", c.misses());
          o.put("cacheUncached", c.uncached());
          o.put("cacheFallbacks", c.fallbacks());
          o.put("cacheBlocksWritten", c.blocksWritten());
          o.put("cacheBytesWritten", c.bytesWritten());
        }
        if (measured != null) {
          o.put("bottleneck", measured.report().bottleneck());
        }
        out.println(DatasetRun.line(o));
      } else if (!printIndices) {
        out.printf(Locale.ROOT, "read %d examples in %d batches over %d epochs (rank %d of %d): %d bytes in %.3f s%n",
            examples, batches, epochs, ctx.rank(), ctx.worldSize(), bytes, seconds);
        if (cache != null) {
          CacheStats c = monitor.total();
          out.printf(Locale.ROOT, "cache: %d hits, %d misses (%d uncached), %d fallbacks, %d blocks written (%d bytes)%n",
              c.hits(), c.misses(), c.uncached(), c.fallbacks(), c.blocksWritten(), c.bytesWritten());
        }
        if (measured != null) {
          measured.print(out);
        }
      }
      out.flush();
      return 0;
    } finally {
      DatasetRun.close(data);
    }
  }

  /** The buffer of {@code --shuffle} on a streaming source without {@code --buffer}. */
  static final int STREAMING_SHUFFLE_BUFFER = 10_000;

  /** The context from --rank/--world, else from the environment (torchrun, Slurm). */
  static PipelineContext context(Integer rank, Integer world) {
    if (rank == null && world == null) {
      return PipelineContext.fromEnvironment();
    }
    if (rank == null || world == null) {
      throw new IllegalArgumentException("--rank and --world go together: give both or neither");
    }
    OptionChecks.positive("--world", world);
    if (rank < 0 || rank >= world) {
      throw new IllegalArgumentException("--rank " + rank + " is out of range for --world " + world + ": expected 0 <= rank < world");
    }
    return PipelineContext.defaults().withRank(rank, world);
  }

  static EqualLength policy(String name) {
    for (EqualLength p : EqualLength.values()) {
      if (p.name().equalsIgnoreCase(name)) {
        return p;
      }
    }
    throw new IllegalArgumentException("--equal '" + name + "': expected pad, drop or uneven");
  }
}
