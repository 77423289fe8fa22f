package dev.sluice.examples.cli;

import dev.sluice.operators.Pipeline;
import dev.sluice.operators.StageReport;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;

/**
 * {@code --metrics} of the commands: a registry for one run, the pipeline measured into it under a
 * name, and at the end the per-stage table and the line naming the bottleneck; plus the simulated
 * consumer of {@code --step-ms}.
 */
final class PipelineMetrics {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final String name;

  PipelineMetrics(String name) {
    this.name = name;
  }

  /** {@code p} reporting to this run's registry. */
  <T> Pipeline<T> measure(Pipeline<T> p) {
    return p.withOptions(p.options().toBuilder().metrics(registry).name(name).build());
  }

  /** What the stages measured so far. */
  StageReport report() {
    return StageReport.of(registry, name);
  }

  /** Prints the table, then the bottleneck line. */
  void print(PrintWriter out) {
    StageReport report = report();
    out.print(report.table());
    out.println(report.bottleneck());
  }

  /** Works (without sleeping) for {@code millis} ms: a consumer's training step. */
  static void busyStep(double millis) {
    long nanos = (long) (millis * 1e6);
    long start = System.nanoTime();
    while (System.nanoTime() - start < nanos) {
      Thread.onSpinWait();
    }
  }
}
