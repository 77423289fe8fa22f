package dev.sluice.core.internal.metrics;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * Where one stage's output spent an interval of a pass (at most about {@value PassMetrics#FLUSH_MILLIS} ms, the
 * event's duration): the elements and bytes it emitted, how long it waited for demand (its downstream had not
 * asked, or was still handling the previous element) and how long its downstream waited for it.
 */
@Name(StageWaitsEvent.NAME)
@Label("Sluice Stage Waits")
@Category("Sluice")
@Description("Elements a pipeline stage emitted over an interval, the time it waited for downstream demand and the "
    + "time its downstream waited for it")
@StackTrace(false)
final class StageWaitsEvent extends Event {
  static final String NAME = "sluice.StageWaits";

  @Label("Pipeline")
  String pipeline;

  @Label("Stage")
  @Description("Position of the stage in execution order; 0 is the source")
  int stage;

  @Label("Operator")
  String operator;

  @Label("Elements")
  long elements;

  @Label("Bytes")
  @DataAmount
  long bytes;

  @Label("Waiting for Demand")
  @Description("Time the stage had nothing asked of it, or waited for its downstream to handle the last element")
  @Timespan
  long waitingForDemand;

  @Label("Downstream Waiting")
  @Description("Time the stage's downstream had asked for an element and waited for it")
  @Timespan
  long downstreamWaiting;
}
