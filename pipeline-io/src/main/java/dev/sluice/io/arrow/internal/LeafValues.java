package dev.sluice.io.arrow.internal;

import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The leaf values {@link ColumnAssembler} writes rather than shares: times, dates and decimals
 * converted one value at a time, strings and binaries (int32 or int64 offsets), fixed-size binaries,
 * and dictionary indices replaced by their values. Each reads the buffers of array {@code s} for the
 * items {@code cur} after checking them against the bytes they must hold, zeroes or cuts out null
 * items, and fails with the assembler's format error naming the file, record batch and column.
 */
final class LeafValues {
  private LeafValues() {}

  /** Times, dates and decimals: one value at a time into the Sluice dtype; nulls are 0. */
  static Tensor converted(ColumnAssembler a, FieldPlan.Step s, Leaf leaf, ColumnAssembler.Slots cur, long mul,
      ByteBuffer v, int n, long len) {
    int w = leaf.width();
    ByteBuffer vb = a.data.buffer(s.node(), 1, a.times(a.times(cur.limit(), mul, s), w, s), a.times(len, w, s),
        a.spec.name(), "values of array '" + s.name() + "'");
    int m = (int) mul;
    int outWidth = a.spec.dtype().byteSize();
    ByteBuffer out = a.values((long) n * m * outWidth);
    byte[] scratch = leaf.kind() == Leaf.Kind.DECIMAL && w > 8 ? new byte[w] : null;
    for (int i = 0; i < n; i++) {
      boolean ok = ColumnAssembler.valid(v, i);
      long base = cur.at(i) * m;
      for (int j = 0; j < m; j++) {
        int at = (i * m + j) * outWidth;
        if (!ok) {
          ColumnAssembler.zero(out, at, outWidth);
          continue;
        }
        int p = (int) ((base + j) * w);
        if (leaf.kind() == Leaf.Kind.PART) {
          out.put(at, vb, p + (int) leaf.scale(), outWidth);
        } else {
          out.putDouble(at, decimal(vb, p, w, (int) leaf.scale(), scratch));
        }
      }
    }
    return a.fixedValues(out, n);
  }

  private static double decimal(ByteBuffer vb, int p, int w, int scale, byte[] scratch) {
    if (w == 4) {
      return BigDecimal.valueOf(vb.getInt(p), scale).doubleValue();
    }
    if (w == 8) {
      return BigDecimal.valueOf(vb.getLong(p), scale).doubleValue();
    }
    for (int b = 0; b < w; b++) {
      scratch[w - 1 - b] = vb.get(p + b); // little-endian two's complement to BigInteger's big-endian
    }
    return new BigDecimal(new BigInteger(scratch), scale).doubleValue();
  }

  /** Strings and binaries with int32 or int64 offsets. */
  static Tensor binary(ColumnAssembler a, FieldPlan.Step s, Leaf leaf, ColumnAssembler.Slots cur, ByteBuffer v,
      int n, long len, List<Tensor> offsets) {
    int w = leaf.kind() == Leaf.Kind.BINARY32 ? 4 : 8;
    ByteBuffer ob = null;
    if (n > 0) {
      ob = a.data.buffer(s.node(), 1, a.offsetBytes(cur.limit(), w, s), a.offsetBytes(len, w, s), a.spec.name(),
          "offsets of array '" + s.name() + "'");
    }
    long maxEnd = 0;
    long total = 0;
    boolean cut = false;
    long first = 0;
    for (int i = 0; i < n; i++) {
      long slot = cur.at(i);
      if (slot < 0) {
        continue;
      }
      long st = ColumnAssembler.offset(ob, w, slot);
      long en = ColumnAssembler.offset(ob, w, slot + 1);
      if (i == 0) {
        first = st;
      }
      if (st < 0 || en < st) {
        throw a.format("value " + i + " of array '" + s.name() + "' spans bytes [" + st + ", " + en + ")"
            + (en < st ? " (offsets decrease)" : ""));
      }
      maxEnd = Math.max(maxEnd, en);
      if (ColumnAssembler.valid(v, i)) {
        total += en - st;
      } else if (en > st) {
        cut = true;
      }
    }
    if (total > Integer.MAX_VALUE - 8) {
      throw a.unsupported("array '" + s.name() + "' holds " + total + " bytes of values in one record batch");
    }
    long whole = maxEnd;
    if (ob != null && ob.remaining() >= a.offsetBytes(len, w, s)) {
      whole = Math.max(whole, ColumnAssembler.offset(ob, w, len));
    }
    ByteBuffer db = a.data.buffer(s.node(), 2, maxEnd, whole, a.spec.name(), "data of array '" + s.name() + "'");
    boolean contiguous = cur.isRange() && !cut;
    ByteBuffer off;
    if (contiguous && w == 8 && n > 0 && first == 0) {
      off = ob.slice((int) (cur.start * 8), (n + 1) * 8);
    } else {
      off = a.offsets(offsets.size(), n);
      long acc = 0;
      off.putLong(0, 0);
      for (int i = 0; i < n; i++) {
        if (ColumnAssembler.valid(v, i)) {
          long slot = cur.at(i);
          acc += ColumnAssembler.offset(ob, w, slot + 1) - ColumnAssembler.offset(ob, w, slot);
        }
        off.putLong((i + 1) * 8, acc);
      }
    }
    ByteBuffer bytes;
    if (contiguous) {
      bytes = db.slice((int) first, (int) total);
    } else {
      bytes = a.values(total);
      int at = 0;
      for (int i = 0; i < n; i++) {
        if (ColumnAssembler.valid(v, i)) {
          long slot = cur.at(i);
          int st = (int) ColumnAssembler.offset(ob, w, slot);
          int l = (int) ColumnAssembler.offset(ob, w, slot + 1) - st;
          bytes.put(at, db, st, l);
          at += l;
        }
      }
    }
    offsets.add(Tensor.wrap(DType.INT64, Shape.of(n + 1L), off));
    return Tensor.wrapVariable(a.spec.dtype(), bytes, off);
  }

  /** Fixed-size binaries as Sluice bytes: the values shared, the offsets made up. */
  static Tensor fixedBinary(ColumnAssembler a, FieldPlan.Step s, Leaf leaf, ColumnAssembler.Slots cur,
      ByteBuffer v, int n, long len, List<Tensor> offsets) {
    int w = leaf.width();
    ByteBuffer db = a.data.buffer(s.node(), 1, a.times(cur.limit(), w, s), a.times(len, w, s),
        a.spec.name(), "values of array '" + s.name() + "'");
    ByteBuffer off = a.offsets(offsets.size(), n);
    long acc = 0;
    off.putLong(0, 0);
    for (int i = 0; i < n; i++) {
      if (ColumnAssembler.valid(v, i)) {
        acc += w;
      }
      off.putLong((i + 1) * 8, acc);
    }
    ByteBuffer bytes;
    if (cur.isRange() && v == null) {
      bytes = db.slice((int) (cur.start * w), n * w);
    } else {
      bytes = a.values(acc);
      int at = 0;
      for (int i = 0; i < n; i++) {
        if (ColumnAssembler.valid(v, i)) {
          bytes.put(at, db, (int) (cur.at(i) * w), w);
          at += w;
        }
      }
    }
    offsets.add(Tensor.wrap(DType.INT64, Shape.of(n + 1L), off));
    return Tensor.wrapVariable(a.spec.dtype(), bytes, off);
  }

  /** Dictionary indices replaced by the dictionary's values; a null value makes the item null. */
  static Tensor dictionary(ColumnAssembler a, FieldPlan.Step s, Leaf leaf, ColumnAssembler.Slots cur,
      long mul, ByteBuffer[] valid, int depth, int n, long len, List<Tensor> offsets) {
    Column dict = a.dictionaries.values(leaf.dictionaryId());
    long size = dict.size();
    int iw = leaf.width();
    int m = (int) mul;
    ByteBuffer ib = a.data.buffer(s.node(), 1, a.times(a.times(cur.limit(), mul, s), iw, s), a.times(len, iw, s),
        a.spec.name(), "indices of array '" + s.name() + "'");
    a.memory.charge((long) n * m * 4);
    int[] index = new int[Math.multiplyExact(n, m)];
    ByteBuffer dictValid = dict.hasValidity() ? dict.validity().data() : null;
    for (int i = 0; i < n; i++) {
      boolean ok = ColumnAssembler.valid(valid[depth], i);
      long base = cur.at(i) * m;
      for (int j = 0; j < m; j++) {
        if (!ok) {
          index[i * m + j] = -1;
          continue;
        }
        int p = (int) ((base + j) * iw);
        long x = switch (iw) {
          case 1 -> leaf.signed() ? ib.get(p) : ib.get(p) & 0xffL;
          case 2 -> leaf.signed() ? ib.getShort(p) : ib.getShort(p) & 0xffffL;
          case 4 -> leaf.signed() ? ib.getInt(p) : ib.getInt(p) & 0xffffffffL;
          default -> ib.getLong(p);
        };
        if (x < 0 || x >= size) {
          throw a.format("item " + i + " has dictionary index " + (leaf.signed() || iw < 8 ? Long.toString(x)
              : Long.toUnsignedString(x)) + " but dictionary " + leaf.dictionaryId() + " holds " + size + " values");
        }
        index[i * m + j] = (int) x;
        if (dictValid != null && dictValid.get((int) x) == 0) {
          if (m != 1) {
            throw a.unsupported("item " + i + " holds a null dictionary value inside a fixed-size list; a fixed-shape "
                + "Sluice tensor has no null elements");
          }
          valid[depth] = a.markNull(depth, i, n, valid[depth]);
          index[i] = -1;
        }
      }
    }
    if (!a.spec.dtype().isVariableLength()) {
      int bs = a.spec.dtype().byteSize();
      ByteBuffer dv = dict.values().data();
      ByteBuffer out = a.values((long) index.length * bs);
      for (int k = 0; k < index.length; k++) {
        if (index[k] < 0) {
          ColumnAssembler.zero(out, k * bs, bs);
        } else {
          out.put(k * bs, dv, index[k] * bs, bs);
        }
      }
      return a.fixedValues(out, n);
    }
    ByteBuffer doff = dict.offsets().data();
    ByteBuffer dbytes = dict.values().data();
    ByteBuffer off = a.offsets(offsets.size(), n);
    long acc = 0;
    off.putLong(0, 0);
    for (int i = 0; i < n; i++) {
      if (index[i] >= 0) {
        acc += doff.getLong((index[i] + 1) * 8) - doff.getLong(index[i] * 8);
      }
      off.putLong((i + 1) * 8, acc);
    }
    if (acc > Integer.MAX_VALUE - 8) {
      throw a.unsupported("array '" + s.name() + "' decodes to " + acc + " bytes of values in one record batch");
    }
    ByteBuffer bytes = a.values(acc);
    int at = 0;
    for (int i = 0; i < n; i++) {
      if (index[i] >= 0) {
        int st = (int) doff.getLong(index[i] * 8);
        int l = (int) doff.getLong((index[i] + 1) * 8) - st;
        bytes.put(at, dbytes, st, l);
        at += l;
      }
    }
    offsets.add(Tensor.wrap(DType.INT64, Shape.of(n + 1L), off));
    return Tensor.wrapVariable(a.spec.dtype(), bytes, off);
  }
}
