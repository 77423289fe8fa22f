package dev.sluice.io.arrow.internal;

import dev.sluice.core.DType;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import java.nio.ByteBuffer;
import java.util.List;
import dev.sluice.io.arrow.internal.ColumnAssembler.ListLevel;
import dev.sluice.io.arrow.internal.ColumnAssembler.Slots;

/**
 * The Arrow layouts that {@link ColumnAssembler} resolves to plain slots, offsets and bytes before
 * it assembles a column: union members, run-end encoded runs, list views and binary/UTF-8 views.
 * Static: each takes the assembler whose record batch, memory and messages it uses.
 */
final class ColumnEncodings {
  private ColumnEncodings() {}

  /**
   * The slots in the member array of union step {@code s} of the items {@code cur}: an item whose
   * type id is another member's becomes null (and absent, slot -1, in a dense union).
   */
  static Slots member(ColumnAssembler a, FieldPlan.Step s, Slots cur, ByteBuffer[] valid, int depth) {
    int n = cur.size();
    long len = a.data.length(s.node());
    boolean dense = s.kind() == FieldPlan.Kind.DENSE_MEMBER;
    ByteBuffer ids = n == 0 ? null : a.data.buffer(s.node(), 0, cur.limit(), len, a.spec.name(),
        "type ids of array '" + s.name() + "'");
    ByteBuffer ob = !dense || n == 0 ? null : a.data.buffer(s.node(), 1, cur.limit() * 4, len * 4, a.spec.name(),
        "offsets of array '" + s.name() + "'");
    long[] child = dense ? new long[n] : null;
    ByteBuffer v = valid[depth];
    for (int i = 0; i < n; i++) {
      long slot = cur.at(i);
      boolean here = slot >= 0 && ColumnAssembler.valid(v, i) && ids.get((int) slot) == s.size();
      if (!here) {
        v = a.markNull(depth, i, n, v);
      }
      if (dense) {
        long o = here ? ob.getInt((int) (slot * 4)) : -1;
        if (here && o < 0) {
          throw a.format("item " + i + " of dense union '" + s.name() + "' has offset " + o);
        }
        child[i] = o;
      }
    }
    valid[depth] = v;
    return dense ? Slots.of(child) : cur;
  }

  /** The slots in the values array of run-end encoded step {@code s} of the (logical) items {@code cur}. */
  static Slots runs(ColumnAssembler a, FieldPlan.Step s, Slots cur, ByteBuffer v) {
    int n = cur.size();
    int w = s.size();
    int endsNode = s.node() + 1;
    long runs = a.data.length(endsNode);
    ByteBuffer eb = runs == 0 ? null : a.data.buffer(endsNode, 1, runs * w, runs * w, a.spec.name(),
        "run ends of array '" + s.name() + "'");
    long previous = 0;
    for (long r = 0; r < runs; r++) {
      long end = runEnd(eb, w, r);
      if (end <= previous) {
        throw a.format("run end " + r + " of array '" + s.name() + "' is " + end + " but must exceed " + previous);
      }
      previous = end;
    }
    long[] physical = new long[n];
    for (int i = 0; i < n; i++) {
      long slot = cur.at(i);
      if (slot < 0 || !ColumnAssembler.valid(v, i)) {
        physical[i] = -1;
        continue;
      }
      if (slot >= previous) {
        throw a.format("row " + slot + " of run-end encoded array '" + s.name() + "' is past its last run end "
            + previous);
      }
      long lo = 0;
      long hi = runs - 1;
      while (lo < hi) { // the first run whose end exceeds the slot
        long mid = (lo + hi) >>> 1;
        if (runEnd(eb, w, mid) > slot) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      physical[i] = lo;
    }
    return Slots.of(physical);
  }

  private static long runEnd(ByteBuffer eb, int w, long r) {
    return switch (w) {
      case 2 -> eb.getShort((int) (r * 2));
      case 4 -> eb.getInt((int) (r * 4));
      default -> eb.getLong((int) (r * 8));
    };
  }

  /** A list view level: each item's elements are [offset, offset + size) of the child, anywhere in it. */
  static ListLevel listView(ColumnAssembler a, FieldPlan.Step s, Slots cur, ByteBuffer v, long childLength,
      int level) {
    int n = cur.size();
    int w = s.kind() == FieldPlan.Kind.VIEW32 ? 4 : 8;
    long len = a.data.length(s.node());
    ByteBuffer ob = null;
    ByteBuffer sb = null;
    if (n > 0) {
      ob = a.data.buffer(s.node(), 1, cur.limit() * w, len * w, a.spec.name(), "offsets of array '" + s.name() + "'");
      sb = a.data.buffer(s.node(), 2, cur.limit() * w, len * w, a.spec.name(), "sizes of array '" + s.name() + "'");
    }
    ByteBuffer o = a.offsets(level, n);
    o.putLong(0, 0);
    long total = 0;
    for (int i = 0; i < n; i++) {
      long slot = cur.at(i);
      if (slot >= 0 && ColumnAssembler.valid(v, i)) {
        long st = ColumnAssembler.offset(ob, w, slot);
        long size = ColumnAssembler.offset(sb, w, slot);
        if (st < 0 || size < 0 || st > childLength || size > childLength - st) {
          throw a.format("list view " + i + " of array '" + s.name() + "' spans [" + st + ", " + st + " + " + size
              + ") but its elements are [0, " + childLength + ")");
        }
        total += size;
        if (total > Integer.MAX_VALUE - 8) {
          throw a.unsupported("the list views of array '" + s.name() + "' hold more than " + (Integer.MAX_VALUE - 8)
              + " elements in one record batch");
        }
      }
      o.putLong((i + 1) * 8, total);
    }
    a.memory.charge(total * 8);
    long[] child = new long[(int) total];
    int at = 0;
    for (int i = 0; i < n; i++) {
      long slot = cur.at(i);
      if (slot >= 0 && ColumnAssembler.valid(v, i)) {
        long st = ColumnAssembler.offset(ob, w, slot);
        long en = st + ColumnAssembler.offset(sb, w, slot);
        for (long c = st; c < en; c++) {
          child[at++] = c;
        }
      }
    }
    return new ListLevel(Tensor.wrap(DType.INT64, Shape.of(n + 1L), o), Slots.of(child));
  }

  /** Binary and UTF-8 views materialized as offsets and bytes. */
  static Tensor views(ColumnAssembler a, FieldPlan.Step s, Slots cur, ByteBuffer v, int n, long len,
      List<Tensor> offsets) {
    ByteBuffer vb = n == 0 ? null : a.data.buffer(s.node(), 1, cur.limit() * 16, len * 16, a.spec.name(),
        "views of array '" + s.name() + "'");
    int variadic = a.data.bufferCount(s.node()) - 2;
    ByteBuffer[] blocks = new ByteBuffer[Math.max(0, variadic)];
    ByteBuffer off = a.offsets(offsets.size(), n);
    off.putLong(0, 0);
    long total = 0;
    for (int i = 0; i < n; i++) {
      long slot = cur.at(i);
      if (slot >= 0 && ColumnAssembler.valid(v, i)) {
        int p = (int) (slot * 16);
        int size = vb.getInt(p);
        if (size < 0) {
          throw a.format("view " + i + " of array '" + s.name() + "' has length " + size);
        }
        if (size > 12) {
          int block = vb.getInt(p + 8);
          long start = vb.getInt(p + 12) & 0xffffffffL;
          if (block < 0 || block >= blocks.length) {
            throw a.format("view " + i + " of array '" + s.name() + "' points into data buffer " + block + " of "
                + blocks.length);
          }
          if (blocks[block] == null) {
            // no bound from the views alone: a compressed data buffer is held to the memory budget instead
            blocks[block] = a.data.buffer(s.node(), 2 + block, 0, Integer.MAX_VALUE - 8, a.spec.name(), "data buffer "
                + block + " of array '" + s.name() + "'");
          }
          if (start + size > blocks[block].remaining()) {
            throw a.format("view " + i + " of array '" + s.name() + "' spans bytes [" + start + ", " + (start + size)
                + ") of data buffer " + block + " which holds " + blocks[block].remaining());
          }
        }
        total += size;
        if (total > Integer.MAX_VALUE - 8) {
          throw a.unsupported("array '" + s.name() + "' holds more than " + (Integer.MAX_VALUE - 8)
              + " bytes of values in one record batch");
        }
      }
      off.putLong((i + 1) * 8, total);
    }
    ByteBuffer bytes = a.values(total);
    int at = 0;
    for (int i = 0; i < n; i++) {
      long slot = cur.at(i);
      if (slot >= 0 && ColumnAssembler.valid(v, i)) {
        int p = (int) (slot * 16);
        int size = vb.getInt(p);
        if (size > 12) {
          bytes.put(at, blocks[vb.getInt(p + 8)], vb.getInt(p + 12), size);
        } else {
          bytes.put(at, vb, p + 4, size);
        }
        at += size;
      }
    }
    offsets.add(Tensor.wrap(DType.INT64, Shape.of(n + 1L), off));
    return Tensor.wrapVariable(a.spec.dtype(), bytes, off);
  }
}
