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
 * SHA-256 of a dataset's canonical bytes, so that equal checksums mean a conversion
 * lost nothing whatever the format.
 *
 * <p>Canonical bytes: for each example in source order, each selected field in name order:
 * <ul>
 *   <li>a nullable field first gets one byte, 1 valid or 0 null; a null fixed-length value is then
 *       its size in zero bytes, a null variable-length value an int64 count of 0;
 *   <li>a fixed-length value: its values as little-endian C-order bytes (booleans one byte each);
 *   <li>a string or blob: its byte count as a little-endian int64, then its bytes;
 *   <li>a list (a {@code -1} dimension): its element count as a little-endian int64, then each
 *       element in canonical form, recursively: a fixed-shape element is its bytes, a string
 *       element its byte count and bytes, a list element its own count and elements. When the
 *       spec says a level's elements may be null, each of its elements first gets the flag byte,
 *       and a null element is then zeros (fixed width) or a count of 0.
 * </ul>
 * So a list of floats is its count then the floats as they lie in memory, and a map field
 * {@code m} is read as its two list fields {@code m.key} and {@code m.value}.
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
    private byte[] chunk = new byte[8192];

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
          if (t.hasNulls()) {
            throw new IllegalArgumentException("field '" + name + "' of example " + e.index()
                + " holds null elements but its spec " + f + " has none");
          }
          md.update(t.data());
        } else {
          item(f, 0, t, e.index());
        }
      }
    }

    /** The canonical bytes of {@code t}, an item at {@code depth} of field {@code f}. */
    private void item(TensorSpec f, int depth, Tensor t, long example) {
      int ragged = f.raggedRank();
      if (depth == ragged) { // an innermost item: a string or blob, or a fixed-shape block
        if (f.dtype().isVariableLength()) {
          count(t.byteSize());
        }
        md.update(t.data());
        return;
      }
      if (t.shape().rank() == 0) {
        throw new IllegalArgumentException("field '" + f.name() + "' of example " + example + " has a scalar where "
            + f + " expects a list at depth " + depth);
      }
      long n = t.shape().dim(0);
      count(n);
      boolean nullable = f.elementsNullable(depth);
      if (!nullable && t.hasNulls() && anyNull(t, n)) {
        throw new IllegalArgumentException("field '" + f.name() + "' of example " + example
            + " holds null elements at list level " + depth + " but its spec " + f + " has none");
      }
      boolean leaves = depth + 1 == ragged && !f.dtype().isVariableLength() && !t.isRagged();
      if (leaves && !nullable) {
        md.update(t.data()); // a dense run of fixed-width items: their bytes as they are
        return;
      }
      if (leaves) { // flag byte, then the item (zeros when null), batched through one buffer
        int itemBytes = (int) (t.numElements() / Math.max(1, n)) * f.dtype().byteSize();
        ByteBuffer d = t.data();
        int at = 0;
        for (long i = 0; i < n; i++) {
          if (at + 1 + itemBytes > chunk.length) {
            md.update(chunk, 0, at);
            at = 0;
            if (1 + itemBytes > chunk.length) {
              chunk = new byte[1 + itemBytes];
            }
          }
          boolean isNull = t.isNull(i);
          chunk[at++] = isNull ? (byte) 0 : (byte) 1;
          if (isNull) {
            java.util.Arrays.fill(chunk, at, at + itemBytes, (byte) 0);
          } else {
            d.get((int) (i * itemBytes), chunk, at, itemBytes);
          }
          at += itemBytes;
        }
        md.update(chunk, 0, at);
        return;
      }
      for (long i = 0; i < n; i++) {
        boolean isNull = t.isNull(i);
        if (nullable) {
          md.update(isNull ? (byte) 0 : (byte) 1);
        }
        if (!isNull) {
          item(f, depth + 1, t.slice(i), example);
        } else if (depth + 1 == ragged && !f.dtype().isVariableLength()) {
          zeros(f.itemShape().numElements() * f.dtype().byteSize());
        } else {
          count(0);
        }
      }
    }

    private static boolean anyNull(Tensor t, long n) {
      for (long i = 0; i < n; i++) {
        if (t.isNull(i)) {
          return true;
        }
      }
      return false;
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
