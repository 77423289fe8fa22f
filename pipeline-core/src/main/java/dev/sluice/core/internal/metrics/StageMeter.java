package dev.sluice.core.internal.metrics;

import dev.sluice.core.spi.StageCounters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;
import reactor.util.context.ContextView;

/**
 * The meters of one stage in one pass: what its probe ({@link FluxStageProbe}) measured at the
 * stage's output, and what the stage's own operators report (buffer fill, worker time, split
 * decodes, counters). Names and units are in docs/metrics.md; every meter carries the tags
 * {@code pipeline}, {@code stage} (the position) and {@code operator}.
 *
 * <p>The operators of a stage find it in the Reactor context of their subscription under
 * {@link #KEY} ({@link #from}): the stage's probe puts it there for everything upstream of it, up to
 * the previous probe. Thread-safe.
 */
public final class StageMeter implements StageCounters {
  /**
   * Key of the current stage's meter in a Reactor context: the key {@link StageCounters#of} reads,
   * since a meter is the stage's counters.
   */
  public static final Class<StageCounters> KEY = StageCounters.class;
  /** The operator name of a pass's consumer, measured as a stage after the last one. */
  public static final String CONSUMER = "consumer";

  /** Prefix of every stage meter. */
  public static final String PREFIX = "sluice.stage.";
  /** Elements the stage emitted. */
  public static final String ELEMENTS = PREFIX + "elements";
  /** Bytes of the batches (and materialized examples) the stage emitted. */
  public static final String BYTES = PREFIX + "bytes";
  /** Seconds the stage's output was subscribed (summed over passes). */
  public static final String ACTIVE = PREFIX + "active";
  /** Seconds the stage waited for its upstream: it had asked for an element and none had come. */
  public static final String WAIT_UPSTREAM = PREFIX + "wait.upstream";
  /** Seconds the stage waited for downstream demand (or for its downstream to handle the last element). */
  public static final String WAIT_DOWNSTREAM = PREFIX + "wait.downstream";
  /** Elements (rows, for a window shuffle) held in the stage's buffer, sampled. */
  public static final String BUFFER_FILL = PREFIX + "buffer.fill";
  /** The capacity of the stage's buffer, in the unit of its fill. */
  public static final String BUFFER_CAPACITY = PREFIX + "buffer.capacity";
  /** Seconds the stage's workers spent on tasks (chunks mapped, batches gathered, ranges decoded). */
  public static final String WORKERS_BUSY = PREFIX + "workers.busy";
  /** The number of tasks the stage runs at once. */
  public static final String WORKERS = PREFIX + "workers";
  /** Time to decode each row range of a split. */
  public static final String DECODE = PREFIX + "decode";
  /** Rows decoded from splits. */
  public static final String DECODE_ROWS = PREFIX + "decode.rows";

  private final PassMetrics pass;
  private final int position;
  private final String operator;
  private final Tags tags;
  private final MeterRegistry registry;
  private volatile IntSupplier buffer;
  private volatile DistributionSummary bufferFill;
  private final LongAdder workerNanos = new LongAdder();
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();

  StageMeter(PassMetrics pass, int position, String operator) {
    this.pass = pass;
    this.position = position;
    this.operator = operator;
    this.registry = pass.registry();
    this.tags = Tags.of("pipeline", pass.pipeline(), "stage", Integer.toString(position), "operator", operator);
  }

  /** The meter of the stage whose operators see {@code context}, or null when the pass measures nothing. */
  public static StageMeter from(ContextView context) {
    Object found = context.getOrDefault(KEY, null);
    return found instanceof StageMeter meter ? meter : null;
  }

  /** The pass this stage belongs to. */
  PassMetrics pass() {
    return pass;
  }

  /** Position of the stage in execution order (0: the source). */
  public int position() {
    return position;
  }

  /** The operator's name ({@code batch}, {@code map}, {@code parquet decode}, ...). */
  public String operator() {
    return operator;
  }

  /**
   * The stage holds a buffer of {@code capacity} whose current fill {@code fill} tells (read from
   * the probe's thread, so it may be a little stale); its probe samples it.
   */
  public void buffer(IntSupplier fill, int capacity) {
    Objects.requireNonNull(fill, "fill");
    if (registry != null) {
      bufferFill = DistributionSummary.builder(BUFFER_FILL).baseUnit("elements").tags(tags).register(registry);
      gauge(BUFFER_CAPACITY, "elements", capacity);
    }
    buffer = fill;
  }

  /** The stage runs up to {@code parallelism} tasks at once; their time goes to {@link #workerTime}. */
  public void workers(int parallelism) {
    if (registry != null) {
      gauge(WORKERS, null, parallelism);
    }
  }

  /**
   * Registers the constant gauge {@code name} of this stage unless the registry has it already (an
   * earlier pass of the pipeline registered it: Micrometer would warn about a second registration).
   */
  private void gauge(String name, String baseUnit, int value) {
    if (registry.find(name).tags(tags).gauge() == null) {
      Gauge.builder(name, () -> value).baseUnit(baseUnit).tags(tags).strongReference(true).register(registry);
    }
  }

  /** A task of the stage (a chunk mapped, a run gathered, a range decoded) took {@code nanos}. */
  public void workerTime(long nanos) {
    workerNanos.add(nanos);
  }

  /** Whether a clock should be read around the stage's tasks: only when {@link #workerTime} is recorded. */
  public boolean recordsWork() {
    return registry != null;
  }

  /** Whether split decodes are measured (a registry or a recording listens). */
  public boolean recordsDecodes() {
    return registry != null || pass.decodeEvents();
  }

  @Override
  public void add(String name, long amount) {
    if (registry == null || amount == 0) {
      return;
    }
    counters.computeIfAbsent(name, n -> Counter.builder(PREFIX + n).tags(tags).register(registry)).increment(amount);
  }

  @Override
  public void add(String name, String tagKey, String tagValue, long amount) {
    if (registry == null || amount == 0) {
      return;
    }
    counters.computeIfAbsent(name + '\u0000' + tagKey + '\u0000' + tagValue,
        n -> Counter.builder(PREFIX + name).tags(tags.and(tagKey, tagValue)).register(registry)).increment(amount);
  }

  @Override
  public boolean isRecording() {
    return registry != null;
  }

  /** Samples the buffer's fill (called by the probe at its sampled elements). */
  void sampleBuffer() {
    DistributionSummary summary = bufferFill;
    IntSupplier fill = buffer;
    if (summary != null && fill != null) {
      summary.record(Math.max(0, fill.getAsInt()));
    }
  }

  /**
   * What the probe measured over an interval: the stage emitted {@code elements} ({@code bytes}),
   * its output was subscribed {@code activeNanos}, of which it waited {@code demandWaitNanos} for
   * demand; its downstream ({@code next}) waited {@code downstreamWaitNanos} for it.
   */
  void record(long activeNanos, long demandWaitNanos, long downstreamWaitNanos, long elements, long bytes,
      StageMeter next) {
    long work = workerNanos.sumThenReset();
    if (registry == null) {
      return;
    }
    Counter.builder(ELEMENTS).baseUnit("elements").tags(tags).register(registry).increment(elements);
    if (bytes > 0) {
      Counter.builder(BYTES).baseUnit("bytes").tags(tags).register(registry).increment(bytes);
    }
    seconds(ACTIVE, activeNanos);
    seconds(WAIT_DOWNSTREAM, demandWaitNanos);
    if (work > 0) {
      seconds(WORKERS_BUSY, work);
    }
    next.waitedUpstream(downstreamWaitNanos, next.operator.equals(CONSUMER) ? activeNanos : 0);
  }

  /** The stage waited {@code nanos} for its upstream; a consumer also counts its active time. */
  private void waitedUpstream(long nanos, long consumerActiveNanos) {
    seconds(WAIT_UPSTREAM, nanos);
    if (consumerActiveNanos > 0) {
      seconds(ACTIVE, consumerActiveNanos);
    }
  }

  private void seconds(String name, long nanos) {
    Counter.builder(name).baseUnit("seconds").tags(tags).register(registry).increment(nanos / 1e9);
  }

  /** A begun flight-recorder event for the stage's next interval, or null when not recorded. */
  StageWaitsEvent beginWaits() {
    if (!pass.stageEvents()) {
      return null;
    }
    StageWaitsEvent e = new StageWaitsEvent();
    e.begin();
    return e;
  }

  /** Commits {@code e} with what the interval measured. */
  void commitWaits(StageWaitsEvent e, long elements, long bytes, long demandWaitNanos, long downstreamWaitNanos) {
    e.pipeline = pass.pipeline();
    e.stage = position;
    e.operator = operator;
    e.elements = elements;
    e.bytes = bytes;
    e.waitingForDemand = demandWaitNanos;
    e.downstreamWaiting = downstreamWaitNanos;
    e.commit();
  }

  /** A begun hand-off event for the next batch to the consumer, or null when not recorded. */
  BatchHandOffEvent beginHandOff() {
    if (!pass.handOffEvents()) {
      return null;
    }
    BatchHandOffEvent e = new BatchHandOffEvent();
    e.begin();
    return e;
  }

  /** Commits a hand-off of a batch of {@code rows} rows. */
  void commitHandOff(BatchHandOffEvent e, long rows, long bytes, long consumerWaitNanos) {
    e.pipeline = pass.pipeline();
    e.stage = position;
    e.operator = operator;
    e.rows = rows;
    e.bytes = bytes;
    e.consumerWait = consumerWaitNanos;
    e.commit();
  }

  /** A begun split-decode event, or null when not recorded. */
  SplitDecodeEvent beginDecode() {
    if (!pass.decodeEvents()) {
      return null;
    }
    SplitDecodeEvent e = new SplitDecodeEvent();
    e.begin();
    return e;
  }

  /** A row range of {@code split} from {@code fromRow}, {@code rows} rows, took {@code nanos} to decode. */
  void decoded(SplitDecodeEvent e, String split, long fromRow, long rows, long nanos) {
    if (registry != null) {
      Timer.builder(DECODE).tags(tags).register(registry).record(nanos, TimeUnit.NANOSECONDS);
      Counter.builder(DECODE_ROWS).baseUnit("rows").tags(tags).register(registry).increment(rows);
    }
    if (e != null) {
      e.pipeline = pass.pipeline();
      e.stage = position;
      e.operator = operator;
      e.split = split;
      e.fromRow = fromRow;
      e.rows = rows;
      e.decodeTime = nanos;
      e.commit();
    }
  }

  @Override
  public String toString() {
    return "stage " + position + " (" + operator + ") of " + pass.pipeline();
  }
}
