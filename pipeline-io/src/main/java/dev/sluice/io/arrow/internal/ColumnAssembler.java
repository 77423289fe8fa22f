package dev.sluice.io.arrow.internal;

import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.spi.ColumnBuffers;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Builds the Sluice column of one field from a record batch's arrays, for rows
 * {@code [from, from + rows)}.
 *
 * <p>What the file's layout allows is shared, not copied: fixed-width values (also inside
 * fixed-size lists), int64 offsets that start at 0 (large lists, large strings and binaries), and
 * the bytes of strings and binaries. The rest is written into the column's {@link ColumnBuffers}
 * (one set per written column, from {@link Memory}, each buffer allocated when first written):
 * validity bitmaps become one byte per item (the validities of the struct arrays on the way
 * are combined with the level's own), int32 offsets are widened, booleans unpacked, decimals
 * converted, interval parts split out, dictionary indices replaced by their values, list views,
 * binary views and run-end encoded arrays materialized, union members nulled where a row holds
 * another member. Arrow lets a null slot hold anything; a
 * Sluice null is zeros or empty, so a null's values are zeroed and a null list or string that
 * spans values has them cut out.
 *
 * <p>Every offset is checked against the array below before it is followed, and every buffer
 * against the bytes it must hold, so a damaged file fails with a {@link DatasetFormatException}
 * naming the file, the record batch and the column, and nothing is read outside a buffer.
 */
final class ColumnAssembler {
  /** The decoded values of the dictionaries the record batch refers to. */
  interface Dictionaries {
    /**
     * The values of dictionary {@code id}: a column of one leaf value per row.
     *
     * @throws DatasetFormatException when the dictionary is not defined
     */
    Column values(long id);
  }

  private final FieldPlan plan;
  final TensorSpec spec;
  final BatchBuffers data;
  final Memory memory;
  final Dictionaries dictionaries;
  private int rows;
  private ColumnBuffers out; // created by the first write: a column shared whole writes nothing
  private boolean valuesWritten;

  private ColumnAssembler(FieldPlan plan, BatchBuffers data, Memory memory, Dictionaries dictionaries) {
    this.plan = plan;
    this.spec = plan.spec();
    this.data = data;
    this.memory = memory;
    this.dictionaries = dictionaries;
  }

  /**
   * The column of {@code plan}'s field for rows {@code [from, from + rows)} of {@code data}: views
   * of its buffers where they can be shared, else buffers of {@code memory}.
   */
  static Column assemble(FieldPlan plan, BatchBuffers data, long from, int rows, Memory memory,
      Dictionaries dictionaries) {
    try {
      return new ColumnAssembler(plan, data, memory, dictionaries).assemble(from, rows);
    } catch (Memory.TooLarge e) {
      throw new UnsupportedFormatException(data.resource(), data.position() + ", column '" + plan.name() + "'",
          e.getMessage() + "; write the file with smaller record batches");
    }
  }

  private Column assemble(long from, int rows) {
    this.rows = rows;
    int ragged = spec.raggedRank();
    ByteBuffer[] valid = new ByteBuffer[ragged + 1];
    long[] counts = new long[ragged + 1];
    List<Tensor> offsets = new ArrayList<>(ragged + 1);
    Slots cur = Slots.range(from, from + rows);
    counts[0] = rows;
    long mul = 1; // slots of the current array per item: the fixed dimensions above it at this depth
    int depth = 0;
    List<FieldPlan.Step> steps = plan.steps();
    for (int k = 0; k < steps.size(); k++) {
      FieldPlan.Step s = steps.get(k);
      long len = data.length(s.node());
      long used = times(cur.limit(), mul, s);
      if (used > len) {
        throw format("array '" + s.name() + "' has " + len + " slots but the arrays above it use " + used);
      }
      if (!s.hasValidity()) {
        // unions, run-end encoded and null arrays: no bitmap (a null array's items are nulled at the leaf)
      } else if (s.insideItem()) {
        checkNoNulls(s, cur, mul, valid[depth]);
      } else {
        valid[depth] = and(valid[depth], s, cur, depth);
      }
      if (s.kind() == FieldPlan.Kind.SPARSE_MEMBER || s.kind() == FieldPlan.Kind.DENSE_MEMBER) {
        if (mul != 1) {
          throw unsupported("a union inside a fixed-size list (array '" + s.name() + "') is not supported");
        }
        cur = ColumnEncodings.member(this, s, cur, valid, depth);
      } else if (s.kind() == FieldPlan.Kind.RUN_ENDS) {
        if (mul != 1) {
          throw unsupported("a run-end encoded array inside a fixed-size list (array '" + s.name() + "') is not supported");
        }
        cur = ColumnEncodings.runs(this, s, cur, valid[depth]);
      } else if (s.isList()) {
        checkNullable(depth, valid[depth], cur.size());
        FieldPlan.Step next = steps.get(k + 1);
        ListLevel l = list(s, cur, valid[depth], data.length(next.node()), offsets.size());
        offsets.add(l.offsets);
        cur = l.child;
        depth++;
        counts[depth] = cur.size();
        mul = 1;
      } else if (s.kind() == FieldPlan.Kind.FIXED) {
        mul = times(mul, s.size(), s);
      }
    }
    FieldPlan.Step leafStep = steps.get(steps.size() - 1);
    Tensor values = leaf(leafStep, cur, mul, valid, depth, offsets);
    checkNullable(depth, valid[depth], cur.size());
    List<Tensor> validity = new ArrayList<>(ragged + 1);
    boolean any = false;
    for (int d = 0; d <= ragged; d++) {
      ByteBuffer v = valid[d];
      any |= v != null;
      validity.add(v == null ? null : out.validity(d, (int) counts[d]));
    }
    try {
      return Column.of(spec, rows, values, offsets, any ? validity : List.of());
    } catch (IllegalArgumentException e) {
      throw format("the arrays do not make a column of " + spec + " (" + e.getMessage() + ")");
    }
  }

  // ------------------------------------------------------------------ validity

  /** The level's validity combined with array {@code s}'s over the items {@code cur}; null while all are valid. */
  private ByteBuffer and(ByteBuffer v, FieldPlan.Step s, Slots cur, int depth) {
    if (data.nullCount(s.node()) == 0) {
      return v;
    }
    ByteBuffer bits = bitmap(s);
    int n = cur.size();
    for (int i = 0; i < n; i++) {
      long slot = cur.at(i);
      if (slot < 0) {
        continue; // absent (an unselected union member): already null
      }
      if (!bit(bits, slot)) {
        v = markNull(depth, i, n, v);
      }
    }
    return v;
  }

  private ByteBuffer bitmap(FieldPlan.Step s) {
    long len = data.length(s.node());
    long bytes = (len >>> 3) + ((len & 7) == 0 ? 0 : 1);
    return data.buffer(s.node(), 0, bytes, bytes, spec.name(), "validity bitmap of array '" + s.name() + "'");
  }

  private static boolean bit(ByteBuffer bits, long slot) {
    return (bits.get((int) (slot >>> 3)) >> (int) (slot & 7) & 1) != 0;
  }

  // ------------------------------------------------------------------ written buffers

  /** The buffers the written buffers of this column go to, created by the first write. */
  private ColumnBuffers out() {
    if (out == null) {
      out = memory.column(spec, rows);
    }
    return out;
  }

  /**
   * Marks item {@code i} of the {@code n} items at {@code depth} null in the column's flags and
   * returns the flags of those items (1 valid, 0 null): {@code v} itself once there are flags.
   */
  ByteBuffer markNull(int depth, int i, int n, ByteBuffer v) {
    if (v == null) {
      memory.check(n);
      v = out().validityBuffer(depth, n);
    }
    v.put(i, (byte) 0);
    return v;
  }

  /**
   * The buffer (exactly {@code bytes} long, little-endian) that the written innermost values of this
   * column go to: the fixed-length rows, or the innermost values.
   */
  ByteBuffer values(long bytes) {
    if (valuesWritten) {
      throw new IllegalStateException("column '" + spec.name() + "': values written twice");
    }
    valuesWritten = true;
    if (spec.isFixedLength() && bytes > Math.multiplyExact(spec.rowBytes(), (long) rows)) {
      throw new IllegalStateException("column '" + spec.name() + "': " + bytes + " bytes of values for " + rows
          + " rows of " + spec.rowBytes() + " bytes");
    }
    memory.check(bytes);
    return out().valuesBuffer(bytes).slice(0, (int) bytes).order(ByteOrder.LITTLE_ENDIAN);
  }

  /**
   * The buffer (exactly {@code n + 1} int64 offsets, little-endian) that the written offsets of
   * list level {@code level} (the byte offsets of strings at the last level) go to.
   */
  ByteBuffer offsets(int level, int n) {
    long bytes = (n + 1L) * 8;
    memory.check(bytes);
    return out().offsetsBuffer(level, n).slice(0, (int) bytes).order(ByteOrder.LITTLE_ENDIAN);
  }

  static boolean valid(ByteBuffer v, int i) {
    return v == null || v.get(i) != 0;
  }

  /** Arrays inside an item (below a fixed dimension) may not hold nulls where the item is valid. */
  private void checkNoNulls(FieldPlan.Step s, Slots cur, long mul, ByteBuffer v) {
    if (data.nullCount(s.node()) == 0) {
      return;
    }
    ByteBuffer bits = bitmap(s);
    for (int i = 0, n = cur.size(); i < n; i++) {
      if (!valid(v, i)) {
        continue;
      }
      long base = cur.at(i) * mul;
      for (long j = 0; j < mul; j++) {
        if (!bit(bits, base + j)) {
          throw unsupported("item " + i + " holds a null inside a fixed-size list (array '" + s.name()
              + "'); a fixed-shape Sluice tensor has no null elements (read such lists with "
              + "ArrowOptions.fixedSizeListNulls(NULLABLE_ELEMENTS))");
        }
      }
    }
  }

  private void checkNullable(int depth, ByteBuffer v, int n) {
    if (v == null || spec.nullableAt(depth)) {
      return;
    }
    for (int i = 0; i < n; i++) {
      if (v.get(i) == 0) {
        throw format((depth == 0 ? "row " + i : "element " + i + " of list level " + (depth - 1))
            + " is null but the schema declares " + (depth == 0 ? "the column" : "those elements") + " not nullable");
      }
    }
  }

  // ------------------------------------------------------------------ lists

  record ListLevel(Tensor offsets, Slots child) { }

  /** The int64 offsets of the items {@code cur} of list array {@code s}, and the slots of their elements. */
  private ListLevel list(FieldPlan.Step s, Slots cur, ByteBuffer v, long childLength, int level) {
    int n = cur.size();
    if (s.kind() == FieldPlan.Kind.VIEW32 || s.kind() == FieldPlan.Kind.VIEW64) {
      return ColumnEncodings.listView(this, s, cur, v, childLength, level);
    }
    int w = s.kind() == FieldPlan.Kind.LIST32 ? 4 : s.kind() == FieldPlan.Kind.LIST64 ? 8 : 0;
    long size = s.size();
    ByteBuffer ob = null;
    if (w > 0 && n > 0) {
      long len = data.length(s.node());
      ob = data.buffer(s.node(), 1, offsetBytes(cur.limit(), w, s), offsetBytes(len, w, s), spec.name(),
          "offsets of array '" + s.name() + "'");
    }
    long total = 0;
    boolean cut = false;
    long first = 0;
    for (int i = 0; i < n; i++) {
      long slot = cur.at(i);
      if (slot < 0) {
        continue;
      }
      long st = w == 0 ? times(slot, size, s) : offset(ob, w, slot);
      long en = w == 0 ? st + size : offset(ob, w, slot + 1);
      if (i == 0) {
        first = st;
      }
      if (st < 0 || en < st || en > childLength) {
        throw format("list " + i + " of array '" + s.name() + "' spans [" + st + ", " + en + ") but its elements are "
            + "[0, " + childLength + ")" + (en < st ? " (offsets decrease)" : ""));
      }
      if (valid(v, i)) {
        total += en - st;
      } else if (en > st) {
        cut = true;
      }
    }
    if (total > Integer.MAX_VALUE - 8) {
      throw unsupported("the lists of array '" + s.name() + "' hold " + total + " elements in one record batch");
    }
    boolean contiguous = cur.isRange() && !cut;
    Tensor offsets;
    if (contiguous && w == 8 && n > 0 && first == 0) {
      offsets = Tensor.wrap(DType.INT64, Shape.of(n + 1L), ob.slice((int) (cur.start * 8), (n + 1) * 8));
    } else {
      ByteBuffer o = offsets(level, n);
      long acc = 0;
      o.putLong(0, 0);
      for (int i = 0; i < n; i++) {
        if (valid(v, i)) {
          long slot = cur.at(i);
          acc += w == 0 ? size : offset(ob, w, slot + 1) - offset(ob, w, slot);
        }
        o.putLong((i + 1) * 8, acc);
      }
      offsets = Tensor.wrap(DType.INT64, Shape.of(n + 1L), o);
    }
    if (contiguous) {
      return new ListLevel(offsets, Slots.range(first, first + total));
    }
    memory.charge(total * 8);
    long[] child = new long[(int) total];
    int at = 0;
    for (int i = 0; i < n; i++) {
      if (valid(v, i)) {
        long slot = cur.at(i);
        long st = w == 0 ? times(slot, size, s) : offset(ob, w, slot);
        long en = w == 0 ? st + size : offset(ob, w, slot + 1);
        for (long c = st; c < en; c++) {
          child[at++] = c;
        }
      }
    }
    return new ListLevel(offsets, Slots.of(child));
  }

  static long offset(ByteBuffer ob, int w, long slot) {
    return w == 4 ? ob.getInt((int) (slot * 4)) : ob.getLong((int) (slot * 8));
  }

  // ------------------------------------------------------------------ values

  /** The innermost values of the items {@code cur} (with the string offsets of a string leaf added to {@code offsets}). */
  private Tensor leaf(FieldPlan.Step s, Slots cur, long mul, ByteBuffer[] valid, int depth, List<Tensor> offsets) {
    Leaf leaf = plan.leaf();
    int n = cur.size();
    long len = data.length(s.node());
    switch (leaf.kind()) {
      case FIXED: {
        long itemBytes = times(mul, leaf.width(), s);
        ByteBuffer vb = data.buffer(s.node(), 1, times(cur.limit(), itemBytes, s), times(len, leaf.width(), s),
            spec.name(), "values of array '" + s.name() + "'");
        ByteBuffer v = valid[depth];
        ByteBuffer out;
        if (cur.isRange() && v == null) {
          out = vb.slice((int) (cur.start * itemBytes), (int) (n * itemBytes));
        } else {
          out = values(n * itemBytes);
          int ib = (int) itemBytes;
          for (int i = 0; i < n; i++) {
            if (valid(v, i)) {
              out.put(i * ib, vb, (int) (cur.at(i) * itemBytes), ib);
            } else {
              zero(out, i * ib, ib);
            }
          }
        }
        return fixedValues(out, n);
      }
      case BOOL: {
        ByteBuffer bits = data.buffer(s.node(), 1, (times(cur.limit(), mul, s) + 7) >>> 3, (len + 7) >>> 3,
            spec.name(), "values of array '" + s.name() + "'");
        ByteBuffer v = valid[depth];
        int m = (int) mul;
        ByteBuffer out = values((long) n * m);
        for (int i = 0; i < n; i++) {
          long base = cur.at(i) * m;
          boolean ok = valid(v, i);
          for (int j = 0; j < m; j++) {
            out.put(i * m + j, (byte) (ok && bit(bits, base + j) ? 1 : 0));
          }
        }
        return fixedValues(out, n);
      }
      case PART:
      case DECIMAL:
        return LeafValues.converted(this, s, leaf, cur, mul, valid[depth], n, len);
      case TYPE_ID: {
        ByteBuffer ids = data.buffer(s.node(), 0, cur.limit(), len, spec.name(), "type ids of array '" + s.name() + "'");
        ByteBuffer out = values(n);
        for (int i = 0; i < n; i++) {
          out.put(i, valid(valid[depth], i) ? ids.get((int) cur.at(i)) : 0);
        }
        return fixedValues(out, n);
      }
      case NULL: {
        if (mul != 1) {
          throw unsupported("null values inside a fixed-size list (array '" + s.name() + "'); a fixed-shape Sluice "
              + "tensor has no null elements");
        }
        for (int i = 0; i < n; i++) {
          valid[depth] = markNull(depth, i, n, valid[depth]);
        }
        ByteBuffer out = values(n);
        zero(out, 0, n);
        return fixedValues(out, n);
      }
      case VIEW:
        return ColumnEncodings.views(this, s, cur, valid[depth], n, len, offsets);
      case BINARY32:
      case BINARY64:
        return LeafValues.binary(this, s, leaf, cur, valid[depth], n, len, offsets);
      case FIXED_BINARY:
        return LeafValues.fixedBinary(this, s, leaf, cur, valid[depth], n, len, offsets);
      case DICTIONARY:
        return LeafValues.dictionary(this, s, leaf, cur, mul, valid, depth, n, len, offsets);
      default:
        throw new IllegalStateException("leaf kind " + leaf.kind());
    }
  }

  /** {@code n} items of fixed-width values of the field's dtype in {@code out}. */
  Tensor fixedValues(ByteBuffer out, int n) {
    return Tensor.wrap(spec.dtype(), spec.itemShape().prepend(n), out);
  }

  // ------------------------------------------------------------------ helpers

  /** Bytes of the {@code n + 1} offsets of {@code w} bytes each of {@code n} items. */
  long offsetBytes(long n, int w, FieldPlan.Step s) {
    if (n == Long.MAX_VALUE) {
      throw format("array '" + s.name() + "': " + n + " items need more offsets than a file can hold");
    }
    return times(n + 1, w, s);
  }

  /** {@code a × b}, or a format error naming array {@code s} when it overflows. */
  long times(long a, long b, FieldPlan.Step s) {
    try {
      return Math.multiplyExact(a, b);
    } catch (ArithmeticException e) {
      throw format("array '" + s.name() + "': " + a + " × " + b + " overflows");
    }
  }

  /** Zeroes {@code len} bytes of {@code b} from {@code from}. */
  static void zero(ByteBuffer b, int from, int len) {
    int i = from;
    int end = from + len;
    for (; i + 8 <= end; i += 8) {
      b.putLong(i, 0L);
    }
    for (; i < end; i++) {
      b.put(i, (byte) 0);
    }
  }

  private String position() {
    return data.position() + ", column '" + spec.name() + "'";
  }

  DatasetFormatException format(String message) {
    return new DatasetFormatException(data.resource(), position(), message);
  }

  UnsupportedFormatException unsupported(String message) {
    return new UnsupportedFormatException(data.resource(), position(), message);
  }

  /** The slots (positions in one array) of the items at one depth: a range, or a list once nulls were cut out. */
  static final class Slots {
    final long start;
    final long end;
    final long[] list;

    private Slots(long start, long end, long[] list) {
      this.start = start;
      this.end = end;
      this.list = list;
    }

    static Slots range(long start, long end) {
      return new Slots(start, end, null);
    }

    static Slots of(long[] list) {
      return new Slots(0, 0, list);
    }

    boolean isRange() {
      return list == null;
    }

    int size() {
      return list == null ? (int) (end - start) : list.length;
    }

    long at(int i) {
      return list == null ? start + i : list[i];
    }

    /** One past the largest slot (0 when empty). */
    long limit() {
      if (list == null) {
        return end > start ? end : 0;
      }
      long max = 0;
      for (long s : list) {
        max = Math.max(max, s + 1);
      }
      return max;
    }

    @Override
    public String toString() {
      return list == null ? "[" + start + ", " + end + ")" : Arrays.toString(list);
    }
  }
}
