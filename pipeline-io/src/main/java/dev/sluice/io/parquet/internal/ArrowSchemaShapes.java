package dev.sluice.io.parquet.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads the list lengths pyarrow declares in a file's {@code ARROW:schema} footer entry (a
 * base64 Arrow IPC schema message): every {@code FixedSizeList<n>} field, by its Parquet output
 * name ({@code x}, or {@code s.x} inside a struct). A minimal flatbuffer walk, no Arrow dependency;
 * anything unexpected yields no declarations rather than an error (the lists then read as
 * variable-length).
 */
final class ArrowSchemaShapes {
  private static final int HEADER_SCHEMA = 1;
  private static final int TYPE_STRUCT = 13;
  private static final int TYPE_FIXED_SIZE_LIST = 16;

  private final ByteBuffer buf;

  private ArrowSchemaShapes(ByteBuffer buf) {
    this.buf = buf;
  }

  /** Output name → declared list length; empty when the value is absent or not understood. */
  static Map<String, Long> parse(String base64) {
    Map<String, Long> out = new LinkedHashMap<>();
    if (base64 == null || base64.isEmpty()) {
      return out;
    }
    try {
      byte[] raw = Base64.getDecoder().decode(base64.trim());
      ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
      int start = b.getInt(0) == -1 ? 8 : 4; // continuation marker + length, or the legacy length prefix
      ByteBuffer fb = b.slice(start, raw.length - start).order(ByteOrder.LITTLE_ENDIAN);
      new ArrowSchemaShapes(fb).message(out);
    } catch (RuntimeException e) {
      out.clear();
    }
    return out;
  }

  private void message(Map<String, Long> out) {
    int msg = buf.getInt(0);
    int headerType = field(msg, 1) == 0 ? 0 : buf.get(field(msg, 1)) & 0xFF;
    if (headerType != HEADER_SCHEMA) {
      return;
    }
    int schema = indirect(field(msg, 2));
    fields(vector(schema, 1), "", out);
  }

  private void fields(int vec, String prefix, Map<String, Long> out) {
    if (vec < 0) {
      return;
    }
    int n = buf.getInt(vec);
    for (int i = 0; i < n; i++) {
      int elem = vec + 4 + 4 * i;
      int f = elem + buf.getInt(elem);
      String name = prefix + string(f, 0);
      int typeType = field(f, 2) == 0 ? 0 : buf.get(field(f, 2)) & 0xFF;
      if (typeType == TYPE_FIXED_SIZE_LIST) {
        int t = indirect(field(f, 3));
        int size = field(t, 0) == 0 ? 0 : buf.getInt(field(t, 0));
        out.put(name, (long) size);
      } else if (typeType == TYPE_STRUCT) {
        fields(vector(f, 5), name + ".", out);
      }
    }
  }

  /** Absolute position of field {@code i} of the table at {@code table}, or 0 when absent. */
  private int field(int table, int i) {
    int vtable = table - buf.getInt(table);
    int vsize = buf.getShort(vtable) & 0xFFFF;
    int slot = 4 + 2 * i;
    if (slot >= vsize) {
      return 0;
    }
    int off = buf.getShort(vtable + slot) & 0xFFFF;
    return off == 0 ? 0 : table + off;
  }

  private int indirect(int pos) {
    if (pos == 0) {
      throw new IllegalStateException("absent table");
    }
    return pos + buf.getInt(pos);
  }

  private int vector(int table, int i) {
    int pos = field(table, i);
    return pos == 0 ? -1 : indirect(pos);
  }

  private String string(int table, int i) {
    int pos = field(table, i);
    if (pos == 0) {
      return "";
    }
    int s = indirect(pos);
    int len = buf.getInt(s);
    byte[] b = new byte[len];
    buf.get(s + 4, b);
    return new String(b, java.nio.charset.StandardCharsets.UTF_8);
  }
}
