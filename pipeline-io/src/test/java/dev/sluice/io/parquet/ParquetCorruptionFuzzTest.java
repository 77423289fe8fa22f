package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.testing.NoLeaks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged bytes anywhere in the data pages or page indexes: every read, of whole row groups or of
 * parts of them, either completes or fails with a typed error.
 */
@ExtendWith(NoLeaks.class)
class ParquetCorruptionFuzzTest {
  @TempDir
  Path dir;

  @AfterEach
  void quiesce() {
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> MemoryManager.shared().outstandingBytes() == 0);
  }

  @Test
  void damagedPagesNeverEscapeAsUntypedErrorsOrHang() throws Exception {
    Random rnd = new Random(11);
    int trial = 0;
    for (ParquetTestFiles.Config c : new ParquetTestFiles.Config[] {
        new ParquetTestFiles.Config(CompressionCodecName.UNCOMPRESSED, WriterVersion.PARQUET_1_0, true, false, true),
        new ParquetTestFiles.Config(CompressionCodecName.SNAPPY, WriterVersion.PARQUET_2_0, false, true, true),
        new ParquetTestFiles.Config(CompressionCodecName.LZ4, WriterVersion.PARQUET_1_0, false, false, true),
        new ParquetTestFiles.Config(CompressionCodecName.BROTLI, WriterVersion.PARQUET_2_0, true, false, true)}) {
      Path clean = dir.resolve("clean-" + trial + ".parquet");
      ParquetTestFiles.write(clean, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, 200, 100, 50, 5);
      byte[] good = Files.readAllBytes(clean);
      int footerLen = java.nio.ByteBuffer.wrap(good, good.length - 8, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
      int dataEnd = good.length - 8 - footerLen;
      for (int k = 0; k < 20; k++, trial++) {
        byte[] bad = good.clone();
        int at = 4 + rnd.nextInt(dataEnd - 4);
        for (int j = 0; j < 1 + rnd.nextInt(8) && at + j < dataEnd; j++) {
          bad[at + j] = (byte) rnd.nextInt(256);
        }
        Path f = dir.resolve("bad-" + trial + ".parquet");
        Files.write(f, bad);
        ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().decodeParallelism(2).build());
        try {
          ds.batches(37).doOnNext(Batch::close).blockLast(Duration.ofSeconds(60));
        } catch (DatasetException expected) {
          assertTrue(expected.getMessage().contains(f.toString()), expected.getMessage());
        }
        try {
          // as the window shuffle reads: a field at a time, gathered
          ParquetTestFiles.gatherByColumns(ds, 64, true).forEach(Batch::close);
        } catch (DatasetException expected) {
          assertTrue(expected.getMessage().contains(f.toString()), expected.getMessage());
        }
        // parts of row groups: found through the offset index (damaged too, sometimes) or the page headers
        for (dev.sluice.core.Split s : ds.splits()) {
          long n = s.rowCount();
          for (long[] r : new long[][] {{n / 3, 2 * n / 3}, {n - 1, n}}) {
            try {
              ds.readBatches(s, r[0], r[1], 16).doOnNext(Batch::close).blockLast(Duration.ofSeconds(60));
            } catch (DatasetException expected) {
              assertTrue(expected.getMessage().contains(f.toString()), expected.getMessage());
            }
          }
        }
      }
    }
  }
}
