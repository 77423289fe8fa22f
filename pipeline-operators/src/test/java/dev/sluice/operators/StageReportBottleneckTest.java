package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.internal.metrics.StageMeter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * The bottleneck line from recorded stage timings: what the meters of a pass held, stage by stage
 * (seconds active, waiting for upstream, waiting for downstream), written into a registry as the
 * stages write them.
 */
class StageReportBottleneckTest {
  private static void stage(MeterRegistry r, int stage, String operator, double active, double up, double down) {
    String[] tags = {"pipeline", "p", "stage", Integer.toString(stage), "operator", operator};
    Counter.builder(StageMeter.ACTIVE).tags(tags).register(r).increment(active);
    Counter.builder(StageMeter.WAIT_UPSTREAM).tags(tags).register(r).increment(up);
    Counter.builder(StageMeter.WAIT_DOWNSTREAM).tags(tags).register(r).increment(down);
    Counter.builder(StageMeter.ELEMENTS).tags(tags).register(r).increment(100);
  }

  /** gather → prefetch → consumer; the prefetch's split of its time varies from run to run. */
  private static String bottleneck(double prefetchUp, double gatherBusy) {
    MeterRegistry r = new SimpleMeterRegistry();
    stage(r, 2, "parquet decode", 1.0, 0.0, 1.0 - gatherBusy);
    stage(r, 3, "prefetch", 1.0, prefetchUp, 0.01);
    stage(r, 4, StageMeter.CONSUMER, 1.0, 0.96, 0);
    return StageReport.of(r, "p").bottleneck();
  }

  @Test
  void aPrefetchIsNeverNamedWhileAStageThatWorksOnElementsWasMeasured() {
    // recorded shapes of one pass measured six times: the prefetch's wait for its upstream came out
    // anywhere from 18% to 80% of its time, the decode's busy share from 40% to 88%
    double[][] runs = {{0.80, 0.88}, {0.18, 0.88}, {0.49, 0.40}, {0.72, 0.70}, {0.30, 0.55}, {0.60, 0.45}};
    for (double[] run : runs) {
      String line = bottleneck(run[0], run[1]);
      assertTrue(line.startsWith("input-bound: parquet decode (stage 2)"), line);
    }
  }

  @Test
  void aPrefetchAloneIsStillNamed() {
    MeterRegistry r = new SimpleMeterRegistry();
    stage(r, 1, "prefetch", 1.0, 0.1, 0.0);
    stage(r, 2, StageMeter.CONSUMER, 1.0, 0.9, 0);
    assertTrue(StageReport.of(r, "p").bottleneck().startsWith("input-bound: prefetch (stage 1)"));
  }

  @Test
  void aConsumerBoundPassIsUnchanged() {
    MeterRegistry r = new SimpleMeterRegistry();
    stage(r, 2, "npy gather", 1.0, 0.0, 0.8);
    stage(r, 3, "prefetch", 1.0, 0.05, 0.9);
    stage(r, 4, StageMeter.CONSUMER, 1.0, 0.1, 0);
    assertEquals("consumer-bound: 90% of producer time waiting for demand", StageReport.of(r, "p").bottleneck());
  }
}
