package dev.sluice.operators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.testing.NoLeaks;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(NoLeaks.class)
class CacheTest {
  @TempDir Path dir;

  private static List<String> render(Pipeline<Batch> p, PipelineContext ctx) {
    List<String> out = new ArrayList<>();
    p.flux(ctx).doOnNext(b -> {
      try (b) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < b.size(); i++) {
          Example e = b.copyRow(i);
          sb.append(e.index()).append(':').append(e.tensor("label").getLong(0)).append(':')
              .append(e.tensor("x").getFloat(3)).append(' ');
        }
        out.add(sb.toString());
      }
    }).blockLast();
    return out;
  }

  @Test
  void randomAccessSmoke() {
    RandomAccessDataset<Example> src = Datasets.synthetic(3000, 8, 7);
    CacheMonitor m = new CacheMonitor();
    Pipeline<Example> cached = Pipeline.from(src).cache(CacheSpec.defaults().directory(dir).blockRows(500).monitor(m));
    PipelineContext ctx = PipelineContext.defaults().withSeed(3);
    List<String> plain = render(Pipeline.from(src).shuffle().batch(64), ctx);
    List<String> first = render(cached.shuffle().batch(64), ctx);
    System.out.println("first " + m.lastPass());
    assertEquals(plain, first);
    List<String> second = render(cached.shuffle().batch(64), ctx);
    System.out.println("second " + m.lastPass());
    assertEquals(plain, second);
    assertEquals(0, m.lastPass().misses());
    assertEquals(3000, m.lastPass().hits());
  }

  @Test
  void splitSmoke() {
    MemorySplits src = new MemorySplits(true, 700, 0, 1300, 5);
    CacheMonitor m = new CacheMonitor();
    Pipeline<Example> cached = Pipeline.from(src).cache(CacheSpec.named("mem").directory(dir).blockRows(256).monitor(m));
    List<Long> plain = Pipeline.from(src).flux().map(Example::index).collectList().block();
    List<Long> first = cached.flux().map(Example::index).collectList().block();
    System.out.println("first " + m.lastPass());
    assertEquals(plain, first);
    List<Long> second = cached.flux().map(e -> e.tensor("value").getLong(0)).collectList().block();
    System.out.println("second " + m.lastPass());
    assertEquals(plain, second);
    assertEquals(0, m.lastPass().misses());
    assertTrue(m.lastPass().hits() > 0);
  }
}
