package dev.sluice.examples.deps;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.io.Formats;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.hdf5.Hdf5;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.operators.CacheSpec;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Pipeline;
import java.nio.file.Path;
import java.util.List;

/**
 * Run by {@link OptionalDependenciesTest} in a JVM without the optional libraries: an npy pipeline
 * (format detection, shuffle, shard with {@link EqualLength#UNEVEN}, batch, prefetch) read to its end, one {@code row} line per row
 * delivered; then one {@code error} line per feature that needs a missing library.
 *
 * <p>Arguments: {@code NPY_DIR PARQUET_FILE ARROW_FILE CACHE_DIR WORLD}.
 */
public final class WithoutOptionalLibraries {
  private WithoutOptionalLibraries() {}

  /** Prints what it saw on standard output; exits 0 when nothing unexpected was thrown. */
  public static void main(String[] args) {
    Path npy = Path.of(args[0]);
    Path parquet = Path.of(args[1]);
    Path arrow = Path.of(args[2]);
    Path cache = Path.of(args[3]);
    int world = Integer.parseInt(args[4]);
    for (OptionalLibrary lib : List.of(OptionalLibrary.PARQUET, OptionalLibrary.ARROW, OptionalLibrary.CHRONICLE_MAP,
        OptionalLibrary.JHDF)) {
      System.out.println("missing " + lib.missing());
    }

    Dataset<Example> data = Formats.open(npy);
    PipelineContext ctx = PipelineContext.defaults().withSeed(11);
    for (int rank = 0; rank < world; rank++) {
      Pipeline<Batch> p = Pipeline.from(data).shuffle().shard(world, rank, EqualLength.UNEVEN).batch(64).prefetch(3);
      for (Batch b : p.flux(ctx).toIterable()) {
        try (b) {
          for (int r = 0; r < b.size(); r++) {
            System.out.println("row " + b.index(r) + " " + b.column("label").values().getAsLong(r));
          }
        }
      }
    }

    System.out.println("detected " + Formats.detect(parquet).name() + " " + Formats.detect(arrow).name());
    attempt(() -> Formats.open(parquet));
    attempt(() -> Parquet.open(parquet));
    attempt(() -> Formats.open(arrow));
    attempt(() -> Arrow.open(arrow));
    attempt(() -> Pipeline.from(data).cache(CacheSpec.defaults().directory(cache)));
    attempt(() -> Hdf5.open(Path.of(args[5])));
  }

  private static void attempt(Runnable r) {
    try {
      r.run();
      System.out.println("no error");
    } catch (RuntimeException e) {
      System.out.println("error " + e.getClass().getSimpleName() + " " + e.getMessage());
    }
  }
}
