package dev.sluice.core.internal.shardfile;

import dev.sluice.core.TensorSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * How one field is stored in a shard: its buffers, in the order of the shard's block table, and
 * the kind of reading it allows.
 *
 * <p>A field of ragged rank {@code k} (its leading {@code -1} dimensions) has items at depths
 * {@code 0 … k}: depth 0 the rows, depth {@code j + 1} the elements of the lists at depth {@code j},
 * depth {@code k} the innermost values (a fixed-shape item, or one string or blob). Per depth
 * {@code d}, in order: a {@code validity} buffer when items at that depth may be null, then an
 * {@code offsets} buffer when they are lists ({@code d < k}) or strings ({@code d == k}); last the
 * {@code values}. This is Arrow's {@code LargeList} layout applied per level.
 */
public final class FieldLayout {
  /** How rows of the field are read: the three flat kinds have fast paths, the rest is walked. */
  public enum Kind {
    /** A tensor of fixed dtype and fully defined shape: {@code rows × rowBytes} values. */
    FIXED,
    /** One string or blob per row: byte offsets plus bytes. */
    BINARY,
    /** One list of fixed-shape items per row ({@code [-1, d1, ...]}), elements never null. */
    LIST,
    /** Lists of lists, lists of strings, lists whose elements may be null. */
    NESTED
  }

  /** What a buffer holds. */
  public enum Role { VALIDITY, OFFSETS, VALUES }

  /** One buffer of a field: its role and the depth of the items it describes. */
  public record Buffer(Role role, int depth) {
    /** The row validity. */
    public static final Buffer VALIDITY = new Buffer(Role.VALIDITY, 0);
    /** The offsets of the rows (lists or strings). */
    public static final Buffer OFFSETS = new Buffer(Role.OFFSETS, 0);
    /** The innermost values. */
    public static final Buffer VALUES = new Buffer(Role.VALUES, -1);

    /** The name the specification and messages use: {@code validity}, {@code offsets[1]}, {@code values}. */
    public String label() {
      String r = role.name().toLowerCase(java.util.Locale.ROOT);
      return role == Role.VALUES || depth == 0 ? r : r + "[" + depth + "]";
    }
  }

  private final TensorSpec spec;
  private final Kind kind;
  private final int ragged;
  private final boolean binaryLeaf;
  private final int itemBytes;
  private final List<Buffer> buffers;
  private final int firstBlock;

  private FieldLayout(TensorSpec spec, int firstBlock) {
    this.spec = spec;
    this.firstBlock = firstBlock;
    this.ragged = spec.raggedRank();
    this.binaryLeaf = spec.dtype().isVariableLength();
    if (spec.isFixedLength()) {
      this.kind = Kind.FIXED;
      this.itemBytes = Math.toIntExact(spec.rowBytes());
    } else {
      this.itemBytes = binaryLeaf ? 1 : Math.toIntExact(Math.multiplyExact(spec.itemShape().numElements(),
          (long) spec.dtype().byteSize()));
      if (ragged == 0) {
        this.kind = Kind.BINARY;
      } else if (ragged == 1 && !binaryLeaf && !spec.elementsNullable(0)) {
        this.kind = Kind.LIST;
      } else {
        this.kind = Kind.NESTED;
      }
    }
    List<Buffer> b = new ArrayList<>();
    int levels = ragged + (binaryLeaf ? 1 : 0);
    for (int d = 0; d <= ragged; d++) {
      if (spec.nullableAt(d)) {
        b.add(new Buffer(Role.VALIDITY, d));
      }
      if (d < levels) {
        b.add(new Buffer(Role.OFFSETS, d));
      }
    }
    b.add(Buffer.VALUES);
    this.buffers = List.copyOf(b);
  }

  /** The layout of {@code spec}, whose buffers start at block {@code firstBlock} of the table. */
  public static FieldLayout of(TensorSpec spec, int firstBlock) {
    return new FieldLayout(spec, firstBlock);
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

  public TensorSpec spec() {
    return spec;
  }

  public String name() {
    return spec.name();
  }

  public Kind kind() {
    return kind;
  }

  /** The ragged rank {@code k}: the depth of the innermost values. */
  public int ragged() {
    return ragged;
  }

  /** True when the innermost values are strings or blobs (they have byte offsets at depth {@code k}). */
  public boolean binaryLeaf() {
    return binaryLeaf;
  }

  /**
   * Bytes per row ({@link Kind#FIXED}), per innermost item (fixed-width values), or 1 (strings and
   * blobs).
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

  /** The block of the validity at {@code depth}, or -1. */
  public int validityBlock(int depth) {
    return block(new Buffer(Role.VALIDITY, depth));
  }

  /** The block of the offsets at {@code depth}, or -1. */
  public int offsetsBlock(int depth) {
    return block(new Buffer(Role.OFFSETS, depth));
  }

  /**
   * The length a block must have for {@code rows} rows, or -1 when only the data tells (every
   * buffer below the rows, and the values of a variable-length field).
   */
  public long knownLength(Buffer buffer, long rows) {
    if (buffer.role() == Role.VALUES) {
      return kind == Kind.FIXED ? Math.multiplyExact(rows, (long) itemBytes) : -1;
    }
    if (buffer.depth() != 0) {
      return -1;
    }
    return buffer.role() == Role.VALIDITY ? rows : Math.multiplyExact(rows + 1, 8L);
  }

  /** {@code "field 'x' offsets[1]"}, for messages. */
  public String describe(Buffer buffer) {
    return "field '" + spec.name() + "' " + buffer.label();
  }
}
