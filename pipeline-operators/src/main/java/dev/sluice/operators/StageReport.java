package dev.sluice.operators;

import dev.sluice.core.internal.metrics.StageMeter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * What the stages of a pipeline measured, read back from the registry of its
 * {@link dev.sluice.core.Options#metrics() options}: one
 * {@link Row} per stage and the pass's consumer, and one line naming the bottleneck, derived from
 * the measured waits (docs/metrics.md):
 *
 * <ul>
 *   <li><b>input-bound</b> when the consumer waited for the pipeline at least half of the time: the
 *       stage named is the one that was busy longest (its time neither waiting for its upstream nor
 *       for its downstream), e.g. {@code input-bound: parquet decode (stage 3), 71% of wall time};
 *       a {@code prefetch}, which only hands elements to another thread, is left out of that
 *       choice ({@link Row#isHandOff()}) unless it is the only stage;
 *   <li><b>consumer-bound</b> otherwise, with the share of the pipeline's time its last stage
 *       waited for the consumer's demand: {@code consumer-bound: 93% of producer time waiting for
 *       demand}.
 * </ul>
 *
 * <p>The figures add up over every pass the registry saw for the pipeline's name; read a fresh
 * registry (or one pipeline name per run) for one run's picture.
 *
 * <pre>{@code
 * SimpleMeterRegistry registry = new SimpleMeterRegistry();
 * Pipeline<Batch> p = pipeline.withOptions(pipeline.options().toBuilder().metrics(registry).name("train").build());
 * p.flux(ctx).doOnNext(Batch::close).blockLast();
 * StageReport report = StageReport.of(registry, "train");
 * System.out.println(report.table());
 * System.out.println(report.bottleneck());
 * }</pre>
 */
public final class StageReport {
  /** The operator of the stage that hands elements to another thread. */
  private static final String HAND_OFF = "prefetch";

  private final List<Row> rows;

  private StageReport(List<Row> rows) {
    this.rows = List.copyOf(rows);
  }

  /**
   * What one stage measured (times summed over passes, in seconds).
   *
   * @param stage position in execution order: 0 the source, the consumer one past the last stage
   * @param operator the operator ({@code "map"}, {@code "npy gather"}, {@code "consumer"})
   * @param elements elements emitted
   * @param bytes bytes of the batches (and materialized examples) emitted
   * @param active seconds the stage's output was subscribed
   * @param waitUpstream seconds the stage waited for its upstream (0 for the source)
   * @param waitDownstream seconds the stage waited for downstream demand
   * @param bufferMean mean sampled fill of the stage's buffer, or NaN when it has none
   * @param bufferCapacity capacity of the stage's buffer, or NaN when it has none
   * @param workers tasks the stage runs at once, or 0 when it runs none
   * @param workersBusy seconds its workers spent on tasks
   * @param decodes split row ranges decoded
   * @param decodeSeconds seconds spent decoding them
   * @param counters the stage's own counters ({@code "cache.hits"} ...), by name
   */
  public record Row(int stage, String operator, long elements, long bytes, double active, double waitUpstream,
      double waitDownstream, double bufferMean, double bufferCapacity, int workers, double workersBusy, long decodes,
      double decodeSeconds, Map<String, Double> counters) {
    /** Seconds the stage was neither waiting for its upstream nor for its downstream. */
    public double busy() {
      return Math.max(0, active - waitUpstream - waitDownstream);
    }

    /**
     * Whether this stage only hands elements from one thread to another ({@code prefetch}): it does
     * no work on them, and the busy time measured at its output is the time its thread spends
     * running the upstream's synchronous work and handing each element on, which the sampling
     * splits between it and its upstream differently from run to run. It is named as the
     * bottleneck only when no other stage was measured.
     */
    public boolean isHandOff() {
      return operator.equals(HAND_OFF);
    }

    /** Whether this row is the pass's consumer rather than a stage. */
    public boolean isConsumer() {
      return operator.equals(StageMeter.CONSUMER);
    }

    /** Busy time of the workers over the time they could have worked, or NaN without workers. */
    public double workerUtilisation() {
      return workers == 0 || active <= 0 ? Double.NaN : Math.min(1, workersBusy / (workers * active));
    }
  }

  /** The stages of {@code pipeline} (the pipeline's {@code Options.name}) in {@code registry}. */
  public static StageReport of(MeterRegistry registry, String pipeline) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(pipeline, "pipeline");
    Map<Integer, Map<String, Acc>> stages = new TreeMap<>();
    for (Meter m : registry.getMeters()) {
      Meter.Id id = m.getId();
      if (!id.getName().startsWith(StageMeter.PREFIX) || !pipeline.equals(id.getTag("pipeline"))) {
        continue;
      }
      int stage = Integer.parseInt(id.getTag("stage"));
      Acc a = stages.computeIfAbsent(stage, k -> new LinkedHashMap<>())
          .computeIfAbsent(id.getTag("operator"), k -> new Acc());
      a.add(id.getName(), m);
    }
    List<Row> rows = new ArrayList<>();
    stages.forEach((stage, byOperator) -> byOperator.forEach((operator, a) -> rows.add(a.row(stage, operator))));
    rows.sort(Comparator.comparingInt(Row::stage));
    return new StageReport(rows);
  }

  /** One row per measured stage, in execution order, the consumer last. */
  public List<Row> rows() {
    return rows;
  }

  /**
   * The line naming the bottleneck: {@code input-bound: <operator> (stage N), P% of wall time; the
   * consumer waited W% of it} or {@code consumer-bound: P% of producer time waiting for demand}, or
   * a line saying nothing was measured.
   */
  public String bottleneck() {
    Row consumer = rows.stream().filter(Row::isConsumer).reduce((a, b) -> b).orElse(null);
    Row out = rows.stream().filter(r -> !r.isConsumer()).reduce((a, b) -> b).orElse(null);
    if (consumer == null || out == null || consumer.active() <= 0) {
      return "no stage was measured: give the pipeline a metrics registry (Options.metrics)";
    }
    double wall = consumer.active();
    double consumerWaited = consumer.waitUpstream() / wall;
    if (consumerWaited >= 0.5) {
      Row slowest = rows.stream().filter(r -> !r.isConsumer() && !r.isHandOff()).max(Comparator.comparingDouble(Row::busy))
          .orElseGet(() -> rows.stream().filter(r -> !r.isConsumer()).max(Comparator.comparingDouble(Row::busy))
              .orElseThrow());
      return String.format(Locale.ROOT, "input-bound: %s (stage %d), %d%% of wall time; the consumer waited %d%% of it",
          slowest.operator(), slowest.stage(), percent(slowest.busy() / wall), percent(consumerWaited));
    }
    double producerWaited = out.active() <= 0 ? 0 : out.waitDownstream() / out.active();
    return String.format(Locale.ROOT, "consumer-bound: %d%% of producer time waiting for demand", percent(producerWaited));
  }

  /**
   * The rows as a table: stage, operator, elements, MB, and the shares of each stage's time it was
   * busy, waited for upstream and for downstream; buffer fill (mean / capacity), worker utilisation
   * and split decodes where the stage has them; the stage's own counters last.
   */
  public String table() {
    StringBuilder t = new StringBuilder(String.format(Locale.ROOT, "%5s  %-22s %12s %10s %6s %8s %8s  %s%n",
        "stage", "operator", "elements", "MB", "busy", "wait up", "wait dn", "notes"));
    for (Row r : rows) {
      double a = r.active() <= 0 ? Double.NaN : r.active();
      List<String> notes = new ArrayList<>();
      if (!Double.isNaN(r.bufferCapacity())) {
        notes.add(String.format(Locale.ROOT, "buffer %.1f / %.0f", r.bufferMean(), r.bufferCapacity()));
      }
      if (r.workers() > 0) {
        notes.add(String.format(Locale.ROOT, "%d workers %d%% busy", r.workers(), percent(r.workerUtilisation())));
      }
      if (r.decodes() > 0) {
        notes.add(String.format(Locale.ROOT, "%d decodes, %.2f ms each", r.decodes(), r.decodeSeconds() * 1e3 / r.decodes()));
      }
      r.counters().forEach((name, value) -> notes.add(String.format(Locale.ROOT, "%s %.0f", name, value)));
      t.append(String.format(Locale.ROOT, "%5d  %-22s %12s %10s %6s %8s %8s  %s", r.stage(), r.operator(),
          r.isConsumer() ? "" : Long.toString(r.elements()), r.isConsumer() ? "" : String.format(Locale.ROOT, "%.1f", r.bytes() / 1e6),
          pct(r.busy() / a), pct(r.waitUpstream() / a), r.isConsumer() ? "-" : pct(r.waitDownstream() / a),
          String.join(", ", notes)).stripTrailing()).append(System.lineSeparator());
    }
    return t.toString();
  }

  private static int percent(double share) {
    return Double.isNaN(share) ? 0 : (int) Math.round(100 * Math.max(0, Math.min(1, share)));
  }

  private static String pct(double share) {
    return Double.isNaN(share) ? "-" : percent(share) + "%";
  }

  /** The meters of one stage, added up. */
  private static final class Acc {
    long elements;
    long bytes;
    double active;
    double waitUpstream;
    double waitDownstream;
    double bufferMean = Double.NaN;
    double bufferCapacity = Double.NaN;
    int workers;
    double workersBusy;
    long decodes;
    double decodeSeconds;
    final Map<String, Double> counters = new TreeMap<>();

    void add(String name, Meter m) {
      switch (name) {
        case StageMeter.ELEMENTS -> elements += (long) ((Counter) m).count();
        case StageMeter.BYTES -> bytes += (long) ((Counter) m).count();
        case StageMeter.ACTIVE -> active += ((Counter) m).count();
        case StageMeter.WAIT_UPSTREAM -> waitUpstream += ((Counter) m).count();
        case StageMeter.WAIT_DOWNSTREAM -> waitDownstream += ((Counter) m).count();
        case StageMeter.BUFFER_FILL -> bufferMean = ((DistributionSummary) m).mean();
        case StageMeter.BUFFER_CAPACITY -> bufferCapacity = ((Gauge) m).value();
        case StageMeter.WORKERS -> workers = (int) ((Gauge) m).value();
        case StageMeter.WORKERS_BUSY -> workersBusy += ((Counter) m).count();
        case StageMeter.DECODE -> {
          decodes += ((Timer) m).count();
          decodeSeconds += ((Timer) m).totalTime(TimeUnit.SECONDS);
        }
        case StageMeter.DECODE_ROWS -> { } // the rows are the stage's elements' business
        default -> {
          if (m instanceof Counter c) {
            String source = m.getId().getTag("source"); // a mix's count per source
            counters.merge(name.substring(StageMeter.PREFIX.length()) + (source == null ? "" : "[" + source + "]"),
                c.count(), Double::sum);
          }
        }
      }
    }

    Row row(int stage, String operator) {
      return new Row(stage, operator, elements, bytes, active, waitUpstream, waitDownstream, bufferMean,
          bufferCapacity, workers, workersBusy, decodes, decodeSeconds, Map.copyOf(counters));
    }
  }
}
