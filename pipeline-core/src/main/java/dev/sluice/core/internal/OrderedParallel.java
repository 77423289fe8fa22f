package dev.sluice.core.internal;

import dev.sluice.core.internal.metrics.StageMeter;
import dev.sluice.core.spi.WaitCancellation;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Runs a task per input on a scheduler, several at once, and emits the tasks' results in input
 * order: the one mechanism behind every ordered parallel stage that produces resources (gathered
 * batches, decoded row groups and segments, collated batches). {@link #flatMap} takes its inputs
 * from a flux and a task may produce a run of results; {@link #range} is the same contract for a known
 * count of numbered results, with a lighter hand-over (the index path's parallel gathers);
 * {@link OrderedChunks} is the engine for chunks of elements filled by a front-end, mapped in place
 * on a worker or on the calling thread and emitted in input or finish order (the parallel map).
 *
 * <p>A task turns one input into a run of results, handed to its output one by one in order; a run
 * is emitted only once its task has finished, then element by element on demand. The output does
 * not depend on the parallelism or on which task finishes first.
 *
 * <p><b>Reactive Streams semantics.</b> Requests {@code parallelism} inputs and starts a task per
 * input on {@code scheduler}; at most {@code parallelism} tasks are running or finished and waiting,
 * plus the run being emitted (so memory is bounded by {@code parallelism + 1} runs). Emits on
 * demand; completes after the last run. A task's failure is signalled after every result of the
 * runs before it (and the results its own task produced before failing are released); an upstream
 * error ends the flux at once. Cancel stops handing out results and cancels the upstream.
 *
 * <p><b>Metrics.</b> When the subscriber context holds a {@link StageMeter} (the stage's, in a
 * measured pass), the tasks' durations count as the stage's worker time.
 *
 * <p><b>Release.</b> Every result is either emitted or handed to {@code release} exactly once: the
 * results not yet emitted when the flux completes, fails or is cancelled, the results of a task that
 * finishes after that (a running task is not interrupted; its next result is released at once and
 * the task is stopped; a task waiting for pooled memory stops waiting), and the partial output of a
 * failed task. Emitted results belong to the
 * subscriber; one on its way down when the subscriber cancels goes to Reactor's discard hook (as
 * with any operator), never also to {@code release}.
 */
public final class OrderedParallel {
  private OrderedParallel() {}

  /**
   * The work for one input.
   *
   * @param <T> the input type
   * @param <R> the result type
   */
  @FunctionalInterface
  public interface Task<T, R> {
    /**
     * Produces the results for {@code input}, handing each to {@code out} in order. Runs on a
     * worker thread. {@code out} may throw when the stage has already ended; let it propagate.
     */
    void run(T input, Consumer<R> out);
  }

  /**
   * The results of {@code task} over {@code inputs}, in input order.
   *
   * @param parallelism tasks running or waiting at once, &gt; 0
   * @param scheduler where the tasks run
   * @param release releases a result that is not emitted (e.g. {@code Batch::close})
   */
  public static <T, R> Flux<R> flatMap(Flux<T> inputs, Task<? super T, R> task, int parallelism, Scheduler scheduler,
      Consumer<? super R> release) {
    Objects.requireNonNull(inputs, "inputs");
    Objects.requireNonNull(task, "task");
    Objects.requireNonNull(scheduler, "scheduler");
    Objects.requireNonNull(release, "release");
    if (parallelism <= 0) {
      throw new IllegalArgumentException("parallelism > 0 required but it was " + parallelism);
    }
    Scheduler workers = TrackedScheduler.of(scheduler);
    return Flux.deferContextual(view -> {
      StageMeter meter = StageMeter.from(view);
      if (meter != null) {
        meter.workers(parallelism);
      }
      Runs<R> runs = new Runs<>(release, meter != null && meter.recordsWork() ? meter : null);
      // Each finished task is one Run: flatMapSequential keeps them in order. It drops the values
      // queued in its inners on cancel and on an immediate error without a discard
      // (reactor/reactor-core#4379), so the runs are tracked here and released when the stage ends.
      // A task is scheduled directly, not through subscribeOn: cancelling subscribeOn disposes a
      // running task with an interrupt, and an interrupt closes any FileChannel the task is reading
      // (ClosedByInterruptException), for every later read of that file too. A cancelled run's task
      // still runs (a late one returns at once) and its results are released through the runs.
      return inputs
          .flatMapSequential(
              t -> Mono.<Run<R>>create(sink -> workers.schedule(() -> sink.success(runs.execute(task, t)))),
              parallelism, 1)
          .concatMap(Run::flux, 0)
          .doFinally(signal -> runs.terminate());
    });
  }

  /**
   * The work for one number of a {@link #range}.
   *
   * @param <R> the result type
   */
  @FunctionalInterface
  public interface IndexedTask<R> {
    /**
     * The result for {@code number}, computed on worker {@code worker} (0 .. parallelism-1; a worker
     * is one thread at a time, so per-worker scratch state indexed by it needs no lock).
     */
    R run(int worker, long number);
  }

  /**
   * The results of {@code task} for the numbers {@code 0 .. count-1}, in number order; worker
   * {@code w} computes the numbers {@code n} with {@code n % parallelism == w}, in increasing order,
   * at most {@code ahead} results ahead of the subscriber. For a known count of equal-cost results
   * (gathered batches): one volatile store per hand-over and no task per result, and the subscriber
   * needs no thread of its own (results are emitted by the thread that finds the next one ready).
   *
   * <p>Same contract as {@link #flatMap}: the output does not depend on the parallelism; a task's
   * failure is signalled after every result before its number; every result is emitted or handed to
   * {@code release} exactly once; cancel stops the workers (a running task is not interrupted; its
   * result is released; a worker waiting for pooled memory stops waiting). No result is emitted
   * after {@code cancel()} returned, even when the cancel comes from another thread than the one
   * emitting (it waits for an emission under way), so a downstream operator that drops a late value
   * without discarding it loses nothing. Memory is bounded by {@code parallelism × ahead} results.
   * Workers start on the first request.
   *
   * @param parallelism workers, &gt; 0
   * @param ahead results each worker may hold before the subscriber takes them, &gt; 0
   * @param scheduler where the workers run (a worker blocks while its {@code ahead} results wait)
   * @param release releases a result that is not emitted (e.g. {@code Batch::close})
   */
  public static <R> Flux<R> range(long count, IndexedTask<? extends R> task, int parallelism, int ahead,
      Scheduler scheduler, Consumer<? super R> release) {
    Objects.requireNonNull(task, "task");
    Objects.requireNonNull(scheduler, "scheduler");
    Objects.requireNonNull(release, "release");
    if (count < 0 || parallelism <= 0 || ahead <= 0) {
      throw new IllegalArgumentException("count >= 0, parallelism > 0 and ahead > 0 required but they were "
          + count + ", " + parallelism + ", " + ahead);
    }
    Scheduler workers = TrackedScheduler.of(scheduler);
    return Flux.deferContextual(view -> new OrderedStripes<>(count, task, parallelism, ahead, workers, release,
        StageMeter.from(view)));
  }

  /** A stopped task: thrown from a task's output after the stage ended (never seen downstream). */
  private static final class Stopped extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final Stopped INSTANCE = new Stopped();

    private Stopped() {
      super("the stage ended", null, false, false);
    }
  }

  /** The runs of one subscription that hold results not yet emitted. Thread-safe. */
  private static final class Runs<R> {
    private final Consumer<? super R> release;
    private final StageMeter meter; // null: tasks are not timed
    private final Map<Run<R>, Boolean> live = new IdentityHashMap<>();
    /** Current while a task runs: cancelled when the stage ends, it ends a task's wait for pooled memory. */
    private final WaitCancellation waits = new WaitCancellation();
    private boolean terminated;

    Runs(Consumer<? super R> release, StageMeter meter) {
      this.release = release;
      this.meter = meter;
    }

    /** Runs {@code task} on {@code input}, collecting its results into a registered run. */
    <T> Run<R> execute(Task<? super T, R> task, T input) {
      Run<R> run = new Run<>(this);
      synchronized (this) {
        if (terminated) {
          return run; // the stage ended before the task started: nothing to do
        }
        live.put(run, Boolean.TRUE);
      }
      long start = meter != null ? System.nanoTime() : 0L;
      waits.run(() -> {
        try {
          task.run(input, run::add);
        } catch (Stopped stopped) {
          // the stage ended while the task ran: the run released what it had and refuses the rest
        } catch (Throwable e) {
          run.fail(Fatal.signalable(e, null)); // a JVM error too: Reactor would rethrow it on this worker
        }
      });
      if (meter != null) {
        meter.workerTime(System.nanoTime() - start);
      }
      run.finish();
      return run;
    }

    synchronized boolean isTerminated() {
      return terminated;
    }

    synchronized void forget(Run<R> run) {
      live.remove(run);
    }

    void release(R result) {
      release.accept(result);
    }

    /** The stage ended: releases every result not emitted, now and as late tasks deliver them. */
    void terminate() {
      List<Run<R>> left;
      synchronized (this) {
        terminated = true;
        left = new ArrayList<>(live.keySet());
        live.clear();
      }
      waits.cancel();
      left.forEach(Run::releaseRemaining);
    }
  }

  /** The results of one task, emitted in order; what is not emitted is released once. */
  private static final class Run<R> {
    private final Runs<R> owner;
    private final List<R> results = new ArrayList<>();
    private int next;
    private Throwable error;
    private boolean released;

    Run(Runs<R> owner) {
      this.owner = owner;
    }

    void add(R result) {
      Objects.requireNonNull(result, "a task produced a null result");
      boolean stop;
      synchronized (this) {
        stop = released;
        if (!stop) {
          results.add(result);
        }
      }
      if (stop) {
        owner.release(result);
        throw Stopped.INSTANCE;
      }
    }

    /** The task failed: what it produced is released, the error is emitted in its place. */
    void fail(Throwable e) {
      List<R> partial;
      synchronized (this) {
        error = e;
        partial = new ArrayList<>(results.subList(next, results.size()));
        results.clear();
        next = 0;
      }
      partial.forEach(owner::release);
    }

    /** The task returned: a stage that ended meanwhile gets nothing from it. */
    void finish() {
      if (owner.isTerminated()) {
        releaseRemaining();
      }
    }

    Flux<R> flux() {
      return Flux.generate(sink -> {
        R r;
        Throwable e;
        synchronized (this) {
          r = released || next == results.size() ? null : results.get(next);
          if (r != null) {
            results.set(next++, null); // emitted: no longer ours
          }
          e = error;
        }
        if (r != null) {
          sink.next(r);
        } else {
          owner.forget(this);
          if (e != null) {
            sink.error(e);
          } else {
            sink.complete();
          }
        }
      });
    }

    void releaseRemaining() {
      List<R> left;
      synchronized (this) {
        if (released) {
          return;
        }
        released = true;
        left = new ArrayList<>(results.subList(next, results.size()));
        results.clear();
        next = 0;
      }
      owner.forget(this);
      left.forEach(owner::release);
    }
  }
}
