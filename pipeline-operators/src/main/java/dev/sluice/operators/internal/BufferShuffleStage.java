package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
import dev.sluice.operators.Shuffle;
import reactor.core.publisher.Flux;

/**
 * tf.data's buffer shuffle on the element path.
 *
 * @param bufferSize elements held
 * @param seed the operator's own seed, or null for the context's
 * @param reshuffleEachIteration a new order each epoch
 */
public record BufferShuffleStage(int bufferSize, Long seed, boolean reshuffleEachIteration, boolean isSplitDefault)
    implements FluxStage {
  public BufferShuffleStage(int bufferSize, Long seed, boolean reshuffleEachIteration) {
    this(bufferSize, seed, reshuffleEachIteration, false);
  }

  /** The buffer {@code shuffle()} adds on a split source. */
  static BufferShuffleStage splitDefault(int bufferSize, Long seed) {
    return new BufferShuffleStage(bufferSize, seed, true, true);
  }

  @Override
  @SuppressWarnings("unchecked")
  public Flux<?> apply(Flux<?> in, PipelineContext context, Options options) {
    Flux<Object> f = (Flux<Object>) in;
    return f.transform(seed == null ? Shuffle.buffer(bufferSize, reshuffleEachIteration)
            : Shuffle.buffer(bufferSize, seed, reshuffleEachIteration))
        .contextWrite(c -> c.put(PipelineContext.KEY, context));
  }

  @Override
  public Schema schemaAfter(Schema in) {
    return in;
  }

  @Override
  public String describe() {
    return "shuffle(" + bufferSize + (seed == null ? "" : ", seed=" + seed) + (reshuffleEachIteration ? "" : ", reshuffle=false") + ")";
  }
}
