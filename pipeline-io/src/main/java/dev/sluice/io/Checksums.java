package dev.sluice.io;

import dev.sluice.core.Dataset;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * SHA-256 of a dataset's canonical bytes (DESIGN.md §11), so that equal checksums mean a conversion
 * lost nothing whatever the format.
 *
 * <p>Canonical bytes: for each example in source order, each selected field in name order:
 * <ul>
 *   <li>a nullable field first gets one byte, 1 valid or 0 null; a null fixed-length value is then
 *       its size in zero bytes, a null variable-length value an int64 count of 0;
 *   <li>a fixed-length value: its values as little-endian C-order bytes (booleans one byte each);
 *   <li>a variable-length value (a {@code -1} dimension, or string/bytes): its element count as a
 *       little-endian int64 (values for a numeric list, bytes for one string or blob, strings for
 *       a list of strings), then the values; each string of a list of strings is itself a count
 *       then its bytes.
 * </ul>
 * For a one-array {@code .npy} this equals NumPy's
 * {@code a.astype(a.dtype.newbyteorder('<')).tobytes(order='C')} for any byte or memory order.
 */
public final class Checksums {
  private Checksums() {}

  /** The SHA-256 of every field of {@code dataset} (which must implement {@link HasSchema}), 64 lowercase hex. */
  public static String sha256(Dataset<Example> dataset) {
    return sha256(dataset, schemaOf(dataset), List.of());
  }

  /**
   * The SHA-256 of the fields named in {@code columns} (all fields when empty), 64 lowercase hex.
   *
   * @throws IllegalArgumentException naming an unknown column and the known fields
   */
  public static String sha256(Dataset<Example> dataset, List<String> columns) {
    return sha256(dataset, schemaOf(dataset), columns);
  }

  /** As {@link #sha256(Dataset, List)} with the schema given. */
  public static String sha256(Dataset<Example> dataset, Schema schema, List<String> columns) {
    Schema selected = (columns.isEmpty() ? schema : schema.select(columns)).sortedByName();
    MessageDigest md = sha256();
    Hasher h = new Hasher(md, selected);
    dataset.flux().doOnNext(h::add).then().block();
    return HexFormat.of().formatHex(md.digest());
  }

  private static Schema schemaOf(Dataset<Example> dataset) {
    if (dataset instanceof HasSchema s) {
      return s.schema();
    }
    throw new IllegalArgumentException("a checksum needs the fields of " + dataset + " but it has no schema");
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  private static final class Hasher {
    private final MessageDigest md;
    private final List<TensorSpec> fields;
    private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    private final byte[] zeros = new byte[4096];

    Hasher(MessageDigest md, Schema schema) {
      this.md = md;
      this.fields = schema.fields();
    }

    void add(Example e) {
      for (TensorSpec f : fields) {
        String name = f.name();
        if (e.isNull(name)) {
          if (!f.nullable()) {
            throw new IllegalArgumentException("field '" + name + "' of example " + e.index() + " is null but not nullable");
          }
          md.update((byte) 0);
          if (f.isFixedLength()) {
            zeros(f.rowBytes());
          } else {
            count(0);
          }
          continue;
        }
        Tensor t = e.tensor(name);
        if (f.nullable()) {
          md.update((byte) 1);
        }
        if (f.isFixedLength()) {
          md.update(t.data());
        } else if (t.dtype().isVariableLength() && t.shape().rank() == 1) {
          long n = t.numElements();
          count(n);
          for (long i = 0; i < n; i++) {
            ByteBuffer v = t.bytesAt(i);
            count(v.remaining());
            md.update(v);
          }
        } else {
          count(t.dtype().isVariableLength() ? t.byteSize() : t.numElements());
          md.update(t.data());
        }
      }
    }

    private void count(long n) {
      scratch.putLong(0, n);
      md.update(scratch.array(), 0, 8);
    }

    private void zeros(long n) {
      while (n > 0) {
        int k = (int) Math.min(n, zeros.length);
        md.update(zeros, 0, k);
        n -= k;
      }
    }
  }
}
