package dev.sluice.io.npy;

import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.SplitDataset;
import reactor.core.publisher.Flux;

/**
 * An npy stack: a directory of {@code 0.npy … k.npy} chunks along axis 0, read as one dataset with
 * global row indices. It is both random access ({@link #get}, {@link #gather} across chunk
 * boundaries) and a {@link SplitDataset} whose splits are its chunks.
 */
public interface NpyStack extends NpyDataset, SplitDataset<Example> {

  /** Number of chunk files. */
  int chunkCount();

  /** The rows in index order. */
  @Override
  default Flux<Example> flux(PipelineContext context) {
    return NpyDataset.super.flux(context);
  }
}
