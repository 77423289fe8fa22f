package dev.sluice.examples.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Positioned;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.spi.Fingerprinted;
import dev.sluice.operators.CacheMonitor;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.CacheStats;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.RandomAccessShuffle;
import dev.sluice.operators.SplitShuffle;
import dev.sluice.operators.Pipeline;
import dev.sluice.operators.ShuffleQuality;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import reactor.core.publisher.Flux;

/**
 * {@code sluice read}: one or more epochs of {@code [cache ->] shuffle -> shard -> batch -> prefetch} over PATH,
 * printing a summary line, a JSON summary ({@code --json}) or the source indices in delivery order
 * ({@code --print-indices}); {@code --quality} adds the shuffle-quality report of the rank's epochs
 * ({@link ShuffleQuality}).
 */
@Command(name = "read", mixinStandardHelpOptions = true,
    description = "Read PATH through shuffle -> shard -> batch -> prefetch and report what was read.")
final class ReadCommand implements Callable<Integer> {
  @Mixin
  DatasetInputOptions input = new DatasetInputOptions();

  @Option(names = "--io", paramLabel = "mmap|read", description = "How npy, shards, parquet and arrow files are "
      + "read: mmap (a memory mapping; the default for npy, shards and arrow) or read (positioned reads into batch "
      + "memory, nothing mapped; the default for parquet; suits network filesystems).")
  String io;

  @Option(names = "--shuffle", description = "Shuffle: the global permutation on a random-access source; on a split "
      + "source the blocks of every split in a new order every epoch, plus a 10,000-row window (with --batch) or "
      + "buffer; a 10,000-element buffer on a streaming source.")
  boolean shuffle;

  @Option(names = "--split-shuffle", paramLabel = "blocks|splits", defaultValue = "blocks",
      description = "With --shuffle on a split source: blocks (default: a rank reads a new random part every epoch) "
      + "or splits (only the order of whole splits is shuffled: cheaper, but with few splits a rank reads the same "
      + "rows every epoch).")
  String splitShuffle;

  @Option(names = "--shuffle-mode", paramLabel = "auto|global|blocks", defaultValue = "auto",
      description = "With --shuffle on a random-access source (npy, shards, arrow): global (a permutation of all "
      + "rows: perfect mixing, but every row is a random read), blocks (blocks of about 2 MiB of rows, or "
      + "--shuffle-block, in a new order every epoch, each read sequentially, mixed in a window: for files larger than memory) or auto (default: "
      + "blocks when the data is larger than half the physical memory, else global).")
  String shuffleMode;

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

  @Mixin
  ReadCacheOptions caches = new ReadCacheOptions();

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

  @Option(names = "--cache-name", paramLabel = "NAME",
      description = "With --cache: a name for what PATH holds, part of the cache's key; needed for a source that cannot "
          + "describe its contents (an Arrow file); change it when the data changes.")
  String cacheName;

  @Option(names = "--print-indices", description = "Print '<epoch> <index> ...' per batch (per element without --batch), nothing else.")
  boolean printIndices;

  @Option(names = "--json", description = "Print a JSON summary as the last line.")
  boolean json;

  @Option(names = "--quality", description = "Measure how well the order mixes: per epoch the rows, distinct rows, "
      + "the Spearman correlation of output position and row index (about 0 for a uniform shuffle, 1 in file order) "
      + "and the Jaccard similarity of the epoch's rows with the previous epoch's (about 1/(2W-1) for a fresh random "
      + "1/W of the rows, 1 for the same rows), then the largest of each; with --json as \"quality\".")
  boolean quality;

  @Option(names = "--metrics", description = "Measure every stage and end with a table of the stages (elements, bytes, "
      + "time busy and waiting for upstream and for downstream, buffers, workers, decodes) and one line naming the "
      + "bottleneck: input-bound at a stage, or consumer-bound.")
  boolean metrics;

  @Option(names = "--step-ms", paramLabel = "N", description = "With --metrics: a simulated consumer that works N ms "
      + "(busy, not sleeping) on every batch (every element without --batch), to see a consumer-bound pass.")
  Double stepMs;

  @Option(names = "--checkpoint", paramLabel = "FILE", description = "Write the run's state to FILE every "
      + "--checkpoint-every elements, at --stop-after and at the end, replacing it atomically and only after the "
      + "output it covers is flushed; --resume FILE continues from it.")
  Path checkpoint;

  @Option(names = "--checkpoint-every", paramLabel = "N", description = "With --checkpoint: every N elements "
      + "(examples, or batches with --batch).")
  Long checkpointEvery;

  @Option(names = "--stop-after", paramLabel = "N", description = "Stop cleanly after N elements (examples, or batches "
      + "with --batch), writing the checkpoint first when --checkpoint is given.")
  Long stopAfter;

  @Option(names = "--resume", paramLabel = "FILE", description = "Continue the run whose state FILE holds (written by "
      + "--checkpoint): the elements after the last one it counts, to the end of the run's epochs. Give the same "
      + "PATH and pipeline options; --seed defaults to the checkpoint's; with another --world the rest of the epoch "
      + "is re-partitioned among the new ranks.")
  Path resume;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    if (printIndices && json) {
      throw new IllegalArgumentException("--print-indices and --json cannot be combined: --print-indices leaves only index lines on stdout");
    }
    if (printIndices && metrics) {
      throw new IllegalArgumentException("--print-indices and --metrics cannot be combined: --print-indices leaves only index lines on stdout");
    }
    if (quality && printIndices) {
      throw new IllegalArgumentException("--quality and --print-indices cannot be combined: --print-indices leaves only index lines on stdout");
    }
    if (quality && (stopAfter != null || resume != null)) {
      throw new IllegalArgumentException("--quality measures whole epochs and cannot be combined with "
          + (stopAfter != null ? "--stop-after" : "--resume"));
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
    if (cacheName != null && cache == null) {
      throw new IllegalArgumentException("--cache-name needs --cache");
    }
    if (cacheName != null && cacheName.isBlank()) {
      throw new IllegalArgumentException("--cache-name must not be blank");
    }
    if (cacheMaxBytes != null && cache == null) {
      throw new IllegalArgumentException("--cache-max-bytes needs --cache");
    }
    if (checkpointEvery != null && checkpoint == null) {
      throw new IllegalArgumentException("--checkpoint-every " + checkpointEvery + " needs --checkpoint FILE");
    }
    if (checkpointEvery != null) {
      OptionChecks.positive("--checkpoint-every", checkpointEvery);
    }
    if (stopAfter != null) {
      OptionChecks.nonNegative("--stop-after", stopAfter);
    }
    splitShuffle(splitShuffle);
    if (given("--split-shuffle") && !shuffle) {
      throw new IllegalArgumentException("--split-shuffle " + splitShuffle + " needs --shuffle");
    }
    shuffleMode(shuffleMode);
    if (given("--shuffle-mode") && !shuffle) {
      throw new IllegalArgumentException("--shuffle-mode " + shuffleMode + " needs --shuffle");
    }
    if (given("--shuffle-block") && !shuffle) {
      throw new IllegalArgumentException("--shuffle-block needs --shuffle");
    }
    if (given("--shuffle-mode") && buffer != null) {
      throw new IllegalArgumentException("--shuffle-mode " + shuffleMode + " and --buffer cannot be combined: "
          + "--buffer replaces the global or block shuffle by a buffer shuffle");
    }
    PipelineState from = null;
    if (resume != null) {
      if (given("--epochs")) {
        throw new IllegalArgumentException("--epochs and --resume cannot be combined: the checkpoint holds the run's "
            + "epochs (" + resume + ")");
      }
      from = PipelineState.read(resume);
    }
    long runSeed = from != null && !given("--seed") ? from.seed() : seed;
    PipelineContext ctx = context(rank, world).withSeed(runSeed);
    PipelineState start = from;
    EqualLength policy = policy(equal);
    PrintWriter out = spec.commandLine().getOut();

    return DatasetRun.withMemoryLimit(memoryLimit, () -> read(ctx, start, policy, out));
  }

  private boolean given(String option) {
    return spec.commandLine().getParseResult().hasMatchedOption(option);
  }

  private int read(PipelineContext ctx, PipelineState from, EqualLength policy, PrintWriter out) {
    Dataset<Example> data = input.open(io);
    try {
      Pipeline<Example> p = caches.apply(Pipeline.from(data));
      CacheMonitor monitor = new CacheMonitor();
      if (cache != null) {
        if (cacheName == null && !(data instanceof Fingerprinted)) {
          throw new IllegalArgumentException("--cache: " + input.path + " cannot describe its contents for the cache's key,"
              + " so a change to it would go unnoticed; name what it holds with --cache-name NAME (e.g. "
              + "--cache-name my-data-v1) and change the name when the data changes");
        }
        CacheSpec spec = (cacheName == null ? CacheSpec.defaults() : CacheSpec.named(cacheName)).monitor(monitor);
        spec = cache.isEmpty() ? spec : spec.directory(Path.of(cache));
        p = p.cache(cacheMaxBytes == null ? spec : spec.maxBytes(cacheMaxBytes));
      }
      if (shuffle && data instanceof RandomAccessDataset) {
        // Global permutation or block shuffle (--shuffle-mode), or a buffer shuffle of the rank's stride with --buffer.
        p = buffer == null ? p.shuffle(shuffleMode(shuffleMode)) : p;
      } else if (shuffle && data instanceof SplitDataset) {
        if (shuffleMode(shuffleMode) == RandomAccessShuffle.GLOBAL) {
          throw new IllegalArgumentException("--shuffle-mode global: " + input.path + " is not random-access, so it has no "
              + "global permutation; its shuffle is by blocks (--split-shuffle)");
        }
        // Block (or split-order) shuffle plus a buffer (10,000 elements, or --buffer N), after the shard.
        p = p.shuffle(splitShuffle(splitShuffle));
      }
      p = p.shard(ctx.worldSize(), ctx.rank(), policy);
      if (shuffle && buffer != null) {
        p = p.shuffle(buffer);
      } else if (shuffle && !(data instanceof RandomAccessDataset) && !(data instanceof SplitDataset)) {
        p = p.shuffle(STREAMING_SHUFFLE_BUFFER);
      }
      Pipeline<?> run;
      if (batch != null) {
        Pipeline<Batch> b = p.batch(batch, dropRemainder, parallelism);
        run = prefetch > 0 ? b.prefetch(prefetch) : b;
      } else {
        run = prefetch > 0 ? p.prefetch(prefetch) : p;
      }
      long[] totals = new long[3]; // examples, batches, bytes
      PipelineMetrics measured = metrics ? new PipelineMetrics("read") : null;
      double step = stepMs == null ? 0 : stepMs;
      long rows = DatasetRun.knownRows(data);
      long perRank = rows < 0 ? -1 : (rows + ctx.worldSize() - 1) / ctx.worldSize();
      long started = System.nanoTime();
      long runEpochs = from != null ? Math.max(0, from.endEpoch() - from.epoch()) : epochs; // this invocation's
      long total = perRank < 0 ? -1
          : Math.max(0, perRank * runEpochs - (from == null ? 0 : from.position() * (batch == null ? 1 : batch)));
      Pipeline<?> measuredRun = measured != null ? measured.measure(run) : run;
      Flux<? extends Positioned<?>> elements = from != null ? measuredRun.withState(ctx, from)
          : measuredRun.withState(ctx, epochs);
      if (stopAfter != null) {
        elements = elements.take(stopAfter);
      }
      // the state after the last element handled: before the first, the run's start
      PipelineState[] last = {from != null ? from : measuredRun.initialState(ctx, epochs)};
      long[] handed = {0};
      ShuffleQuality.Builder measuredOrder = quality ? ShuffleQuality.builder() : null;
      long[] qualityEpoch = {0}; // the epoch the builder is filling
      // no bar while index lines stream to stdout
      try (Progress progress = printIndices ? Progress.none()
          : Progress.start("read", total, "ex", System.err)) {
        elements.doOnNext(positioned -> {
          Object x = positioned.element();
          long epoch = positioned.state().epoch();
          if (measuredOrder != null) {
            for (; qualityEpoch[0] < epoch; qualityEpoch[0]++) {
              measuredOrder.endEpoch();
            }
          }
          if (x instanceof Batch b) {
            try (b) {
              totals[0] += b.size();
              totals[1]++;
              totals[2] += DatasetRun.bytes(b);
              if (measuredOrder != null) {
                for (int i = 0; i < b.size(); i++) {
                  measuredOrder.row(b.index(i));
                }
              }
              if (printIndices) {
                StringBuilder line = new StringBuilder().append(epoch);
                for (int i = 0; i < b.size(); i++) {
                  line.append(' ').append(b.index(i));
                }
                out.println(line);
              }
              progress.step(b.size());
            }
          } else {
            Example e = (Example) x;
            totals[0]++;
            totals[2] += DatasetRun.bytes(e);
            if (measuredOrder != null) {
              measuredOrder.row(e.index());
            }
            if (printIndices) {
              out.println(epoch + " " + e.index());
            }
            progress.step(1);
          }
          if (step > 0) {
            PipelineMetrics.busyStep(step);
          }
          last[0] = positioned.state();
          handed[0]++;
          if (checkpointEvery != null && handed[0] % checkpointEvery == 0) {
            out.flush(); // the checkpoint never counts an element whose output could still be lost
            last[0].write(checkpoint);
          }
        }).blockLast();
      }
      out.flush();
      ShuffleQuality order = null;
      if (measuredOrder != null) {
        for (; qualityEpoch[0] < epochs; qualityEpoch[0]++) { // the last epoch, and any that delivered nothing
          measuredOrder.endEpoch();
        }
        order = measuredOrder.build();
      }
      if (checkpoint != null) {
        PipelineState end = last[0];
        // not stopped by --stop-after: the run is over, and a resume from here has nothing to read
        boolean over = stopAfter == null || handed[0] < stopAfter;
        (over ? end.at(end.endEpoch(), 0, 0) : end).write(checkpoint);
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
        o.put("epochs", runEpochs);
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
        if (order != null) {
          o.set("quality", QualityReport.json(order, ctx.rank(), ctx.worldSize()));
        }
        out.println(DatasetRun.line(o));
      } else if (!printIndices) {
        out.printf(Locale.ROOT, "read %d examples in %d batches over %d epochs (rank %d of %d): %d bytes in %.3f s%n",
            examples, batches, runEpochs, ctx.rank(), ctx.worldSize(), bytes, seconds);
        if (cache != null) {
          CacheStats c = monitor.total();
          out.printf(Locale.ROOT, "cache: %d hits, %d misses (%d uncached), %d fallbacks, %d blocks written (%d bytes)%n",
              c.hits(), c.misses(), c.uncached(), c.fallbacks(), c.blocksWritten(), c.bytesWritten());
        }
        if (measured != null) {
          measured.print(out);
        }
        if (order != null) {
          QualityReport.print(out, order, ctx.rank(), ctx.worldSize());
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

  static RandomAccessShuffle shuffleMode(String name) {
    for (RandomAccessShuffle s : RandomAccessShuffle.values()) {
      if (s.name().equalsIgnoreCase(name)) {
        return s;
      }
    }
    throw new IllegalArgumentException("--shuffle-mode '" + name + "': expected auto, global or blocks");
  }

  static SplitShuffle splitShuffle(String name) {
    for (SplitShuffle s : SplitShuffle.values()) {
      if (s.name().equalsIgnoreCase(name)) {
        return s;
      }
    }
    throw new IllegalArgumentException("--split-shuffle '" + name + "': expected blocks or splits");
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
