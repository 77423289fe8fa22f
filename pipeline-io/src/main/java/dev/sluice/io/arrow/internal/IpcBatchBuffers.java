package dev.sluice.io.arrow.internal;

import dev.sluice.core.DatasetFormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.arrow.flatbuf.BodyCompression;
import org.apache.arrow.flatbuf.BodyCompressionMethod;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.RecordBatch;

/**
 * The field nodes and buffers of one IPC record batch message over its body. Every node and buffer
 * position is read and checked against the body when the batch is opened; buffers are sliced (or,
 * in a compressed batch, decompressed into {@link Memory}) only when asked for.
 */
final class IpcBatchBuffers implements BatchBuffers {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN);

  private final String resource;
  private final String position;
  private final long rows;
  private final long[] nodeLength;
  private final long[] nodeNulls;
  private final int[] bufferStart; // per node, and one past the last
  private final long[] bufferOffset;
  private final long[] bufferLength;
  private final ByteBuffer body;
  private final byte codec; // -1: uncompressed
  private final Memory memory;
  private final ByteBuffer[] decompressed;
  private final NodeLayout layout;
  private final ByteBuffer[] swapped; // big-endian data: each buffer's little-endian copy, made on first use

  private IpcBatchBuffers(String resource, String position, long rows, long[] nodeLength, long[] nodeNulls,
      int[] bufferStart, long[] bufferOffset, long[] bufferLength, ByteBuffer body, byte codec, Memory memory,
      NodeLayout layout) {
    this.resource = resource;
    this.position = position;
    this.rows = rows;
    this.nodeLength = nodeLength;
    this.nodeNulls = nodeNulls;
    this.bufferStart = bufferStart;
    this.bufferOffset = bufferOffset;
    this.bufferLength = bufferLength;
    this.body = body;
    this.codec = codec;
    this.memory = memory;
    this.decompressed = codec < 0 ? null : new ByteBuffer[bufferOffset.length];
    this.layout = layout;
    this.swapped = layout.bigEndian() ? new ByteBuffer[bufferOffset.length] : null;
  }

  /**
   * Reads and checks the nodes and buffer positions of {@code rb} (whose body is {@code body}).
   *
   * @param position where the batch is, for messages ({@code "record batch 3"})
   * @param memory where compressed buffers are decompressed
   * @throws DatasetFormatException when the metadata does not fit the schema or the body
   */
  static IpcBatchBuffers open(String resource, String position, NodeLayout layout, RecordBatch rb, ByteBuffer body,
      Memory memory) {
    try {
      long rows = rb.length();
      if (rows < 0 || rows > Integer.MAX_VALUE) {
        throw new DatasetFormatException(resource, position, "record batch length " + rows
            + (rows < 0 ? " is negative" : " is more than " + Integer.MAX_VALUE + " rows, which Sluice does not read"));
      }
      int nodes = layout.nodeCount();
      if (rb.nodesLength() != nodes) {
        throw new DatasetFormatException(resource, position, "the schema has " + nodes
            + " arrays (field nodes) but the record batch lists " + rb.nodesLength());
      }
      long[] length = new long[nodes];
      long[] nulls = new long[nodes];
      FieldNode fn = new FieldNode();
      for (int i = 0; i < nodes; i++) {
        rb.nodes(fn, i);
        length[i] = fn.length();
        nulls[i] = fn.nullCount();
        if (length[i] < 0 || nulls[i] < 0 || nulls[i] > length[i]) {
          throw new DatasetFormatException(resource, position, "field node " + i + " has length " + length[i]
              + " and null count " + nulls[i] + " (expected 0 <= null count <= length)");
        }
      }
      int[] start = new int[nodes + 1];
      int variadic = 0;
      for (int i = 0; i < nodes; i++) {
        int n = layout.bufferCount(i);
        if (n < 0) {
          if (variadic >= rb.variadicBufferCountsLength()) {
            throw new DatasetFormatException(resource, position, "field node " + i
                + " is a view array but the record batch gives no variadic buffer count for it");
          }
          long v = rb.variadicBufferCounts(variadic++);
          if (v < 0 || v > rb.buffersLength()) {
            throw new DatasetFormatException(resource, position, "variadic buffer count " + v + " of field node " + i
                + " is out of range");
          }
          n = 2 + (int) v;
        }
        if ((long) start[i] + n > Integer.MAX_VALUE) {
          throw new DatasetFormatException(resource, position, "the variadic buffer counts up to field node " + i
              + " add up to more than " + Integer.MAX_VALUE + " buffers");
        }
        start[i + 1] = start[i] + n;
      }
      if (rb.buffersLength() != start[nodes]) {
        throw new DatasetFormatException(resource, position, "the schema needs " + start[nodes]
            + " buffers but the record batch lists " + rb.buffersLength());
      }
      int count = start[nodes];
      long[] offset = new long[count];
      long[] len = new long[count];
      long bodyLength = body.remaining();
      Buffer b = new Buffer();
      for (int i = 0; i < count; i++) {
        rb.buffers(b, i);
        offset[i] = b.offset();
        len[i] = b.length();
        if (offset[i] < 0 || len[i] < 0 || offset[i] > bodyLength || len[i] > bodyLength - offset[i]) {
          throw new DatasetFormatException(resource, position, "buffer " + i + " at [" + offset[i] + ", "
              + java.math.BigInteger.valueOf(offset[i]).add(java.math.BigInteger.valueOf(len[i]))
              + ") lies outside the message body of " + bodyLength + " bytes");
        }
      }
      byte codec = -1;
      BodyCompression c = rb.compression();
      if (c != null) {
        if (c.codec() != Codecs.LZ4_FRAME && c.codec() != Codecs.ZSTD) {
          throw new dev.sluice.core.UnsupportedFormatException(resource, position, "compression codec "
              + c.codec() + " is not one of LZ4_FRAME (0) and ZSTD (1)");
        }
        if (c.method() != BodyCompressionMethod.BUFFER) {
          throw new dev.sluice.core.UnsupportedFormatException(resource, position, "compression method "
              + c.method() + " is not BUFFER (0)");
        }
        codec = c.codec();
      }
      ByteBuffer view = body.slice().order(ByteOrder.LITTLE_ENDIAN);
      return new IpcBatchBuffers(resource, position, rows, length, nulls, start, offset, len, view, codec, memory,
          layout);
    } catch (IndexOutOfBoundsException | IllegalArgumentException | java.nio.BufferUnderflowException e) {
      throw new DatasetFormatException(resource, position, "malformed record batch metadata (" + e + ")", e);
    }
  }

  @Override
  public String resource() {
    return resource;
  }

  @Override
  public String position() {
    return position;
  }

  @Override
  public long rows() {
    return rows;
  }

  @Override
  public long length(int node) {
    return nodeLength[node];
  }

  @Override
  public long nullCount(int node) {
    return nodeNulls[node];
  }

  /** Where buffer {@code which} of array {@code node} starts in the body. */
  long bufferOffset(int node, int which) {
    return bufferOffset[bufferStart[node] + which];
  }

  /** True when the body's data is big-endian, so values are swapped copies rather than views of the body. */
  boolean swapsBytes() {
    return swapped != null;
  }

  /** True when the body's buffers are compressed. */
  boolean compressed() {
    return codec >= 0;
  }

  @Override
  public int bufferCount(int node) {
    return bufferStart[node + 1] - bufferStart[node];
  }

  @Override
  public ByteBuffer buffer(int node, int which, long required, long whole, String column, String what) {
    ByteBuffer b = raw(node, which, required, whole, column, what);
    if (swapped == null || b.remaining() == 0) {
      return b;
    }
    int unit = layout.swapUnit(node, which);
    if (unit == 0 || unit == 1) {
      return b;
    }
    int i = bufferStart[node] + which;
    ByteBuffer s = swapped[i];
    if (s == null) {
      s = swap(b, unit);
      swapped[i] = s;
    }
    return s;
  }

  /** A little-endian copy of big-endian {@code b}, whose values are swapped as {@code unit} says. */
  private ByteBuffer swap(ByteBuffer b, int unit) {
    int n = b.remaining();
    ByteBuffer out = memory.allocate(n);
    out.put(0, b, 0, n);
    switch (unit) {
      case NodeLayout.SWAP_VIEWS -> {
        for (int p = 0; p + 16 <= n; p += 16) {
          int size = Integer.reverseBytes(out.getInt(p));
          out.putInt(p, size);
          if (size > 12) { // prefix bytes as they are, then the buffer index and offset
            out.putInt(p + 8, Integer.reverseBytes(out.getInt(p + 8)));
            out.putInt(p + 12, Integer.reverseBytes(out.getInt(p + 12)));
          }
        }
      }
      case NodeLayout.SWAP_MONTH_DAY_NANO -> {
        for (int p = 0; p + 16 <= n; p += 16) {
          out.putInt(p, Integer.reverseBytes(out.getInt(p)));
          out.putInt(p + 4, Integer.reverseBytes(out.getInt(p + 4)));
          out.putLong(p + 8, Long.reverseBytes(out.getLong(p + 8)));
        }
      }
      case 2 -> {
        for (int p = 0; p + 2 <= n; p += 2) {
          out.putShort(p, Short.reverseBytes(out.getShort(p)));
        }
      }
      case 4 -> {
        for (int p = 0; p + 4 <= n; p += 4) {
          out.putInt(p, Integer.reverseBytes(out.getInt(p)));
        }
      }
      case 8 -> {
        for (int p = 0; p + 8 <= n; p += 8) {
          out.putLong(p, Long.reverseBytes(out.getLong(p)));
        }
      }
      default -> { // a wide decimal: the whole value reversed
        for (int p = 0; p + unit <= n; p += unit) {
          for (int a = p, z = p + unit - 1; a < z; a++, z--) {
            byte x = out.get(a);
            out.put(a, out.get(z));
            out.put(z, x);
          }
        }
      }
    }
    return out;
  }

  private ByteBuffer raw(int node, int which, long required, long whole, String column, String what) {
    String where = position + ", column '" + column + "'";
    int i = bufferStart[node] + which;
    if (i >= bufferStart[node + 1]) {
      throw new IllegalStateException("array " + node + " has no buffer " + which);
    }
    if (required == 0 && bufferLength[i] == 0) {
      return EMPTY;
    }
    if (codec < 0) {
      if (bufferLength[i] < required) {
        throw tooShort(where, what, bufferLength[i], required);
      }
      return slice(bufferOffset[i], bufferLength[i]);
    }
    ByteBuffer d = decompressed[i];
    if (d == null) {
      d = decompress(i, Math.max(required, whole), where, what);
      decompressed[i] = d;
    }
    if (d.remaining() < required) {
      throw tooShort(where, what, d.remaining(), required);
    }
    return d;
  }

  private ByteBuffer decompress(int i, long whole, String where, String what) {
    long len = bufferLength[i];
    if (len == 0) {
      return EMPTY;
    }
    if (len < 8) {
      throw new DatasetFormatException(resource, where, what + ": a compressed buffer of " + len
          + " bytes is shorter than its 8-byte length prefix");
    }
    long declared = body.getLong((int) bufferOffset[i]);
    ByteBuffer src = slice(bufferOffset[i] + 8, len - 8);
    if (declared == -1) {
      return src; // stored uncompressed
    }
    if (declared == 0 && src.remaining() == 0) {
      return EMPTY; // an empty buffer: the length prefix alone
    }
    if (declared < 0 || declared > Integer.MAX_VALUE - 8) {
      throw new DatasetFormatException(resource, where, what + ": a " + Codecs.name(codec)
          + " buffer declares " + declared + " uncompressed bytes (expected 0 to " + (Integer.MAX_VALUE - 8) + ")");
    }
    String bad;
    try {
      bad = Codecs.implausible(codec, src, declared, whole);
    } catch (RuntimeException e) {
      bad = e.toString();
    }
    if (bad != null) {
      throw new DatasetFormatException(resource, where, what + ": a " + Codecs.name(codec)
          + " buffer declares " + declared + " uncompressed bytes but " + bad);
    }
    ByteBuffer dst = memory.allocate(declared);
    long n;
    try {
      n = Codecs.decompress(codec, src, dst);
    } catch (IOException | RuntimeException e) {
      throw new DatasetFormatException(resource, where, what + ": corrupt " + Codecs.name(codec) + " buffer ("
          + e.getMessage() + ")", e);
    }
    if (n != declared) {
      throw new DatasetFormatException(resource, where, what + ": a " + Codecs.name(codec) + " buffer declares "
          + declared + " uncompressed bytes but decompresses to " + (n < 0 ? "more" : String.valueOf(n)));
    }
    return dst.slice(0, (int) declared).order(ByteOrder.LITTLE_ENDIAN);
  }

  private ByteBuffer slice(long offset, long length) {
    return body.slice((int) offset, (int) length).order(ByteOrder.LITTLE_ENDIAN);
  }

  private DatasetFormatException tooShort(String where, String what, long has, long needed) {
    return new DatasetFormatException(resource, where, what + " holds " + has + " bytes but " + needed
        + " are needed");
  }
}
