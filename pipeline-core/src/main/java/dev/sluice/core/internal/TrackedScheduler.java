package dev.sluice.core.internal;

import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Function;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.Exceptions;
import reactor.core.Scannable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A scheduler that counts the tasks it is given for the pass that is current when they are
 * scheduled ({@link PassTasks}), so that closing the pass can wait until none of them is queued or
 * running. Every stage of Sluice that runs work on a scheduler (our own operators and Reactor's
 * {@code subscribeOn}, {@code publishOn}, {@code flatMap} alike) is given its scheduler through
 * {@link #of(Scheduler)}.
 *
 * <p>A task belongs to its pass from the moment it is scheduled until it returns, or until it is
 * disposed before it started (directly, or by disposing the worker it was scheduled on); a task
 * disposed before it started does not run, also when the scheduler it was handed to had already
 * picked it up. The task runs with its pass current, so what it schedules belongs to the pass as
 * well. A periodic task belongs to its pass until it is disposed. A task scheduled while no pass is
 * current goes to the decorated scheduler as it is: one thread-local read is the whole cost.
 *
 * <p>Whatever a task of a pass throws, {@link Error}s included, goes to its pass
 * ({@link PassTasks#fail(Throwable)}), whose boundary ends the pass with it as an {@code onError}
 * signal; Reactor would rethrow a JVM error on the worker and the pass's subscriber would wait
 * forever. Only when no boundary of the pass is open does the throwable reach the decorated
 * scheduler's error handling as before.
 * Everything else (time, disposal, workers' lifecycle) is the decorated scheduler's.
 */
public final class TrackedScheduler implements Scheduler, Scannable {
  private final Scheduler delegate;

  private TrackedScheduler(Scheduler delegate) {
    this.delegate = delegate;
  }

  /** {@code scheduler}, counting its tasks for the current pass ({@code scheduler} itself when it does already). */
  public static Scheduler of(Scheduler scheduler) {
    Objects.requireNonNull(scheduler, "scheduler");
    return scheduler instanceof TrackedScheduler ? scheduler : new TrackedScheduler(scheduler);
  }

  /**
   * Disposes {@code worker} from a task scheduled on it, so once the task it runs now has returned,
   * without interrupting that task: disposing a worker of {@code boundedElastic} from another thread
   * interrupts the task it runs, which fails a {@code FileChannel} read under way and closes the
   * channel. A worker disposed already is left as it is, so that a cancel and a terminal signal may
   * both call this; the first disposes the worker.
   */
  public static void disposeWhenIdle(Worker worker) {
    try {
      worker.schedule(worker::dispose);
    } catch (RejectedExecutionException e) {
      // disposed already
    }
  }

  /** True when {@code task} is what a tracked scheduler hands to the scheduler it decorates for a pass's task. */
  public static boolean isPassTask(Runnable task) {
    return task instanceof Task;
  }

  @Override
  public Disposable schedule(Runnable task) {
    return Task.schedule(task, null, false, r -> delegate.schedule(r));
  }

  @Override
  public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
    return Task.schedule(task, null, false, r -> delegate.schedule(r, delay, unit));
  }

  @Override
  public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
    return Task.schedule(task, null, true, r -> delegate.schedulePeriodically(r, initialDelay, period, unit));
  }

  @Override
  public long now(TimeUnit unit) {
    return delegate.now(unit);
  }

  @Override
  public Worker createWorker() {
    return new TrackedWorker(delegate.createWorker());
  }

  @Override
  public void dispose() {
    delegate.dispose();
  }

  @Override
  public Mono<Void> disposeGracefully() {
    return delegate.disposeGracefully();
  }

  @Override
  public boolean isDisposed() {
    return delegate.isDisposed();
  }

  @Override
  public void init() {
    delegate.init();
  }

  @Override
  @SuppressWarnings("deprecation")
  public void start() {
    delegate.start();
  }

  @Override
  public Object scanUnsafe(Attr key) {
    return Scannable.from(delegate).scanUnsafe(key);
  }

  @Override
  public String toString() {
    return "tracked(" + delegate + ")";
  }

  /** A worker of the decorated scheduler; disposing it drops the pass tasks it has not started. */
  static final class TrackedWorker implements Worker, Scannable {
    private final Worker delegate;
    private final Disposable.Composite tasks = Disposables.composite(); // the pass tasks not finished

    TrackedWorker(Worker delegate) {
      this.delegate = delegate;
    }

    @Override
    public Disposable schedule(Runnable task) {
      return Task.schedule(task, tasks, false, r -> delegate.schedule(r));
    }

    @Override
    public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
      return Task.schedule(task, tasks, false, r -> delegate.schedule(r, delay, unit));
    }

    @Override
    public Disposable schedulePeriodically(Runnable task, long initialDelay, long period, TimeUnit unit) {
      return Task.schedule(task, tasks, true, r -> delegate.schedulePeriodically(r, initialDelay, period, unit));
    }

    @Override
    public void dispose() {
      tasks.dispose(); // first: a task the delegate already picked up then finds itself dropped
      delegate.dispose();
    }

    /**
     * True from the start of {@link #dispose()}: a worker that rejects tasks must say it is disposed,
     * or Reactor's operators take the rejection for a failure (a {@code subscribeOn} whose upstream
     * completes while its downstream asks for more would throw out of the downstream's drain).
     */
    @Override
    public boolean isDisposed() {
      return tasks.isDisposed() || delegate.isDisposed();
    }

    @Override
    public Object scanUnsafe(Attr key) {
      return Scannable.from(delegate).scanUnsafe(key);
    }

    @Override
    public String toString() {
      return "tracked(" + delegate + ")";
    }
  }

  /**
   * A task of a pass: counted from {@link #begin} until it returns or is dropped before it starts.
   * The state decides between the two: the first of {@link #run()} and {@link #dispose()} to leave
   * {@code WAITING} wins.
   */
  static final class Task implements Runnable, Disposable {
    static final int WAITING = 0;
    static final int RUNNING = 1;
    static final int RUNNING_DISPOSED = 2; // disposed while running: ends when the run returns
    static final int FINISHED = 3;

    private static final AtomicIntegerFieldUpdater<Task> STATE = AtomicIntegerFieldUpdater.newUpdater(Task.class, "state");

    private final Runnable task;
    private final PassTasks pass;
    private final Disposable.Composite parent; // the worker's tasks, or null
    private final boolean periodic;
    private volatile int state;
    private volatile boolean disposed;
    private volatile Disposable scheduled; // what the decorated scheduler returned

    private Task(Runnable task, PassTasks pass, Disposable.Composite parent, boolean periodic) {
      this.task = task;
      this.pass = pass;
      this.parent = parent;
      this.periodic = periodic;
    }

    /**
     * Hands {@code task} to the decorated scheduler ({@code schedule}): as it is when no pass is
     * current, else wrapped in a task of the current pass, registered with its worker's tasks
     * ({@code parent}, null for a task without a worker).
     */
    static Disposable schedule(Runnable task, Disposable.Composite parent, boolean periodic,
        Function<Runnable, Disposable> schedule) {
      PassTasks pass = PassTasks.current();
      return pass == null ? schedule.apply(task) : begin(task, pass, parent, periodic).handTo(schedule);
    }

    /** A task counted for {@code pass} from now on, registered with its worker's tasks. */
    private static Task begin(Runnable task, PassTasks pass, Disposable.Composite parent, boolean periodic) {
      Objects.requireNonNull(task, "task");
      Task t = new Task(task, pass, parent, periodic);
      pass.begin();
      if (parent != null && !parent.add(t)) { // the worker is disposed (and a Reactor composite disposes t)
        t.rejected();
        throw Exceptions.failWithRejected();
      }
      return t;
    }

    /**
     * Hands this task to the decorated scheduler ({@code schedule}) and returns it as the handle; when
     * the scheduler refuses it, it no longer counts.
     */
    private Disposable handTo(Function<Runnable, Disposable> schedule) {
      Disposable d;
      try {
        d = schedule.apply(this);
      } catch (RuntimeException | Error e) {
        rejected();
        throw e;
      }
      scheduled = d;
      if (disposed) { // disposed meanwhile: the decorated scheduler may drop it now
        d.dispose();
      }
      return this;
    }

    /** The task will never run: it no longer counts. */
    private void rejected() {
      if (STATE.compareAndSet(this, WAITING, FINISHED)) {
        finished();
      }
    }

    @Override
    public void run() {
      if (!STATE.compareAndSet(this, WAITING, RUNNING)) {
        return; // disposed before it started
      }
      PassTasks previous = pass.enter();
      boolean again = false;
      try {
        task.run();
        again = periodic;
      } catch (Throwable e) {
        if (!pass.fail(e)) {
          throw e;
        }
      } finally {
        pass.exit(previous);
        if (!again || !STATE.compareAndSet(this, RUNNING, WAITING)) {
          STATE.set(this, FINISHED);
          finished();
        }
      }
    }

    @Override
    public void dispose() {
      disposed = true;
      for (;;) {
        int s = state;
        if (s == WAITING) {
          if (STATE.compareAndSet(this, WAITING, FINISHED)) {
            finished();
            break;
          }
        } else if (s == RUNNING) {
          if (STATE.compareAndSet(this, RUNNING, RUNNING_DISPOSED)) {
            break;
          }
        } else {
          break;
        }
      }
      Disposable d = scheduled;
      if (d != null) {
        d.dispose();
      }
    }

    @Override
    public boolean isDisposed() {
      return disposed || state == FINISHED;
    }

    private void finished() {
      if (parent != null) {
        parent.remove(this);
      }
      pass.end();
    }

    @Override
    public String toString() {
      return "pass task " + task;
    }
  }
}
