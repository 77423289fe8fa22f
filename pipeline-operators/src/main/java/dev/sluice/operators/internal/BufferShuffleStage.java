package dev.sluice.operators.internal;

import dev.sluice.core.Options;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.Schema;
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
    // The pass's context is fixed here (a repeat compiles each pass with its own epoch).
    return new FluxBufferShuffle<>((Flux<Object>) in, bufferSize, seed != null, seed != null ? seed : 0L,
        reshuffleEachIteration, context);
  }

  @Override
  public Schema schemaAfter(Schema in) {
    return in;
  }

  @Override
  public String describe() {
    return "shuffle(" + bufferSize + (seed == null ? "" : ", seed=" + seed) + (reshuffleEachIteration ? "" : ", reshuffle=false") + ")";
  }

  @Override
  public <R> R accept(Visitor<R> visitor) {
    return visitor.bufferShuffle(this);
  }
}
