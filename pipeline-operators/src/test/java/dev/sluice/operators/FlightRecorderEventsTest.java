package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.testing.NoLeaks;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The flight-recorder events of a pipeline without a metrics registry, read back from a recording
 * file with {@link RecordingFile}: stage waits per stage, a split decode per row range, a hand-off
 * per batch to the consumer.
 */
@ExtendWith(NoLeaks.class)
class FlightRecorderEventsTest {

  @Test
  void aRecordingShowsStageWaitsSplitDecodesAndBatchHandOffs(@TempDir Path dir) throws IOException {
    long[] sizes = {40, 0, 25, 35};
    long rowsInSource = 100;
    MemoryBatchSplits source = new MemoryBatchSplits(sizes);
    AtomicLong batches = new AtomicLong();
    AtomicLong rows = new AtomicLong();
    Path file = dir.resolve("pipeline.jfr");
    try (Recording recording = new Recording()) {
      for (String name : List.of("sluice.StageWaits", "sluice.SplitDecode", "sluice.BatchHandOff")) {
        recording.enable(name).withThreshold(Duration.ZERO);
      }
      recording.start();
      Pipeline.from(source).batch(8).map(b -> b).prefetch(2).flux().doOnNext(b -> {
        try (b) {
          batches.incrementAndGet();
          rows.addAndGet(b.size());
        }
      }).blockLast();
      recording.stop();
      recording.dump(file);
    }
    assertEquals(rowsInSource, rows.get());

    List<RecordedEvent> events = RecordingFile.readAllEvents(file);
    Map<String, List<RecordedEvent>> byType = events.stream()
        .filter(e -> e.getEventType().getName().startsWith("sluice."))
        .collect(Collectors.groupingBy(e -> e.getEventType().getName()));

    // stage waits: every stage's elements add up to what it emitted
    Map<Integer, Long> elements = new TreeMap<>();
    for (RecordedEvent e : byType.get("sluice.StageWaits")) {
      assertEquals("pipeline", e.getString("pipeline"));
      elements.merge(e.getInt("stage"), e.getLong("elements"), Long::sum);
      assertTrue(e.getDuration("waitingForDemand").toNanos() >= 0 && e.getDuration("downstreamWaiting").toNanos() >= 0);
    }
    assertEquals(Map.of(1, batches.get(), 2, batches.get(), 3, batches.get()), elements);
    Set<String> operators = byType.get("sluice.StageWaits").stream().map(e -> e.getString("operator"))
        .collect(Collectors.toSet());
    assertEquals(Set.of("source decode", "map", "prefetch"), operators);

    // a decode per non-empty split, covering every row once
    List<RecordedEvent> decodes = byType.get("sluice.SplitDecode");
    assertEquals(Set.of("s0", "s2", "s3"), decodes.stream().map(e -> e.getString("split")).collect(Collectors.toSet()));
    assertEquals(rowsInSource, decodes.stream().mapToLong(e -> e.getLong("rows")).sum());
    for (RecordedEvent e : decodes) {
      assertFalse(e.getDuration("decodeTime").isNegative());
      assertTrue(e.getDuration("decodeTime").compareTo(e.getDuration()) <= 0, e.toString());
    }

    // a hand-off per batch the consumer received
    List<RecordedEvent> handOffs = byType.get("sluice.BatchHandOff");
    assertEquals(batches.get(), handOffs.size());
    assertEquals(rowsInSource, handOffs.stream().mapToLong(e -> e.getLong("rows")).sum());
    assertTrue(handOffs.stream().allMatch(e -> e.getInt("stage") == 3 && e.getString("operator").equals("prefetch")));
  }

  @Test
  void aRecordingThatDisablesTheEventsGetsNone(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("other.jfr");
    try (Recording recording = new Recording()) {
      // the events are on in any recording that does not say otherwise (as jcmd JFR.start's)
      for (String name : List.of("sluice.StageWaits", "sluice.SplitDecode", "sluice.BatchHandOff")) {
        recording.disable(name);
      }
      recording.start();
      Pipeline.from(Datasets.range(1_000)).batch(10).flux().doOnNext(Batch::close).blockLast();
      recording.stop();
      recording.dump(file);
    }
    assertTrue(RecordingFile.readAllEvents(file).stream().noneMatch(e -> e.getEventType().getName().startsWith("sluice.")));
  }
}
