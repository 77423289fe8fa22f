package dev.sluice.core;

import dev.sluice.core.internal.PassTasks;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * The elements of one pass as a blocking iterator that cannot leak: what the pipeline produced and
 * did not hand out is closed when the iterator is closed. {@code Pipeline.iterate} returns one.
 *
 * <pre>{@code
 * try (PipelineIterator<Batch> batches = pipeline.iterate(ctx)) {
 *   for (Batch batch : batches) {
 *     try (batch) {
 *       if (step(batch)) {
 *         break;                       // closing the iterator cancels the pass and frees what it held
 *       }
 *     }
 *   }
 * }
 * }</pre>
 *
 * <p><b>Demand.</b> One element is requested when {@link #hasNext()} finds none waiting, so nothing
 * is produced ahead of the consumer beyond what the pipeline's own {@code prefetch} holds. The
 * consumer thread parks while it waits (no spinning).
 *
 * <p><b>Closing.</b> {@link #close()} cancels the pass, closes every element that arrived and was
 * not handed out ({@link AutoCloseable} elements: batches), and closes elements that arrive after
 * it; the pipeline closes the batches its stages hold (prefetch queues, parallel map chunks)
 * through its discard hook. Then it waits until the pass is quiescent: no task of the pass is
 * running or queued on any scheduler, and no call of this iterator into the pass (a {@code request}
 * from {@link #hasNext()} on another thread, which may build a batch on that thread) is under way.
 * A task belongs to the pass when a stage of Sluice scheduled it on behalf of the pass (during this
 * iterator's subscribe, request and cancel calls, or from another task of the pass): the prefetch's
 * producer and consumer, parallel map chunks, parallel gathers, decodes and collations, interleave
 * readers. So when {@code close()} returns, no worker of the pass is still building a batch or
 * decoding, and none will start: what the pass allocated, from any
 * memory manager, has been handed out or given back, and nothing allocates for it afterwards. When
 * the pass was built over a scope of memory ({@link #of(MemoryManager, Function)}, which
 * {@code Pipeline.iterate} uses), {@code close()} then also checks that the scope holds nothing
 * beyond the batches the consumer still holds, and waits for that too. Each wait is bounded: after
 * {@value #CLOSE_WAIT_SECONDS} s in all, {@code close()} logs a warning with what is left and
 * returns. Work a stage runs on a thread or scheduler Sluice did not give it is not waited for;
 * called from a task of the pass itself, {@code close()} cancels and returns without waiting.
 * Closing twice is harmless; {@link #hasNext()} and {@link #next()} after close throw
 * {@link IllegalStateException}. A {@link #stream()} closes the iterator when the stream is closed.
 *
 * <p><b>Errors.</b> A failure of the pass is thrown by {@link #hasNext()} (and {@link #next()})
 * after the elements before it: a {@link RuntimeException} or {@link Error} as it is, a checked
 * exception wrapped (unwrap it with {@code reactor.core.Exceptions.unwrap}).
 *
 * <p><b>State.</b> An iterator a pipeline creates ({@link #tracking}) knows the pipeline's
 * {@link #state()} after every element {@link #next()} returned: resuming from it yields exactly
 * the elements after that one. Elements produced ahead and not handed out are not counted.
 *
 * <p>Not thread-safe for consumption (one consumer thread); {@link #close()} and {@link #state()}
 * may be called from any thread.
 *
 * @param <T> the element type
 */
public final class PipelineIterator<T> implements Iterator<T>, Iterable<T>, AutoCloseable {
  /** How long {@link #close()} waits for the pass to become quiescent and give its memory back. */
  static final long CLOSE_WAIT_SECONDS = 10;

  private static final Logger LOG = LoggerFactory.getLogger(PipelineIterator.class);
  @SuppressWarnings("rawtypes")
  private static final AtomicReferenceFieldUpdater<PipelineIterator, Subscription> UPSTREAM =
      AtomicReferenceFieldUpdater.newUpdater(PipelineIterator.class, Subscription.class, "upstream");

  private final MemoryManager scope; // null: the pass's memory is not accounted for
  private final PassTasks tasks = new PassTasks();
  private final PipelineState start; // null: the elements are not Positioned and state() is unavailable
  private final String stateUnavailable; // why state() is unavailable, or null
  private volatile PipelineState last; // the state after the last element handed out
  // the elements, or with a start state, the Positioned elements
  private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
  private final Receiver receiver = new Receiver();
  private volatile Subscription upstream;
  private volatile boolean done;
  private Throwable error; // written before done
  private volatile boolean closed;
  private volatile Thread waiter;
  private boolean requested; // consumer thread: one element asked for and not yet taken
  private boolean iterated; // iterator() was called
  private boolean errorThrown;

  // what the consumer holds; guarded by handedOut, which also makes taking an element and closing atomic
  private final ArrayDeque<BatchRelease> handedOut = new ArrayDeque<>();
  private int pruneAt = 64;
  private boolean untracked; // an element whose memory cannot be accounted for was handed out

  private PipelineIterator(MemoryManager scope, PipelineState start, String stateUnavailable) {
    this.scope = scope;
    this.start = start;
    this.stateUnavailable = stateUnavailable;
  }

  /**
   * Iterates {@code source}: subscribes to it now and requests one element at a time. {@link #close()}
   * cancels it, closes what arrived and was not handed out, and waits until no task of the pass is
   * queued or running (without a scope, it does not check memory).
   */
  public static <T> PipelineIterator<T> of(Publisher<? extends T> source) {
    Objects.requireNonNull(source, "source");
    PipelineIterator<T> it = new PipelineIterator<>(null, null, null);
    it.subscribe(source);
    return it;
  }

  /**
   * Iterates the pass {@code pass} builds over a scope of {@code memory}: a manager that allocates
   * from {@code memory} and counts what the pass holds, so that {@link #close()} returns once the
   * pass is quiescent and gave everything back except the batches the consumer still holds.
   *
   * @param memory the manager the pass allocates from
   * @param pass builds the pass, allocating through the manager it is given
   */
  public static <T> PipelineIterator<T> of(MemoryManager memory, Function<MemoryManager, ? extends Publisher<? extends T>> pass) {
    return of(memory, pass, null);
  }

  /**
   * {@link #of(MemoryManager, Function)} whose {@link #state()} throws an
   * {@link IllegalStateException} with the message {@code whyNoState}: for a pipeline that cannot be
   * resumed exactly.
   *
   * @param whyNoState why the pass has no state, or null for the generic message
   */
  public static <T> PipelineIterator<T> of(MemoryManager memory, Function<MemoryManager, ? extends Publisher<? extends T>> pass,
      String whyNoState) {
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(pass, "pass");
    MemoryManager scope = memory.newScope("iterate");
    PipelineIterator<T> it = new PipelineIterator<>(scope, null, whyNoState);
    Publisher<? extends T> source = Objects.requireNonNull(pass.apply(scope), "pass returned null");
    it.subscribe(source);
    return it;
  }

  private void subscribe(Publisher<?> source) {
    PassTasks previous = tasks.enterCall();
    try {
      source.subscribe(receiver);
    } finally {
      tasks.exitCall(previous);
    }
  }

  /**
   * {@link #of(MemoryManager, Function)} over a pass that emits each element with the pipeline's
   * state after it: the iterator hands out the elements and keeps the state of the last one for
   * {@link #state()}.
   *
   * @param memory the manager the pass allocates from
   * @param start the state before the first element (the state {@link #state()} returns until then)
   * @param pass builds the pass, allocating through the manager it is given
   */
  public static <T> PipelineIterator<T> tracking(MemoryManager memory, PipelineState start,
      Function<MemoryManager, ? extends Publisher<? extends Positioned<? extends T>>> pass) {
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(start, "start");
    Objects.requireNonNull(pass, "pass");
    MemoryManager scope = memory.newScope("iterate");
    PipelineIterator<T> it = new PipelineIterator<>(scope, start, null);
    Publisher<? extends Positioned<? extends T>> source = Objects.requireNonNull(pass.apply(scope), "pass returned null");
    it.subscribe(source);
    return it;
  }

  /**
   * The pipeline's state after the last element {@link #next()} returned (before the first one: the
   * state the iterator started from; once {@link #hasNext()} returned false: the state of the ended
   * run, {@link PipelineState#isFinished()}). Resuming from it ({@code Pipeline.iterate(state)},
   * {@code Pipeline.resume(state)}) yields exactly the elements after that one.
   *
   * @throws IllegalStateException if the iterator does not track a pipeline's state (it was not
   *     created by a pipeline, or the pipeline cannot be resumed exactly; the message says why)
   */
  public PipelineState state() {
    if (start == null) {
      throw new IllegalStateException(stateUnavailable != null ? stateUnavailable
          : "this iterator does not track a pipeline's state: iterate a Pipeline to get one");
    }
    PipelineState s = last;
    return s != null ? s : start;
  }

  /**
   * True when another element is available, waiting for it if need be.
   *
   * @throws IllegalStateException if the iterator is closed, or the thread was interrupted while it
   *     waited (the iterator is then closed)
   * @throws RuntimeException the failure of the pass, after the elements before it
   */
  @Override
  public boolean hasNext() {
    for (;;) {
      checkNotClosed();
      if (!queue.isEmpty()) {
        return true;
      }
      if (done) {
        if (!queue.isEmpty()) {
          return true;
        }
        Throwable e = error;
        if (e != null) {
          throw rethrow(e);
        }
        if (start != null) {
          PipelineState s = state();
          last = s.at(s.endEpoch(), 0, 0); // the run is over
        }
        return false;
      }
      if (!requested) {
        Subscription s = upstream;
        if (s != null) {
          requested = true;
          PassTasks previous = tasks.enterCall();
          try {
            s.request(1);
          } finally {
            tasks.exitCall(previous);
          }
          continue;
        }
      }
      if (Thread.currentThread().isInterrupted()) {
        close(); // as Reactor's blocking iterable: an interrupted consumer stops the pass (the flag stays set)
        throw new IllegalStateException("interrupted while waiting for the next element; the pipeline iterator is "
            + "closed", new InterruptedException());
      }
      waiter = Thread.currentThread();
      if (queue.isEmpty() && !done && !closed && (requested || upstream == null)) {
        LockSupport.park(this);
      }
      waiter = null;
    }
  }

  /**
   * The next element; the consumer owns it (close a batch when done with it).
   *
   * @throws NoSuchElementException if the pass completed
   * @throws IllegalStateException if the iterator is closed
   */
  @Override
  public T next() {
    for (;;) {
      if (!hasNext()) {
        throw new NoSuchElementException("the pass has no more elements");
      }
      synchronized (handedOut) { // taken and accounted for at once, as close() sees it
        Object o = queue.poll();
        if (o != null) {
          requested = false;
          T t = unwrap(o);
          track(t);
          return t;
        }
      }
      // a concurrent close() took it: hasNext() now says so
    }
  }

  /** This iterator, once: {@code for (Batch b : pipeline.iterate(ctx))} inside try-with-resources. */
  @Override
  public Iterator<T> iterator() {
    if (iterated) {
      throw new IllegalStateException("a PipelineIterator can be iterated once");
    }
    iterated = true;
    return this;
  }

  /** The remaining elements as a sequential stream; closing the stream closes this iterator. */
  public Stream<T> stream() {
    return StreamSupport.stream(Spliterators.spliteratorUnknownSize(this, Spliterator.ORDERED | Spliterator.NONNULL),
        false).onClose(this::close);
  }

  /** True once {@link #close()} was called. */
  public boolean isClosed() {
    return closed;
  }

  /**
   * Cancels the pass, closes the elements that arrived and were not handed out, and waits until no
   * task of the pass is queued or running and its memory is back (see the class description).
   * Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    PassTasks previous = tasks.enterCall();
    try {
      Operators.terminate(UPSTREAM, this);
    } finally {
      tasks.exitCall(previous);
    }
    drainQueue();
    Thread w = waiter;
    if (w != null) {
      LockSupport.unpark(w);
    }
    awaitQuiescence();
  }

  /** The element of {@code o}; with a start state, also remembers the state after it. */
  @SuppressWarnings("unchecked")
  private T unwrap(Object o) {
    if (start == null) {
      return (T) o;
    }
    Positioned<? extends T> p = (Positioned<? extends T>) o;
    last = p.state();
    return p.element();
  }

  private void checkNotClosed() {
    if (closed) {
      throw new IllegalStateException("the pipeline iterator is closed");
    }
  }

  private RuntimeException rethrow(Throwable e) {
    if (!errorThrown) {
      errorThrown = true;
      e.addSuppressed(new Exception("rethrown by PipelineIterator on thread " + Thread.currentThread().getName()));
    }
    if (e instanceof Error err) {
      throw err;
    }
    return e instanceof RuntimeException r ? r : Exceptions.propagate(e);
  }

  private void drainQueue() {
    Object t;
    for (;;) {
      synchronized (handedOut) {
        t = queue.poll();
      }
      if (t == null) {
        return;
      }
      closeQuietly(t);
    }
  }

  static void closeQuietly(Object o) {
    if (o instanceof Positioned<?> p) {
      o = p.element();
    }
    if (o instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("closing {} failed", o, e);
      }
    }
  }

  /** Remembers what the consumer now holds of the pass's memory. */
  private void track(T t) {
    if (scope == null || untracked) {
      return;
    }
    if (t instanceof Batch b) {
      BatchRelease r = b.release();
      if (r.bytesIn(scope) != 0) {
        while (!handedOut.isEmpty() && handedOut.peekFirst().isDone()) {
          handedOut.pollFirst();
        }
        handedOut.addLast(r);
        if (handedOut.size() > pruneAt) {
          handedOut.removeIf(BatchRelease::isDone);
          pruneAt = Math.max(64, 2 * handedOut.size());
        }
      }
    } else if (!(t instanceof Example)) {
      untracked = true; // a user type may hold batches we cannot see: do not wait for the pass
      handedOut.clear();
    }
  }

  /**
   * Waits until no task of the pass is queued or running, and then until the pass holds no memory
   * beyond what the consumer holds; warns and returns when that takes longer than the wait.
   */
  private void awaitQuiescence() {
    if (PassTasks.current() == tasks) {
      return; // closed by a task of the pass itself, which cannot wait for its own end
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(CLOSE_WAIT_SECONDS).toNanos();
    try {
      if (!tasks.awaitIdle(deadline)) {
        LOG.warn("closing a pipeline iterator: after {} s {} tasks or calls of its pass are still under way{}",
            CLOSE_WAIT_SECONDS, tasks.active(), scope == null ? ""
                : " (the pass and its consumer hold " + scope.outstandingBytes() + " bytes, per stage "
                    + scope.outstandingBytesByStage() + ")");
        return;
      }
      if (scope != null && !scope.await(this::passSettled, deadline)) {
        LOG.warn("closing a pipeline iterator: after {} s its pass and consumer still hold {} bytes (per stage: {}), "
            + "{} of them in batches the consumer holds", CLOSE_WAIT_SECONDS, scope.outstandingBytes(),
            scope.outstandingBytesByStage(), heldByConsumer());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private boolean passSettled() {
    long held = heldByConsumer();
    return held < 0 || scope.outstandingBytes() <= held;
  }

  /** Bytes of the scope in batches handed out and still open, or -1 when one of them cannot tell. */
  private long heldByConsumer() {
    synchronized (handedOut) {
      if (untracked) {
        return -1;
      }
      long held = 0;
      for (BatchRelease r : handedOut) {
        long n = r.bytesIn(scope);
        if (n < 0) {
          return -1;
        }
        held += n;
      }
      return held;
    }
  }

  /** The subscriber: hands elements to the consumer, or closes them once the iterator is closed. */
  private final class Receiver implements CoreSubscriber<Object> {
    private final Context context = Operators.enableOnDiscard(Context.empty(), PipelineIterator::closeQuietly);

    @Override
    public Context currentContext() {
      return context;
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (Operators.setOnce(UPSTREAM, PipelineIterator.this, s)) {
        wake();
      }
    }

    @Override
    public void onNext(Object t) {
      if (closed) {
        closeQuietly(t);
        return;
      }
      queue.offer(t);
      if (closed) {
        drainQueue(); // close() may have drained before the offer
      }
      wake();
    }

    @Override
    public void onError(Throwable t) {
      if (closed) {
        return;
      }
      error = t;
      done = true;
      wake();
    }

    @Override
    public void onComplete() {
      done = true;
      wake();
    }

    private void wake() {
      Thread w = waiter;
      if (w != null) {
        LockSupport.unpark(w);
      }
    }
  }
}
