package dev.sluice.benchmarks;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.operators.Pipeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import reactor.core.publisher.Flux;

/**
 * Padding with {@code paddedBatch} alone against {@code bucketBySequenceLength} (docs/benchmarks.md):
 * a Sluice shard set of {@code rows} records (default 200,000) whose {@code tokens} int32 column has
 * a long-tailed length (lognormal around 48 tokens, 1 .. 2048) is read through both pipelines, 32
 * rows per batch; each prints the bytes of its padded token columns, the padding among them, the
 * rows and their checksum, and the median time of an epoch over {@code rounds} rounds (default 5,
 * the two taken in turn).
 *
 * <pre>
 * java -Xms1g -Xmx1g -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.BucketPadding [DIR] [rows] [rounds]
 * </pre>
 */
public final class BucketPadding {
  private BucketPadding() {}

  private static final int[] BOUNDARIES = {16, 32, 64, 128, 256, 512, 1024};

  /** The generated records: {@code tokens} int32[-1] of a seeded long-tailed length, {@code label} int64. */
  record Generated(long rows) implements Dataset<Example>, HasSchema {
    @Override
    public Schema schema() {
      return Schema.of(List.of(new TensorSpec("tokens", DType.INT32, Shape.of(-1)),
          new TensorSpec("label", DType.INT64, Shape.of())));
    }

    @Override
    public Flux<Example> flux(PipelineContext context) {
      return Flux.range(0, (int) rows).map(i -> {
        double g = new SplittableRandom(1_000_003L * i + 42).nextGaussian();
        int length = (int) Math.max(1, Math.min(2048, Math.round(Math.exp(Math.log(48) + 1.1 * g))));
        int[] tokens = new int[length];
        Arrays.fill(tokens, i);
        return Example.builder(i).put("tokens", Tensor.of(tokens)).put("label", Tensor.scalar((long) i)).build();
      });
    }
  }

  /** Bytes of the token columns, of their padding, rows, the sum of the row indices, seconds. */
  record Figures(long bytes, long padding, long rows, long indexSum, double seconds) {}

  static Figures epoch(Pipeline<Batch> pipeline) {
    long[] out = new long[4];
    long start = System.nanoTime();
    pipeline.flux().doOnNext(b -> {
      try (b) {
        Column tokens = b.column("tokens");
        out[0] += tokens.values().byteSize();
        long values = 0;
        for (int r = 0; r < b.size(); r++) {
          values += 4 * tokens.length(r);
          out[3] += b.index(r);
        }
        out[1] += tokens.values().byteSize() - values;
        out[2] += b.size();
      }
    }).blockLast();
    return new Figures(out[0], out[1], out[2], out[3], (System.nanoTime() - start) / 1e9);
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args.length > 0 ? args[0] : "/tmp/sluice-bucket-bench");
    long rows = args.length > 1 ? Long.parseLong(args[1]) : 200_000L;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    Path set = dir.resolve("tokens-" + rows);
    if (!Files.exists(set)) {
      Files.createDirectories(dir);
      System.out.printf(Locale.ROOT, "writing %s ...%n", set);
      Formats.named("shards").write(new Generated(rows), set, WriteOptions.defaults());
    }
    Dataset<Example> data = Formats.open(set);
    int[] sizes = new int[BOUNDARIES.length + 1];
    Arrays.fill(sizes, 32);
    Pipeline<Batch> padded = Pipeline.from(data).paddedBatch(32);
    Pipeline<Batch> bucketed = Pipeline.from(data)
        .bucketBySequenceLength(e -> (int) e.tensor("tokens").shape().dim(0), BOUNDARIES, sizes);
    epoch(padded);
    epoch(bucketed);
    List<Figures> a = new ArrayList<>();
    List<Figures> b = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      a.add(epoch(padded));
      b.add(epoch(bucketed));
    }
    print("paddedBatch(32)", a);
    print("bucketBySequenceLength(32 per bucket)", b);
    Figures pa = a.get(0);
    Figures pb = b.get(0);
    System.out.printf(Locale.ROOT, "padding ratio %.2f, bytes ratio %.2f, same rows: %b%n",
        (double) pa.padding() / pb.padding(), (double) pa.bytes() / pb.bytes(),
        pa.rows() == pb.rows() && pa.indexSum() == pb.indexSum());
  }

  private static void print(String name, List<Figures> runs) {
    double[] seconds = runs.stream().mapToDouble(Figures::seconds).sorted().toArray();
    Figures f = runs.get(0);
    System.out.printf(Locale.ROOT, "%-40s rows %d, token bytes %d, padding bytes %d, epoch %.3f s (median of %d)%n",
        name, f.rows(), f.bytes(), f.padding(), seconds[seconds.length / 2], seconds.length);
  }
}
