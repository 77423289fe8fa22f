package dev.sluice.operators.internal;

import dev.sluice.core.Options.ChunkPlacement;
import dev.sluice.core.internal.OrderedChunks;
import dev.sluice.core.internal.TrackedScheduler;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * The parallel path of {@code ParallelMap} as one operator: elements are collected into chunks,
 * each chunk is mapped on a worker of {@code scheduler} (at most {@code parallel} at once) or, when
 * the function is cheap next to a scheduler hop or to producing its inputs, right on the thread
 * that completed it; results go downstream in input order ({@code deterministic}) or in the order
 * the chunks finish.
 *
 * <p>The operator fills the chunks and its tuner sizes them and places them (worker or inline); the
 * dispatch, the bounded chunks in flight, the emission in input or finish order and the discard on
 * cancel and failure are {@link OrderedChunks}', the chunk engine of
 * {@link dev.sluice.core.internal.OrderedParallel}. Not a composition of Reactor's operators
 * ({@code handle}, {@code flatMapSequential}, {@code concatMapIterable}, ...), because every layer
 * costs something per element: here an element costs one array store and one volatile write on
 * the way in and one array load on the way out.
 *
 * <p><b>Reactive Streams semantics.</b> Requests up to {@code (parallel + 1) × chunkSize} elements
 * ahead of the downstream (the chunks being mapped or emitted plus the one filling), replenished as
 * results go out; a chunk is handed on when full or when the upstream ends. Results are emitted on
 * demand, on the thread that requested them or that finished a chunk. Upstream errors arrive after
 * every element before them; an error of the function after the results before the failing element
 * (the upstream is then cancelled). Cancel cancels the upstream; a chunk being mapped on a worker is
 * not interrupted, and a function waiting there for pooled memory stops waiting (the chunks run
 * within a {@code WaitCancellation} that the cancel, or the function's failure, triggers).
 *
 * <p><b>Discard support.</b> Every element received is emitted or discarded exactly once: the inputs
 * of the filling chunk and of chunks not yet mapped, the results not yet emitted, and the results of a
 * chunk whose worker finishes after the cancel go to {@link Operators#onDiscard}. The filling chunk
 * is shared between {@code onNext} and a cancelling thread by a Dekker handshake (each writes its own
 * volatile, then reads the other's), so an element is stored without a lock.
 *
 * @param <T> input type
 * @param <R> output type
 */
public final class FluxChunkedMap<T, R> extends Flux<R> implements Scannable {
  private final Publisher<? extends T> source;
  private final Function<? super T, ? extends R> fn;
  private final int parallel;
  private final boolean deterministic;
  private final int chunkSize;
  private final boolean adaptive;
  private final boolean mayInline;
  private final Scheduler scheduler;

  /**
   * The map.
   *
   * @param parallel chunks mapped at once, &gt; 1
   * @param deterministic emit in input order
   * @param chunkSize elements per chunk (the first size when {@code adaptive}), &gt; 0
   * @param adaptive let the chunk size adapt to the function's cost
   * @param placement {@link ChunkPlacement#ADAPTIVE}: an adaptive map maps a cheap chunk on the
   *     thread that completed it; {@link ChunkPlacement#WORKERS}: every chunk goes to a worker
   * @param scheduler where chunks are mapped
   */
  public FluxChunkedMap(Publisher<? extends T> source, Function<? super T, ? extends R> fn, int parallel,
      boolean deterministic, int chunkSize, boolean adaptive, ChunkPlacement placement, Scheduler scheduler) {
    this.source = source;
    this.fn = fn;
    this.parallel = parallel;
    this.deterministic = deterministic;
    this.chunkSize = chunkSize;
    this.adaptive = adaptive;
    this.mayInline = placement == ChunkPlacement.ADAPTIVE;
    this.scheduler = TrackedScheduler.of(scheduler);
  }

  /** Whether a chunk may map on the thread that completed it (test hook). */
  boolean mayInline() {
    return mayInline;
  }

  @Override
  public void subscribe(CoreSubscriber<? super R> actual) {
    source.subscribe(new FluxChunkedMapSubscriber<T, R>(actual, fn, parallel, deterministic, scheduler,
        new FluxChunkedMapTuner(chunkSize, adaptive, mayInline)));
  }

  @Override
  public Object scanUnsafe(Attr key) {
    if (key == Attr.PARENT) {
      return source;
    }
    if (key == Attr.RUN_STYLE) {
      return Attr.RunStyle.ASYNC;
    }
    return null;
  }
}
