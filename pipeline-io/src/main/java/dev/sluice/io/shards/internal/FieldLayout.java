package dev.sluice.io.shards.internal;

import dev.sluice.core.DType;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * How one field is stored in a shard: its kind and its buffers, in the order of the shard's block
 * table ({@code validity} when nullable, then {@code offsets} for a variable-length field, then
 * {@code values}).
 *
 * <p>The format defines every field recursively (a list level is int64 offsets over a child); this
 * version reads and writes the kinds a batch column holds: fixed-length tensors, one string or
 * blob per row, and one list of fixed-shape items per row.
 */
public final class FieldLayout {
  /** What a row of the field holds. */
  public enum Kind {
    /** A tensor of fixed dtype and fully defined shape: {@code rows × rowBytes} values. */
    FIXED,
    /** One string or blob: byte offsets plus bytes. */
    BINARY,
    /** A list of fixed-shape items (shape {@code [-1, d1, ...]}): item offsets plus items. */
    LIST
  }

  /** A buffer of a field. */
  public enum Buffer {
    VALIDITY("validity"), OFFSETS("offsets"), VALUES("values");

    private final String label;

    Buffer(String label) {
      this.label = label;
    }

    /** The name the specification and messages use. */
    public String label() {
      return label;
    }
  }

  private final TensorSpec spec;
  private final Kind kind;
  private final int itemBytes;
  private final List<Buffer> buffers;
  private final int firstBlock;

  private FieldLayout(TensorSpec spec, Kind kind, int itemBytes, int firstBlock) {
    this.spec = spec;
    this.kind = kind;
    this.itemBytes = itemBytes;
    this.firstBlock = firstBlock;
    List<Buffer> b = new ArrayList<>(3);
    if (spec.nullable()) {
      b.add(Buffer.VALIDITY);
    }
    if (kind != Kind.FIXED) {
      b.add(Buffer.OFFSETS);
    }
    b.add(Buffer.VALUES);
    this.buffers = List.copyOf(b);
  }

  /**
   * The layout of {@code spec}, whose buffers start at block {@code firstBlock} of the table.
   *
   * @throws UnsupportedOperationException for a nested field (a list of lists or of strings, a
   *     variable dimension after the first), which the format defines but this version does not
   *     read or write yet
   */
  public static FieldLayout of(TensorSpec spec, int firstBlock) {
    DType t = spec.dtype();
    Shape s = spec.shape();
    if (t.isVariableLength()) {
      if (s.rank() != 0) {
        throw nested(spec);
      }
      return new FieldLayout(spec, Kind.BINARY, 1, firstBlock);
    }
    if (s.isFullyDefined()) {
      return new FieldLayout(spec, Kind.FIXED, Math.toIntExact(spec.rowBytes()), firstBlock);
    }
    if (s.dim(0) != -1 || !s.dropFirst().isFullyDefined()) {
      throw nested(spec);
    }
    return new FieldLayout(spec, Kind.LIST, Math.toIntExact(s.dropFirst().numElements() * t.byteSize()), firstBlock);
  }

  /** The layouts of every field, block numbers assigned in field order. */
  public static List<FieldLayout> of(List<TensorSpec> fields) {
    List<FieldLayout> out = new ArrayList<>(fields.size());
    int block = 0;
    for (TensorSpec f : fields) {
      FieldLayout l = of(f, block);
      out.add(l);
      block += l.blockCount();
    }
    return List.copyOf(out);
  }

  private static UnsupportedOperationException nested(TensorSpec spec) {
    return new UnsupportedOperationException("field '" + spec.name() + "' " + spec + ": nested values (lists of "
        + "strings, lists of lists, a variable dimension after the first) are not supported by this version of "
        + "the shard reader and writer");
  }

  public TensorSpec spec() {
    return spec;
  }

  public String name() {
    return spec.name();
  }

  public Kind kind() {
    return kind;
  }

  /**
   * Bytes per row ({@link Kind#FIXED}), per list item ({@link Kind#LIST}), or 1 ({@link Kind#BINARY}).
   */
  public int itemBytes() {
    return itemBytes;
  }

  /** The buffers, in block-table order. */
  public List<Buffer> buffers() {
    return buffers;
  }

  public int blockCount() {
    return buffers.size();
  }

  /** The block number of {@code buffer}, or -1 when the field has none. */
  public int block(Buffer buffer) {
    int i = buffers.indexOf(buffer);
    return i < 0 ? -1 : firstBlock + i;
  }

  /**
   * The length a block must have for {@code rows} rows, or -1 when only the data tells (the values
   * of a variable-length field).
   */
  public long knownLength(Buffer buffer, long rows) {
    return switch (buffer) {
      case VALIDITY -> rows;
      case OFFSETS -> Math.multiplyExact(rows + 1, 8L);
      case VALUES -> kind == Kind.FIXED ? Math.multiplyExact(rows, (long) itemBytes) : -1;
    };
  }

  /** {@code "field 'x' offsets"}, for messages. */
  public String describe(Buffer buffer) {
    return "field '" + spec.name() + "' " + buffer.label();
  }
}
