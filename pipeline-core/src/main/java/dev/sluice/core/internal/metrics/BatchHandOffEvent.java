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
 * A batch handed by a pipeline to its consumer: the event spans the time from the previous hand-off
 * (the consumer returned from it) to this one; {@code consumerWait} is the part of it the consumer
 * had asked for the batch and waited.
 */
@Name(BatchHandOffEvent.NAME)
@Label("Sluice Batch Hand-off")
@Category("Sluice")
@Description("A batch handed by a pipeline to its consumer, with the time the consumer waited for it")
@StackTrace(false)
final class BatchHandOffEvent extends Event {
  static final String NAME = "sluice.BatchHandOff";

  @Label("Pipeline")
  String pipeline;

  @Label("Stage")
  int stage;

  @Label("Operator")
  String operator;

  @Label("Rows")
  long rows;

  @Label("Bytes")
  @DataAmount
  long bytes;

  @Label("Consumer Wait")
  @Description("Time the consumer had asked for the batch and waited for it")
  @Timespan
  long consumerWait;
}
