package dev.sluice.io.arrow;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetException;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Split;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.apache.arrow.vector.compression.CompressionUtil.CodecType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Valid Arrow files and streams damaged at random (bit flips, truncation, length fields set to
 * boundary values), a bounded number of cases from a fixed seed: every read of every case either
 * succeeds or fails with a typed {@link DatasetException} naming the file. Never another
 * exception, a JVM crash, a hang or leaked memory.
 */
@ExtendWith(NoLeaks.class)
class ArrowFuzzTest {
  private static final int CASES_PER_FILE = 150;
  private static final int[] LENGTHS = {0, -1, 1, 7, 8, 0x7fffffff, 0x80000000, 0x10000, -8};

  @TempDir
  Path dir;

  /** Cases whose every read succeeded, and those where some read failed with a typed error. */
  private static final java.util.concurrent.atomic.AtomicInteger READ = new java.util.concurrent.atomic.AtomicInteger();
  private static final java.util.concurrent.atomic.AtomicInteger REFUSED = new java.util.concurrent.atomic.AtomicInteger();

  private record Config(IpcFormat format, CodecType codec) { }

  @Test
  void damagedFilesFailWithTypedErrorsOnly() throws Exception {
    Random rnd = new Random(20261124L);
    Config[] configs = {
        new Config(IpcFormat.FILE, CodecType.NO_COMPRESSION),
        new Config(IpcFormat.STREAM, CodecType.NO_COMPRESSION),
        new Config(IpcFormat.FILE, CodecType.LZ4_FRAME),
        new Config(IpcFormat.STREAM, CodecType.ZSTD)};
    int trial = 0;
    for (Config c : configs) {
      Path clean = dir.resolve("clean-" + trial + ".arrow");
      ArrowTestFiles.writeRich(clean, c.format(), c.codec(), new int[] {6, 0, 9}, 7);
      byte[] good = Files.readAllBytes(clean);
      for (int k = 0; k < CASES_PER_FILE; k++, trial++) {
        Mutation m = mutate(good.clone(), rnd, k % 3);
        byte[] bad = m.bytes();
        String what = m.what();
        Path f = dir.resolve("bad-" + trial + ".arrow");
        Files.write(f, bad);
        String label = c + ", case " + trial + ": " + what;
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> readEverything(f, label), label);
        if (c.format() == IpcFormat.STREAM) {
          assertTimeoutPreemptively(Duration.ofSeconds(60), () -> readAsInput(f, bad, label), label);
        }
      }
    }
    System.out.println("cases read whole: " + READ + ", cases with a typed error: " + REFUSED);
    // the damage is not all harmless, nor all caught at the door
    assertTrue(READ.get() > 50 && REFUSED.get() > 200, "read " + READ + ", refused " + REFUSED);
  }

  @Test
  void damagedFilesOfTheOtherTypesFailWithTypedErrorsOnly() throws Exception {
    Random rnd = new Random(20261127L);
    Config[] configs = {
        new Config(IpcFormat.FILE, CodecType.NO_COMPRESSION),
        new Config(IpcFormat.STREAM, CodecType.ZSTD)};
    int trial = 0;
    for (Config c : configs) {
      Path clean = dir.resolve("other-" + trial + ".arrow");
      ArrowTestFiles.writeOtherTypes(clean, c.format(), c.codec(), new int[] {9, 0, 13});
      java.util.List<java.util.Map<String, Object>> expected = ArrowTestFiles.arrowRows(clean, c.format());
      try (ArrowDataset ds = Arrow.open(clean)) {
        java.util.List<java.util.Map<String, Object>> rows = new java.util.ArrayList<>();
        for (long i = 0; i < ds.size(); i++) {
          rows.add(ArrowTestFiles.sluiceRow(ds.get(i)));
        }
        org.assertj.core.api.Assertions.assertThat(rows).as(c + ", undamaged").isEqualTo(expected);
      }
      byte[] good = Files.readAllBytes(clean);
      for (int k = 0; k < CASES_PER_FILE; k++, trial++) {
        Mutation m = mutate(good.clone(), rnd, k % 3);
        byte[] bad = m.bytes();
        Path f = dir.resolve("bad-other-" + trial + ".arrow");
        Files.write(f, bad);
        String label = c + ", other types, case " + trial + ": " + m.what();
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> readEverything(f, label), label);
        if (c.format() == IpcFormat.STREAM) {
          assertTimeoutPreemptively(Duration.ofSeconds(60), () -> readAsInput(f, bad, label), label);
        }
      }
    }
  }

  private record Mutation(byte[] bytes, String what) { }

  /** Damages {@code b}: kind 0 flips bits, 1 truncates, 2 overwrites a 4- or 8-byte length field. */
  private static Mutation mutate(byte[] b, Random rnd, int kind) {
    switch (kind) {
      case 0 -> {
        int n = 1 + rnd.nextInt(8);
        StringBuilder sb = new StringBuilder("bit flips at");
        for (int i = 0; i < n; i++) {
          int at = rnd.nextInt(b.length);
          b[at] ^= (byte) (1 << rnd.nextInt(8));
          sb.append(' ').append(at);
        }
        return new Mutation(b, sb.toString());
      }
      case 1 -> {
        int keep = rnd.nextInt(b.length);
        return new Mutation(java.util.Arrays.copyOf(b, keep), "truncated to " + keep + " bytes");
      }
      default -> {
        int at = rnd.nextInt(b.length / 4) * 4;
        int v = LENGTHS[rnd.nextInt(LENGTHS.length)];
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        if (rnd.nextBoolean() && at + 8 <= b.length) {
          bb.putLong(at, v);
          return new Mutation(b, "int64 " + v + " at " + at);
        }
        bb.putInt(at, v);
        return new Mutation(b, "int32 " + v + " at " + at);
      }
    }
  }

  private static void readEverything(Path f, String label) throws Exception {
    int refusedBefore = REFUSED.get();
    try (ArrowDataset ds = Arrow.open(f)) {
      typed(f, label, () -> {
        for (long i = 0; i < ds.size(); i++) {
          Example e = ds.get(i);
          e.names().forEach(n -> {
            if (!e.isNull(n)) {
              e.tensor(n).toByteArray();
            }
          });
        }
      });
      typed(f, label, () -> {
        for (Split s : ds.splits()) {
          ds.readBatches(s, 0, Long.MAX_VALUE, 4).doOnNext(Batch::close).blockLast(Duration.ofSeconds(30));
        }
      });
      typed(f, label, () -> {
        long rowBytes = 0;
        for (dev.sluice.core.TensorSpec t : ds.schema().fields()) {
          rowBytes += t.isFixedLength() ? t.rowBytes() : 0;
        }
        // a batch of at most 64 MiB, as a pipeline's batch size would be chosen
        int n = (int) Math.min(Math.min(ds.size(), 64), (64L << 20) / Math.max(1, rowBytes));
        if (n == 0) {
          return;
        }
        long[] idx = new long[n];
        for (int i = 0; i < n; i++) {
          idx[i] = (i * 7L) % ds.size();
        }
        try (BatchBuilder b = BatchBuilder.create(ds.schema(), n, MemoryManager.shared().pool("test"))) {
          ds.gather(idx, 0, n, b);
          b.build().close();
        }
      });
    } catch (DatasetException e) {
      check(f, label, e);
    }
    if (REFUSED.get() == refusedBefore) {
      READ.incrementAndGet();
    }
  }

  private static void readAsInput(Path f, byte[] bytes, String label) {
    String name = f.getFileName().toString();
    try (ArrowStream s = Arrow.openStream(new ByteArrayInputStream(bytes), name)) {
      s.batches().doOnNext(Batch::close).blockLast(Duration.ofSeconds(30));
    } catch (DatasetException e) {
      assertTrue(e.getMessage().contains(name), label + ": " + e.getMessage());
    } catch (RuntimeException e) {
      fail(label + ": untyped " + e, e);
    }
  }

  private interface Read {
    void run() throws Exception;
  }

  private static void typed(Path f, String label, Read r) {
    try {
      r.run();
    } catch (DatasetException e) {
      check(f, label, e);
    } catch (Exception e) {
      Throwable t = reactor.core.Exceptions.unwrap(e);
      if (t instanceof DatasetException d) {
        check(f, label, d);
        return;
      }
      fail(label + ": untyped " + t, t);
    }
  }

  private static void check(Path f, String label, DatasetException e) {
    REFUSED.incrementAndGet();
    assertTrue(e.getMessage().contains(f.toString()), label + ": the message does not name the file: " + e.getMessage());
  }
}
