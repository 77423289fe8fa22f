package dev.sluice.io.npy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.ReadCache;
import dev.sluice.core.Schema;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.internal.mapped.BlockCache;
import dev.sluice.core.spi.BatchBuilder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.LongUnaryOperator;

/** Test helpers: raw {@code .npy} files with any header, and get-versus-gather comparisons. */
public final class NpyFiles {
  private NpyFiles() {}

  /** A raw header: magic, version, length, {@code dict} padded to 64 bytes and a newline. */
  static byte[] header(int major, String dict) {
    int lenBytes = major == 1 ? 2 : 4;
    int pre = 8 + lenBytes;
    int total = ((pre + dict.length() + 1 + 63) / 64) * 64;
    String padded = dict + " ".repeat(total - pre - dict.length() - 1) + "\n";
    byte[] text = padded.getBytes(major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
    ByteBuffer b = ByteBuffer.allocate(pre + text.length).order(ByteOrder.LITTLE_ENDIAN);
    b.put((byte) 0x93).put("NUMPY".getBytes(StandardCharsets.US_ASCII)).put((byte) major).put((byte) 0);
    if (major == 1) {
      b.putShort((short) text.length);
    } else {
      b.putInt(text.length);
    }
    b.put(text);
    return b.array();
  }

  static String dict(String descr, boolean fortran, long... shape) {
    StringBuilder s = new StringBuilder("(");
    for (int i = 0; i < shape.length; i++) {
      s.append(shape[i]).append(shape.length == 1 ? "," : i + 1 < shape.length ? ", " : "");
    }
    s.append(")");
    return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + s + ", }";
  }

  static Path write(Path file, byte[] header, byte[] data) throws IOException {
    byte[] all = Arrays.copyOf(header, header.length + data.length);
    System.arraycopy(data, 0, all, header.length, data.length);
    return Files.write(file, all);
  }

  /**
   * Writes {@code file}: an npy file of {@code rows} × {@code width} little-endian int64 values,
   * element {@code i} (in C order) being {@code value(i)}.
   */
  public static Path int64Matrix(Path file, int rows, int width, LongUnaryOperator value) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    ByteBuffer data = ByteBuffer.allocate(rows * width * 8).order(ByteOrder.LITTLE_ENDIAN);
    for (long i = 0; i < (long) rows * width; i++) {
      data.putLong(value.applyAsLong(i));
    }
    return write(file, header(1, dict("<i8", false, rows, width)), data.array());
  }

  /**
   * The end of a test of the read cache: forgets the budget it set, waits for the shared memory
   * manager to hold nothing, and checks that the block cache holds no byte.
   */
  static void resetReadCacheAndAssertReleased() {
    ReadCache.resetBudget();
    MemoryManager.shared().awaitNoOutstanding(Duration.ofSeconds(10));
    assertEquals(0, BlockCache.heldBytes());
  }

  /** Bytes of row {@code i} (fields in schema order) through {@code get}. */
  static byte[] rowBytes(RandomAccessDataset<Example> ds, Schema schema, long i) {
    Example e = ds.get(i);
    ByteBuffer out = ByteBuffer.allocate((int) schema.fixedRowBytes());
    for (TensorSpec f : schema.fields()) {
      out.put(e.tensor(f.name()).data());
    }
    return out.array();
  }

  /** Gathers {@code indices} in batches of {@code batch} and checks every row against {@code get}. */
  static void assertGatherMatchesGet(NpyDataset ds, long[] indices, int batch) {
    Schema schema = ((HasSchema) ds).schema();
    var pool = MemoryManager.shared().pool("test.npy.gather");
    for (int from = 0; from < indices.length; from += batch) {
      int n = Math.min(batch, indices.length - from);
      Batch b;
      try (BatchBuilder bb = BatchBuilder.create(schema, n, pool)) {
        ds.gather(indices, from, n, bb);
        b = bb.build();
      }
      try (b) {
        for (int r = 0; r < n; r++) {
          ByteBuffer got = ByteBuffer.allocate((int) schema.fixedRowBytes());
          for (int f = 0; f < schema.size(); f++) {
            got.put(b.column(f).row(r).data());
          }
          byte[] expected = rowBytes(ds, schema, indices[from + r]);
          if (!Arrays.equals(expected, got.array())) {
            throw new AssertionError(ds + ": row " + indices[from + r] + " gathered " + Arrays.toString(got.array())
                + " but get gives " + Arrays.toString(expected));
          }
          if (b.index(r) != indices[from + r]) {
            throw new AssertionError("batch row " + r + " has index " + b.index(r) + ", expected " + indices[from + r]);
          }
        }
      }
    }
  }

  /** A seeded shuffle of 0..n-1 with a few contiguous runs kept. */
  static long[] shuffled(long n, long seed) {
    long[] a = new long[(int) n];
    for (int i = 0; i < n; i++) {
      a[i] = i;
    }
    java.util.Random r = new java.util.Random(seed);
    for (int i = a.length - 1; i > 0; i--) {
      if (r.nextInt(4) == 0) {
        continue; // keep some neighbours together
      }
      int j = r.nextInt(i + 1);
      long t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }
}
