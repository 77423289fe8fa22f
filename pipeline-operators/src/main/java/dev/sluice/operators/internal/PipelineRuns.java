package dev.sluice.operators.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineIterator;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Positioned;
import java.util.Objects;
import java.util.function.Function;
import reactor.core.publisher.Flux;

/**
 * The runs of a pipeline: epochs one after another, the states of a run ({@link Checkpoints}), a
 * resumed run from a state, and the blocking iterators over them. A run reads the pipeline's
 * {@link Plan} for what it checks and the pipeline's passes for its elements.
 *
 * @param <T> the pipeline's element type
 */
public final class PipelineRuns<T> {
  /**
   * The passes of a pipeline.
   *
   * @param <T> the element type
   */
  @FunctionalInterface
  public interface Passes<T> {
    /**
     * The pass for {@code context} without its first {@code skip} elements.
     *
     * @param offset positions of the epoch's shared order an earlier world of ranks consumed
     */
    Flux<T> pass(PipelineContext context, long skip, long offset);
  }

  private final Plan plan;
  private final MemoryManager memory;
  private final Passes<T> passes;
  private final Function<MemoryManager, PipelineRuns<T>> scoped;

  /**
   * The runs of a pipeline.
   *
   * @param plan the pipeline's plan
   * @param memory the pipeline's memory manager
   * @param passes the pipeline's passes
   * @param scoped the runs of the same pipeline allocating from another memory manager (an iterator's scope)
   */
  public PipelineRuns(Plan plan, MemoryManager memory, Passes<T> passes,
      Function<MemoryManager, PipelineRuns<T>> scoped) {
    this.plan = plan;
    this.memory = memory;
    this.passes = passes;
    this.scoped = scoped;
  }

  /** {@code count} passes one after another, for epochs {@code context.epoch() ..}. */
  public Flux<T> epochs(PipelineContext context, long count) {
    Objects.requireNonNull(context, "context");
    checkCount(count);
    return PlanCompiler.longRange(0, count).concatMap(i -> passes.pass(context.withEpoch(context.epoch() + i), 0, 0), 0);
  }

  /** {@code count} epochs as a blocking iterator that tracks its state when the pipeline can resume exactly. */
  public PipelineIterator<T> iterate(PipelineContext context, long count) {
    Objects.requireNonNull(context, "context");
    checkCount(count);
    String why = plan.unresumable();
    if (why != null) {
      return PipelineIterator.of(memory, scope -> scoped.apply(scope).epochs(context, count), why);
    }
    PipelineState first = Checkpoints.start(plan, context, count);
    return PipelineIterator.tracking(memory, first, scope -> scoped.apply(scope).run(context, first));
  }

  /** The rest of the run {@code state} was taken in, as a blocking iterator whose state continues from it. */
  public PipelineIterator<T> iterate(PipelineContext context, PipelineState state) {
    Objects.requireNonNull(context, "context");
    PipelineState first = Checkpoints.resume(state, plan, context);
    return PipelineIterator.tracking(memory, first, scope -> scoped.apply(scope).run(context, first));
  }

  /** {@code count} epochs, each element with the state after it. */
  public Flux<Positioned<T>> withState(PipelineContext context, long count) {
    return run(context, initialState(context, count));
  }

  /** The rest of the run {@code state} was taken in, each element with the state after it. */
  public Flux<Positioned<T>> withState(PipelineContext context, PipelineState state) {
    Objects.requireNonNull(context, "context");
    return run(context, Checkpoints.resume(state, plan, context));
  }

  /** The state before the first element of a run of {@code count} epochs. */
  public PipelineState initialState(PipelineContext context, long count) {
    Objects.requireNonNull(context, "context");
    checkCount(count);
    String why = plan.unresumable();
    if (why != null) {
      throw new UnsupportedOperationException(why);
    }
    return Checkpoints.start(plan, context, count);
  }

  /** The rest of the run {@code state} was taken in. */
  public Flux<T> resume(PipelineContext context, PipelineState state) {
    Objects.requireNonNull(context, "context");
    PipelineState first = Checkpoints.resume(state, plan, context);
    if (first.isFinished()) {
      return Flux.empty();
    }
    return Flux.concat(passes.pass(context.withEpoch(first.epoch()), first.position(), first.offset()),
        PlanCompiler.longRange(first.epoch() + 1, first.endEpoch())
            .concatMap(e -> passes.pass(context.withEpoch(e), 0, 0), 0));
  }

  private static void checkCount(long count) {
    if (count < 0) {
      throw new IllegalArgumentException("count >= 0 required but it was " + count);
    }
  }

  /** The pass of epoch {@code e} of the run from {@code first}, each element with the state after it. */
  private Flux<Positioned<T>> positioned(PipelineContext context, PipelineState first, long e) {
    long skip = e == first.epoch() ? first.position() : 0;
    long offset = e == first.epoch() ? first.offset() : 0;
    return Flux.defer(() -> {
      long[] position = {skip};
      return passes.pass(context.withEpoch(e), skip, offset)
          .map(x -> Positioned.of(x, first.at(e, ++position[0], offset)));
    });
  }

  /** The run from {@code first} (in this pipeline's terms) to its end epoch, each element with the state after it. */
  private Flux<Positioned<T>> run(PipelineContext context, PipelineState first) {
    if (first.isFinished()) {
      return Flux.empty();
    }
    // the first pass is subscribed at once (a prefetch starts producing), the next ones in turn
    return Flux.concat(positioned(context, first, first.epoch()),
        PlanCompiler.longRange(first.epoch() + 1, first.endEpoch()).concatMap(e -> positioned(context, first, e), 0))
        .doOnDiscard(Positioned.class, p -> {
          if (p.element() instanceof Batch b) {
            b.close();
          }
        });
  }
}
