package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Split;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnCursor;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.parquet.ParquetTestFiles.Config;
import dev.sluice.io.parquet.internal.ColumnPlan;
import dev.sluice.io.parquet.internal.ParquetFileInfo;
import dev.sluice.io.parquet.internal.WindowedInputFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A row group of one large page per column read as many small blocks in a random order (what a
 * block shuffle does with it): every block delivers exactly the rows of a whole read, and the page
 * is read from the file and decompressed once for all its blocks, not once per block.
 */
@ExtendWith(NoLeaks.class)
class ParquetLargePageBlocksTest {
  private static final int ROWS = 2048;
  private static final int BLOCK = 128;

  @TempDir
  Path dir;

  private static List<Config> configs() {
    return List.of(
        new Config(CompressionCodecName.SNAPPY, WriterVersion.PARQUET_1_0, false, false, true),
        new Config(CompressionCodecName.UNCOMPRESSED, WriterVersion.PARQUET_1_0, true, false, true),
        new Config(CompressionCodecName.ZSTD, WriterVersion.PARQUET_2_0, false, true, true),
        new Config(CompressionCodecName.GZIP, WriterVersion.PARQUET_2_0, true, false, false));
  }

  @Test
  void everyBlockOfALargePageDeliversTheRowsOfAWholeReadAndThePageIsReadOnce() throws Exception {
    long seed = 41;
    for (Config c : configs()) {
      Path f = dir.resolve("large-" + seed + ".parquet");
      ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, ROWS, ROWS, ROWS, seed);
      List<Group> groups = ParquetTestFiles.readGroups(f);
      for (boolean index : new boolean[] {true, false}) {
        String what = c + (index ? " with" : " without") + " offset index";
        AtomicLong read = new AtomicLong();
        ParquetFileInfo info = ParquetFileInfo.open(f.toString(), new Counting(new WindowedInputFile(f), read));
        long chunks = 0;
        for (BlockMetaData b : info.rowGroups()) {
          for (ColumnChunkMetaData m : b.getColumns()) {
            chunks += m.getTotalSize();
            if (!index) {
              m.setOffsetIndexReference(null);
              m.setColumnIndexReference(null);
            }
          }
        }
        try (ParquetDataset ds = new ParquetDataset(List.of(info), ParquetOptions.builder().build())) {
          Split s = ds.splits().get(0);
          assertEquals(ROWS, s.rowCount(), what);
          List<ColumnPlan> plans = ParquetTestFiles.plans(ds, f);
          List<long[]> blocks = new ArrayList<>();
          for (long from = 0; from < ROWS; from += BLOCK) {
            blocks.add(new long[] {from, Math.min(ROWS, from + BLOCK)});
          }
          Collections.shuffle(blocks, new Random(seed));
          read.set(0);
          for (long[] b : blocks) {
            assertBlock(ds, s, b, groups, plans, what);
          }
          long perBlock = read.get();
          // each page's body once; besides, a block looks at a few page headers of each column
          long headers = 3L * 512 * blocks.size() * info.rowGroups().get(0).getColumns().size();
          assertTrue(perBlock < chunks + headers, what + ": " + blocks.size() + " blocks read " + perBlock
              + " bytes of column chunks of " + chunks + " bytes (and headers): each page once");
          // the same blocks at once on several threads, by columns
          Collections.shuffle(blocks, new Random(seed + 1));
          BufferPool pool = MemoryManager.shared().pool("test.large-page");
          List<Integer> delivered = Flux.fromIterable(blocks)
              .flatMap(b -> reactor.core.publisher.Mono.fromCallable(() -> assertColumns(ds, s, b, groups, plans, pool, what))
                  .subscribeOn(Schedulers.parallel()), 4)
              .collectList().block();
          assertEquals(ROWS, delivered.stream().mapToInt(Integer::intValue).sum(), what);
          assertEquals(0, pool.outstandingBytes(), what);
        }
      }
      seed++;
    }
  }

  private static void assertBlock(ParquetDataset ds, Split s, long[] b, List<Group> groups, List<ColumnPlan> plans,
      String what) {
    String range = what + " [" + b[0] + ", " + b[1] + ")";
    List<Batch> batches = ds.readBatches(s, b[0], b[1], 37).collectList().block();
    try {
      assertEquals(b[1], ParquetTestFiles.assertBatchesMatch(batches, groups, (int) b[0], plans, range), range);
    } finally {
      batches.forEach(Batch::close);
    }
  }

  private static int assertColumns(ParquetDataset ds, Split s, long[] b, List<Group> groups, List<ColumnPlan> plans,
      BufferPool pool, String what) {
    String range = what + " [" + b[0] + ", " + b[1] + ") by columns";
    List<Batch> columns = new ArrayList<>();
    try (ColumnCursor cursor = ds.openColumns(s, b[0], b[1])) {
      while (cursor.remaining() > 0) {
        int n = (int) Math.min(50, cursor.remaining());
        try (BatchBuilder builder = BatchBuilder.create(ds.schema(), n, pool)) {
          for (int k = 0; k < ds.schema().size(); k++) {
            cursor.decode(k, builder.column(k), 0, n);
          }
          builder.commitRange(cursor.index(), n);
          cursor.advance(n);
          columns.add(builder.build());
        }
      }
      assertEquals(b[1], ParquetTestFiles.assertBatchesMatch(columns, groups, (int) b[0], plans, range), range);
    } finally {
      columns.forEach(Batch::close);
    }
    return (int) (b[1] - b[0]);
  }

  /** A file whose streams count the bytes read through them. */
  private record Counting(InputFile file, AtomicLong read) implements InputFile {
    @Override
    public long getLength() throws IOException {
      return file.getLength();
    }

    @Override
    public SeekableInputStream newStream() throws IOException {
      SeekableInputStream in = file.newStream();
      return new SeekableInputStream() {
        @Override
        public long getPos() throws IOException {
          return in.getPos();
        }

        @Override
        public void seek(long newPos) throws IOException {
          in.seek(newPos);
        }

        @Override
        public void readFully(byte[] bytes) throws IOException {
          in.readFully(bytes);
          read.addAndGet(bytes.length);
        }

        @Override
        public void readFully(byte[] bytes, int start, int len) throws IOException {
          in.readFully(bytes, start, len);
          read.addAndGet(len);
        }

        @Override
        public int read(ByteBuffer buf) throws IOException {
          int n = in.read(buf);
          read.addAndGet(Math.max(0, n));
          return n;
        }

        @Override
        public void readFully(ByteBuffer buf) throws IOException {
          read.addAndGet(buf.remaining());
          in.readFully(buf);
        }

        @Override
        public int read() throws IOException {
          int b = in.read();
          read.addAndGet(b < 0 ? 0 : 1);
          return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
          int n = in.read(b, off, len);
          read.addAndGet(Math.max(0, n));
          return n;
        }

        @Override
        public void close() throws IOException {
          in.close();
        }
      };
    }
  }
}
