package dev.sluice.core.internal.metrics;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * One row range of a split decoded by a source (a Parquet row group or part of one): the event spans
 * the range's read, from subscription to its last batch; {@code decodeTime} is the part of it the
 * source spent producing batches (the rest its consumer spent with them).
 */
@Name(SplitDecodeEvent.NAME)
@Label("Sluice Split Decode")
@Category("Sluice")
@Description("A row range of a split (file, row group) decoded into batches")
@StackTrace(false)
final class SplitDecodeEvent extends Event {
  static final String NAME = "sluice.SplitDecode";

  @Label("Pipeline")
  String pipeline;

  @Label("Stage")
  int stage;

  @Label("Operator")
  String operator;

  @Label("Split")
  String split;

  @Label("From Row")
  long fromRow;

  @Label("Rows")
  long rows;

  @Label("Decode Time")
  @Description("Time the source spent producing the range's batches")
  @Timespan
  long decodeTime;
}
