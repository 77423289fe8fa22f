package dev.sluice.examples;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.size;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.Tensor;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import dev.sluice.operators.Pipeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Spark prepares the data, Sluice feeds the training loop: a Parquet dataset (generated when
 * {@code --rows} is given: {@code id} bigint, {@code x} array&lt;float&gt; of {@code --dim} values,
 * {@code label} int) is written by a local Spark ({@code local[2]}) as a Sluice shard set with
 * {@code df.write().format("sluice")}, then read back with {@link Shards#open(Path)} and trained on
 * for a few epochs: shuffled, sharded for each rank of a world of {@code --world}, batched and
 * prefetched. The ranks run one after another in this process, as each would in its own; per
 * epoch the example checks that together they trained on every row of the set exactly once, plus
 * the few rows {@code shard} repeats so that every rank gets the same number of rows when the
 * world does not divide the set.
 *
 * <p>Options: {@code --out DIR} (required: the shard set goes to {@code DIR/shards}, generated
 * Parquet to {@code DIR/parquet}), one of {@code --rows N} or {@code --parquet PATH} (a Parquet
 * file or directory with an {@code x} column of float arrays of one length and an integer
 * {@code label} column), {@code --dim} (16), {@code --shard-rows} (10,000), {@code --world} (2),
 * {@code --epochs} (2), {@code --batch} (64), {@code --seed} (42).
 *
 * <p>Spark is not in {@code sluice.jar}; run it from a build of the project (docs/spark.md):
 *
 * <pre>
 * mvn -B -q -pl examples -am process-test-classes -Pspark-to-shards -Dspark-to-shards.args="--rows 100000 --out /tmp/spark-to-shards"
 * </pre>
 */
public final class SparkToShards {
  private static final List<String> OPTIONS =
      List.of("--out", "--rows", "--parquet", "--dim", "--shard-rows", "--world", "--epochs", "--batch", "--seed");

  private SparkToShards() {}

  /**
   * Runs the example.
   *
   * @param args the options above
   */
  public static void main(String[] args) throws Exception {
    ExampleArgs a = ExampleArgs.parse(args, OPTIONS, List.of());
    Path out = a.path("--out");
    if (out == null || (a.get("--rows") == null) == (a.get("--parquet") == null)) {
      throw new IllegalArgumentException("usage: SparkToShards --out DIR (--rows N | --parquet PATH)"
          + " [--dim 16] [--shard-rows 10000] [--world 2] [--epochs 2] [--batch 64] [--seed 42]");
    }
    int world = positive(a, "--world", 2);
    int epochs = positive(a, "--epochs", 2);
    int batchSize = positive(a, "--batch", 64);
    long shardRows = positive(a, "--shard-rows", 10_000);
    long rows = a.get("--rows") == null ? 0 : positive(a, "--rows", 0L);
    int dim = positive(a, "--dim", 16);
    quietSparkLogs();

    Path shards = out.resolve("shards");
    SparkSession spark = SparkSession.builder().master("local[2]").appName("SparkToShards")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate();
    try {
      Path parquet;
      if (a.get("--rows") != null) {
        parquet = out.resolve("parquet");
        generate(spark, rows, dim).write().mode("overwrite").parquet(parquet.toUri().toString());
        System.out.printf(Locale.ROOT, "generated %d rows (id bigint, x array<float>[%d], label int) as Parquet in %s%n",
            rows, dim, parquet);
      } else {
        parquet = a.path("--parquet");
      }
      long started = System.nanoTime();
      Dataset<Row> df = spark.read().parquet(parquet.toUri().toString());
      List<String> columns = List.of(df.columns());
      if (!columns.contains("x") || !columns.contains("label")) {
        throw new IllegalArgumentException(parquet + ": the example trains on columns x (float arrays) and label"
            + " (integers) but the dataset has " + columns);
      }
      // every x has one length: declared as the field's fixed shape, so a batch is one [rows, dim] tensor
      int length = df.select(size(col("x"))).head().getInt(0);
      df.write().format("sluice").mode("overwrite")
          .option("shardRows", Long.toString(shardRows))
          .option("shape.x", Integer.toString(length))
          .save(shards.toUri().toString());
      double seconds = (System.nanoTime() - started) / 1e9;
      try (var files = Files.list(shards)) {
        long count = files.filter(p -> p.getFileName().toString().endsWith(".shard")).count();
        System.out.printf(Locale.ROOT, "Spark (local[2]) wrote %s as %d shards to %s in %.3f s%n",
            parquet, count, shards, seconds);
      }
    } finally {
      spark.stop();
    }

    PipelineContext ctx = PipelineContext.defaults().withSeed(a.longValue("--seed", 42));
    try (ShardSet set = Shards.open(shards)) {
      double[] weights = new double[(int) set.schema().field("x").shape().numElements()];
      for (int epoch = 0; epoch < epochs; epoch++) {
        BitSet seen = new BitSet();
        BitSet repeated = new BitSet();
        StringBuilder ranks = new StringBuilder();
        double loss = 0;
        long steps = 0;
        for (int rank = 0; rank < world; rank++) {
          Pipeline<Batch> train = Pipeline.from(set)
              .shuffle()                 // one permutation per epoch, the same on every rank
              .shard(world, rank)        // this rank's part of it: ceil(rows / world) rows
              .batch(batchSize)          // rows copied into pooled column memory
              .prefetch(2);              // produced ahead on another thread
          long rankRows = 0;
          long rankSteps = 0;
          try (PipelineIterator<Batch> pass = train.iterate(ctx.withRank(rank, world).withEpoch(epoch))) {
            for (Batch batch : pass) {
              try (batch) {
                for (int i = 0; i < batch.size(); i++) {
                  long index = batch.index(i);
                  if (!seen.get((int) index)) {
                    seen.set((int) index);
                  } else if (!repeated.get((int) index)) {
                    repeated.set((int) index);
                  } else {
                    throw new IllegalStateException("epoch " + epoch + ": row " + index + " trained on three times");
                  }
                }
                loss += step(batch, weights);
                rankRows += batch.size();
                rankSteps++;
              }
            }
          }
          steps += rankSteps;
          ranks.append(rank == 0 ? "" : ", ").append(String.format(Locale.ROOT, "rank %d: %d rows in %d steps",
              rank, rankRows, rankSteps));
        }
        // shard's default policy (PAD) gives every rank ceil(n / world) rows, wrapping around to the first ones
        long perRank = (set.size() + world - 1) / world;
        long padding = perRank * world - set.size();
        if (seen.cardinality() != set.size() || repeated.cardinality() != padding) {
          throw new IllegalStateException("epoch " + epoch + ": trained on " + seen.cardinality() + " of "
              + set.size() + " rows, " + repeated.cardinality() + " of them twice (expected " + padding + ")");
        }
        String pad = padding == 0 ? "" : String.format(Locale.ROOT, " (and %d again, to give every rank %d rows)",
            padding, perRank);
        System.out.printf(Locale.ROOT, "epoch %d: %s; each of the %d rows once%s, mean loss %.4f%n",
            epoch, ranks, set.size(), pad, loss / Math.max(1, steps));
      }
    }
    System.out.println("off-heap bytes outstanding: " + MemoryManager.shared().outstandingBytes());
  }

  /** {@code rows} rows in two partitions: {@code x[j] = sin(id * (j + 1) / 1000)}, {@code label} 1 where {@code x[0] > 0}, else 0. */
  static Dataset<Row> generate(SparkSession spark, long rows, int dim) {
    return spark.range(0, rows, 1, 2).select(
        col("id"),
        expr("transform(sequence(1, " + dim + "), j -> CAST(sin(CAST(id * j AS DOUBLE) / 1000D) AS FLOAT))").as("x"),
        expr("CAST(sin(CAST(id AS DOUBLE) / 1000D) > 0 AS INT)").as("label"));
  }

  /** One least-squares step of a linear model towards the label: the "training". */
  static double step(Batch batch, double[] w) {
    Tensor x = batch.column("x").values();
    Tensor label = batch.column("label").values();
    int dim = w.length;
    double loss = 0;
    for (int r = 0; r < batch.size(); r++) {
      double p = 0;
      for (int j = 0; j < dim; j++) {
        p += w[j] * x.getFloat((long) r * dim + j);
      }
      double g = p - label.getAsDouble(r);
      loss += g * g;
      for (int j = 0; j < dim; j++) {
        w[j] -= 0.05 * g * x.getFloat((long) r * dim + j) / batch.size();
      }
    }
    return loss / batch.size();
  }

  private static int positive(ExampleArgs a, String name, int otherwise) {
    long v = positive(a, name, (long) otherwise);
    if (v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(name + " must be at most " + Integer.MAX_VALUE + " but it was " + v);
    }
    return (int) v;
  }

  private static long positive(ExampleArgs a, String name, long otherwise) {
    long v = a.longValue(name, otherwise);
    if (v <= 0) {
      throw new IllegalArgumentException(name + " must be > 0 but it was " + v);
    }
    return v;
  }

  /** Spark, Hadoop and Parquet log through the examples' SLF4J provider: warnings only, unless set otherwise. */
  private static void quietSparkLogs() {
    // errors only from Hadoop (no native library) and Spark's address lookup (a loopback host name)
    for (String logger : List.of("org.apache.spark", "org.sparkproject", "org.apache.parquet", "io.netty",
        "org.apache.hadoop", "org.apache.spark.util.Utils")) {
      String key = "org.slf4j.simpleLogger.log." + logger;
      if (System.getProperty(key) == null) {
        System.setProperty(key, logger.startsWith("org.apache.hadoop") || logger.endsWith("Utils") ? "error" : "warn");
      }
    }
  }
}
