package dev.sluice.core;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Batches dropped without close are reported once each and their memory goes back to the pool. */
class LeakDetectionTest {
  private static final Schema SCHEMA = Schema.of(new TensorSpec("x", DType.FLOAT32, Shape.of(16)));

  private final MemoryManager memory = new MemoryManager();
  private final BufferPool pool = memory.pool("test.leaks");
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private final Logger logger = (Logger) LoggerFactory.getLogger(LeakDetection.class);
  private LeakDetection.Level before;

  @BeforeEach
  void capture() {
    before = LeakDetection.level();
    log.start();
    logger.addAppender(log);
    logger.setLevel(Level.WARN);
  }

  @AfterEach
  void restore() {
    logger.detachAppender(log);
    LeakDetection.setLevel(before);
  }

  /** Builds and drops {@code n} batches; returns their names. Nothing here outlives the call. */
  private Set<String> dropBatches(int n) {
    Set<String> names = new java.util.HashSet<>();
    for (int i = 0; i < n; i++) {
      try (BatchBuilder b = BatchBuilder.create(SCHEMA, 8, pool)) {
        b.fixedColumn(0).putFloat(0, i);
        b.commitRange(8L * i, 8);
        Batch batch = b.build();
        names.add(batch.name());
        batch.column("x").values().getFloat(0); // used, never closed
      }
    }
    return names;
  }

  private void collectUntil(java.util.concurrent.Callable<Boolean> condition) {
    Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(() -> {
      System.gc();
      return condition.call();
    });
  }

  /** The leak reports of {@code batches} (other tests' batches may be collected meanwhile). */
  private List<ILoggingEvent> leakReports(Set<String> batches) {
    synchronized (log.list) {
      return log.list.stream()
          .filter(e -> e.getFormattedMessage().startsWith("LEAK: ") && batches.contains(batchOf(e)))
          .collect(Collectors.toList());
    }
  }

  private static String batchOf(ILoggingEvent report) {
    return report.getFormattedMessage().split(" ")[1];
  }

  @Test
  void aHundredDroppedBatchesAreReportedWithWhereTheyWereCreatedAndTheirBytesReturned() {
    LeakDetection.setLevel(LeakDetection.Level.PARANOID);
    long reportedBefore = LeakDetection.leaksReported();
    Set<String> names = dropBatches(100);
    assertThat(memory.outstandingBytes()).isEqualTo(100L * 8 * 16 * 4);

    collectUntil(() -> memory.outstandingBytes() == 0 && leakReports(names).size() >= 100);

    List<ILoggingEvent> reports = leakReports(names);
    assertThat(reports).hasSize(100); // each batch once
    assertThat(reports.stream().map(LeakDetectionTest::batchOf).collect(Collectors.toSet())).isEqualTo(names);
    for (ILoggingEvent e : reports) {
      assertThat(e.getLevel()).isEqualTo(Level.WARN);
      assertThat(e.getFormattedMessage()).contains("was not closed before it became unreachable", "8 rows");
      assertThat(e.getThrowableProxy()).isNotNull();
      assertThat(e.getThrowableProxy().getMessage()).endsWith("was created here");
      assertThat(e.getThrowableProxy().getStackTraceElementProxyArray())
          .anySatisfy(f -> assertThat(f.getSTEAsString()).contains("LeakDetectionTest.dropBatches"));
    }
    assertThat(LeakDetection.leaksReported() - reportedBefore).isGreaterThanOrEqualTo(100);
    // the memory went back to the pool: the next batches reuse it instead of allocating
    long allocated = pool.allocatedBytesTotal();
    dropBatches(1).size();
    assertThat(pool.allocatedBytesTotal()).isEqualTo(allocated);
  }

  @Test
  void unsampledLeaksAreReportedWithoutAStackAndClosedBatchesNever() {
    LeakDetection.setLevel(LeakDetection.Level.SIMPLE);
    for (int i = 0; i < 20; i++) {
      try (BatchBuilder b = BatchBuilder.create(SCHEMA, 8, pool)) {
        b.commitRange(0, 8);
        b.build().close();
      }
    }
    Set<String> names = dropBatches(20);
    collectUntil(() -> memory.outstandingBytes() == 0 && leakReports(names).size() >= 20);
    List<ILoggingEvent> reports = leakReports(names);
    assertThat(reports).hasSize(20);
    assertThat(reports.stream().map(LeakDetectionTest::batchOf).collect(Collectors.toSet())).isEqualTo(names);
    assertThat(reports).anySatisfy(e -> {
      assertThat(e.getThrowableProxy()).isNull();
      assertThat(e.getFormattedMessage()).contains("-Dsluice.leakDetection=paranoid");
    });
  }

  @Test
  void aTensorStillInUseKeepsTheMemoryOfItsDroppedBatch() {
    LeakDetection.setLevel(LeakDetection.Level.PARANOID);
    Tensor kept = keepOneTensor();
    for (int i = 0; i < 5; i++) {
      System.gc();
      assertThat(kept.getFloat(0)).isEqualTo(42f); // never handed to another batch while it is viewed
    }
    assertThat(memory.outstandingBytes()).isPositive();
  }

  private Tensor keepOneTensor() {
    try (BatchBuilder b = BatchBuilder.create(SCHEMA, 8, pool)) {
      b.fixedColumn(0).putFloat(0, 42f);
      b.commitRange(0, 8);
      return b.build().column("x").values();
    }
  }

  @Test
  void disabledDetectionWatchesNothing() {
    LeakDetection.setLevel(LeakDetection.Level.DISABLED);
    try (BatchBuilder b = BatchBuilder.create(SCHEMA, 8, pool)) {
      b.commitRange(0, 8);
      Batch batch = b.build();
      batch.close();
      assertThat(batch.isReleased()).isTrue();
    }
    assertThat(memory.outstandingBytes()).isZero();
  }
}
