package dev.sluice.io.parquet.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Options;
import dev.sluice.core.Split;
import dev.sluice.core.spi.BudgetRequests;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.parquet.Parquet;
import dev.sluice.io.parquet.ParquetDataset;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.nio.file.Path;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code Options.pageCacheBytes}: while a pipeline's pass runs, the Parquet page cache keeps pages
 * within that budget; once no pipeline asks, the default budget applies again.
 */
@ExtendWith(NoLeaks.class)
class PageCacheOptionTest {
  private static final int PAGES = 32;
  private static final int PAGE_ROWS = 512;
  private static final int ROWS = PAGES * PAGE_ROWS;
  private static final int BLOCK = 200; // blocks cut nearly every page

  @TempDir
  Path dir;

  private Path write() throws IOException {
    MessageType schema = MessageTypeParser.parseMessageType("message m { required int64 x; }");
    Path f = dir.resolve("pages.parquet");
    SimpleGroupFactory groups = new SimpleGroupFactory(schema);
    try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new LocalOutputFile(f))
        .withConf(new PlainParquetConfiguration())
        .withType(schema)
        .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
        .withCompressionCodec(CompressionCodecName.UNCOMPRESSED)
        .withDictionaryEncoding(false)
        .withRowGroupRowCountLimit(ROWS)
        .withPageRowCountLimit(PAGE_ROWS)
        .build()) {
      for (int r = 0; r < ROWS; r++) {
        w.write(groups.newGroup().append("x", r * 3L + 1));
      }
    }
    return f;
  }

  /**
   * The pages and bytes the shared page cache holds after reading {@code f} in blocks, from an empty
   * cache, during a pass of {@code options}.
   */
  private static long[] keptAfterBlockReads(Path f, Options options) {
    PageCache.shared().clear(); // the pages other tests' datasets left
    try (ParquetDataset ds = Parquet.open(f)) {
      Split s = ds.splits().get(0);
      assertEquals(ROWS, s.rowCount());
      long[] kept = new long[2];
      Pipeline.from(ds).withOptions(options).batch(ROWS).flux().doOnNext(b -> {
        b.close();
        for (long from = 0; from < ROWS; from += BLOCK) {
          long to = Math.min(ROWS, from + BLOCK);
          long rows = 0;
          for (Batch part : ds.readBatches(s, from, to, BLOCK).collectList().block()) {
            try (part) {
              rows += part.size();
            }
          }
          assertEquals(to - from, rows, "rows of block [" + from + ", " + to + ")");
        }
        kept[0] = PageCache.shared().size();
        kept[1] = PageCache.shared().bytes();
      }).blockLast();
      return kept;
    }
  }

  @Test
  void aPipelinesBudgetBoundsThePagesKeptWhileItRuns() throws IOException {
    Path f = write();
    long[] byDefault = keptAfterBlockReads(f, Options.defaults());
    assertThat(byDefault[0]).as("pages kept under the default budget").isGreaterThan(PAGES / 2);

    long smaller = byDefault[1] / 2;
    long[] bySmaller = keptAfterBlockReads(f, Options.builder().pageCacheBytes(smaller).build());
    assertThat(bySmaller[0]).as("pages kept under half the default's weight").isPositive().isLessThan(byDefault[0]);
    assertThat(bySmaller[1]).isLessThanOrEqualTo(smaller);

    long[] byNone = keptAfterBlockReads(f, Options.builder().pageCacheBytes(0).build());
    assertEquals(0, byNone[0], "a budget of 0 keeps no page");

    assertEquals(-1, BudgetRequests.PAGE_CACHE.largest(), "no pipeline asks once none runs");
    assertEquals(PageCache.DEFAULT_BYTES, PageCache.requestedBudget());
  }

  @Test
  void whileTwoPipelinesRunTheLargestBudgetApplies() {
    try (BudgetRequests.Request small = BudgetRequests.PAGE_CACHE.request(10)) {
      assertEquals(10, PageCache.requestedBudget());
      try (BudgetRequests.Request large = BudgetRequests.PAGE_CACHE.request(100)) {
        assertEquals(100, PageCache.requestedBudget());
      }
      assertEquals(10, PageCache.requestedBudget());
    }
    assertEquals(PageCache.DEFAULT_BYTES, PageCache.requestedBudget());
  }
}
