package dev.sluice.io.arrow.internal;

import dev.sluice.core.Column;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.internal.mapped.FileInput;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;

/**
 * The structure of a mapped Arrow IPC file or stream: its schema, where every record batch and
 * dictionary batch is, and how many rows each record batch has. For the file format it comes from
 * the footer (each block's message metadata is read and checked, never its body); for the stream
 * format from one pass over the message headers, skipping the bodies. No body byte is read here.
 */
final class IpcFile {
  /** The magic bytes at both ends of an Arrow IPC file. */
  static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

  /** Which of the two IPC formats. */
  enum Kind { FILE, STREAM }

  /** One record batch: its message, its rows and the dictionaries it sees. */
  record BatchRef(int number, IpcMessages.Parsed message, long rows, Map<Long, DictionaryChain> dictionaries) { }

  private final Kind kind;
  private final org.apache.arrow.vector.types.pojo.Schema schema;
  private final List<BatchRef> batches;

  private final boolean bigEndian;

  private IpcFile(Kind kind, org.apache.arrow.vector.types.pojo.Schema schema, boolean bigEndian,
      List<BatchRef> batches) {
    this.kind = kind;
    this.schema = schema;
    this.bigEndian = bigEndian;
    this.batches = batches;
  }

  /** True when the record batches' data is big-endian. */
  boolean bigEndian() {
    return bigEndian;
  }

  Kind kind() {
    return kind;
  }

  org.apache.arrow.vector.types.pojo.Schema schema() {
    return schema;
  }

  List<BatchRef> batches() {
    return batches;
  }

  /**
   * Reads the structure of {@code f}: the file format when it starts with {@code ARROW1}, else the
   * stream format.
   *
   * @throws DatasetFormatException naming the file and the byte offset when it is neither, or is
   *     truncated or damaged
   */
  static IpcFile read(FileInput f) {
    long size = f.size();
    String r = f.resource();
    if (size >= MAGIC.length && startsWith(f.region(0, MAGIC.length, "magic"), MAGIC)) {
      return readFile(f);
    }
    if (size >= 4) {
      ByteBuffer head = f.region(0, Math.min(size, 8), "first message");
      if (size >= 4 && "FEA1".equals(ascii(head, 4))) {
        throw new UnsupportedFormatException(r, "byte 0", "a Feather version 1 file; Sluice reads Feather version 2 "
            + "(Arrow IPC). Re-write it with pyarrow.feather.write_feather(table, path, version=2)");
      }
      int first = head.getInt(0);
      if (first == IpcMessages.CONTINUATION || first > 0 && first <= size) {
        return readStream(f);
      }
    }
    throw new DatasetFormatException(r, "byte 0", "not an Arrow IPC file or stream: expected the magic ARROW1 "
        + "or a message, found " + hex(f.region(0, Math.min(size, 8), "first bytes")) + " (" + size + " bytes)");
  }

  private static IpcFile readFile(FileInput f) {
    String r = f.resource();
    long size = f.size();
    long trailer = 4 + MAGIC.length;
    if (size < 8 + trailer) {
      throw new DatasetFormatException(r, "byte " + size, "truncated: an Arrow file of " + size
          + " bytes ends before its footer");
    }
    if (!startsWith(f.region(size - MAGIC.length, MAGIC.length, "trailing magic"), MAGIC)) {
      throw new DatasetFormatException(r, "byte " + (size - MAGIC.length), "truncated or damaged: the file starts "
          + "with ARROW1 but does not end with it (" + size + " bytes)");
    }
    int footerLength = f.region(size - trailer, 4, "footer length").getInt(0);
    long footerStart = size - trailer - footerLength;
    if (footerLength <= 0 || footerStart < 8) {
      throw new DatasetFormatException(r, "byte " + (size - trailer), "footer length " + footerLength
          + " does not fit a file of " + size + " bytes");
    }
    Footer footer;
    org.apache.arrow.flatbuf.Schema fbSchema;
    List<long[]> records = new ArrayList<>();
    List<long[]> dictionaries = new ArrayList<>();
    try {
      footer = Footer.getRootAsFooter(f.region(footerStart, footerLength, "footer"));
      fbSchema = footer.schema();
      Block b = new Block();
      for (int i = 0; i < footer.dictionariesLength(); i++) {
        footer.dictionaries(b, i);
        dictionaries.add(new long[] {b.offset(), b.metaDataLength(), b.bodyLength()});
      }
      for (int i = 0; i < footer.recordBatchesLength(); i++) {
        footer.recordBatches(b, i);
        records.add(new long[] {b.offset(), b.metaDataLength(), b.bodyLength()});
      }
    } catch (RuntimeException e) {
      throw new DatasetFormatException(r, "footer at byte " + footerStart, "malformed footer (" + e + ")", e);
    }
    if (fbSchema == null) {
      throw new DatasetFormatException(r, "footer at byte " + footerStart, "the footer has no schema");
    }
    org.apache.arrow.vector.types.pojo.Schema schema = IpcMessages.schema(fbSchema, r);
    boolean bigEndian = IpcMessages.bigEndian(fbSchema);
    Map<Long, DictionaryChain> chains = new HashMap<>();
    for (int i = 0; i < dictionaries.size(); i++) {
      String where = "dictionary batch " + i;
      IpcMessages.Parsed p = block(f, dictionaries.get(i), footerStart, where, MessageHeader.DictionaryBatch);
      DictionaryBatch d = IpcMessages.dictionaryBatch(p.message(), r, where);
      long id = d.id();
      DictionaryChain previous = chains.get(id);
      if (d.isDelta()) {
        if (previous == null) {
          throw new DatasetFormatException(r, where, "a delta for dictionary " + id + " before the dictionary itself");
        }
      } else if (previous != null) {
        throw new DatasetFormatException(r, where, "dictionary " + id + " is defined twice; the file format does "
            + "not allow replacing a dictionary");
      }
      chains.put(id, new DictionaryChain(id, d.isDelta() ? previous : null, p, where, bigEndian));
    }
    Map<Long, DictionaryChain> all = Collections.unmodifiableMap(chains);
    List<BatchRef> batches = new ArrayList<>(records.size());
    for (int i = 0; i < records.size(); i++) {
      String where = "record batch " + i;
      IpcMessages.Parsed p = block(f, records.get(i), footerStart, where, MessageHeader.RecordBatch);
      batches.add(new BatchRef(i, p, rows(p, r, where), all));
    }
    return new IpcFile(Kind.FILE, schema, bigEndian, List.copyOf(batches));
  }

  /** The message of a footer block, checked against the block. */
  private static IpcMessages.Parsed block(FileInput f, long[] block, long limit, String where, byte expected) {
    String r = f.resource();
    long offset = block[0];
    long metaLength = block[1];
    long bodyLength = block[2];
    if (offset < 8 || metaLength < 8 || bodyLength < 0 || offset > limit || metaLength > limit - offset
        || bodyLength > limit - offset - metaLength) {
      throw new DatasetFormatException(r, where, "footer block [offset " + offset + ", metadata " + metaLength
          + " bytes, body " + bodyLength + " bytes] lies outside the data (which ends at byte " + limit + ")");
    }
    IpcMessages.Parsed p = parseAt(f, offset, limit, where);
    if (p == null) {
      throw new DatasetFormatException(r, where, "footer block at byte " + offset + " points at an end-of-stream marker");
    }
    if (p.bodyOffset() != offset + metaLength || p.bodyLength() != bodyLength) {
      throw new DatasetFormatException(r, where, "footer block says the body is " + bodyLength + " bytes at byte "
          + (offset + metaLength) + " but the message says " + p.bodyLength() + " bytes at byte " + p.bodyOffset());
    }
    if (p.type() != expected) {
      throw new DatasetFormatException(r, where, "expected a " + IpcMessages.typeName(expected) + " message at byte "
          + offset + " but found a " + IpcMessages.typeName(p.type()));
    }
    return p;
  }

  private static IpcFile readStream(FileInput f) {
    String r = f.resource();
    long size = f.size();
    IpcMessages.Parsed first = parseAt(f, 0, size, "schema message");
    if (first == null || first.type() != MessageHeader.Schema) {
      throw new DatasetFormatException(r, "byte 0", "an Arrow stream starts with a schema message but this one starts "
          + "with " + (first == null ? "an end-of-stream marker" : "a " + IpcMessages.typeName(first.type())));
    }
    org.apache.arrow.flatbuf.Schema fbSchema = IpcMessages.schemaHeader(first.message(), r, "schema message");
    org.apache.arrow.vector.types.pojo.Schema schema = IpcMessages.schema(fbSchema, r);
    boolean bigEndian = IpcMessages.bigEndian(fbSchema);
    Map<Long, DictionaryChain> current = Map.of();
    List<BatchRef> batches = new ArrayList<>();
    long pos = first.end();
    for (int dict = 0; ; ) {
      String where = "message at byte " + pos;
      IpcMessages.Parsed p = parseAt(f, pos, size, where);
      if (p == null) {
        break;
      }
      switch (p.type()) {
        case MessageHeader.RecordBatch -> {
          String name = "record batch " + batches.size();
          batches.add(new BatchRef(batches.size(), p, rows(p, r, name), current));
        }
        case MessageHeader.DictionaryBatch -> {
          String name = "dictionary batch " + dict++;
          DictionaryBatch d = IpcMessages.dictionaryBatch(p.message(), r, name);
          long id = d.id();
          DictionaryChain previous = current.get(id);
          if (d.isDelta() && previous == null) {
            throw new DatasetFormatException(r, name, "a delta for dictionary " + id + " before the dictionary itself");
          }
          Map<Long, DictionaryChain> next = new HashMap<>(current);
          next.put(id, new DictionaryChain(id, d.isDelta() ? previous : null, p, name, bigEndian));
          current = Collections.unmodifiableMap(next);
        }
        case MessageHeader.Schema -> throw new DatasetFormatException(r, where, "a second schema message");
        default -> throw new UnsupportedFormatException(r, where, "a " + IpcMessages.typeName(p.type())
            + " message, which is not part of a record batch stream");
      }
      pos = p.end();
    }
    return new IpcFile(Kind.STREAM, schema, bigEndian, List.copyOf(batches));
  }

  private static long rows(IpcMessages.Parsed p, String r, String where) {
    RecordBatch rb = IpcMessages.recordBatch(p.message(), r, where);
    long rows;
    try {
      rows = rb.length();
    } catch (RuntimeException e) {
      throw new DatasetFormatException(r, where, "malformed record batch metadata (" + e + ")", e);
    }
    if (rows < 0 || rows > Integer.MAX_VALUE) {
      throw new DatasetFormatException(r, where, "record batch length " + rows + " is out of range [0, "
          + Integer.MAX_VALUE + "]");
    }
    return rows;
  }

  /**
   * The message at byte {@code pos} (its continuation marker or, in the legacy format, its length),
   * or null at an end-of-stream marker or at {@code limit}.
   */
  static IpcMessages.Parsed parseAt(FileInput f, long pos, long limit, String where) {
    String r = f.resource();
    if (pos == limit) {
      return null;
    }
    if (limit - pos < 4) {
      throw new DatasetFormatException(r, where, "truncated: " + (limit - pos) + " bytes at byte " + pos
          + " where a message starts");
    }
    int a = f.region(pos, 4, "message prefix").getInt(0);
    long metaStart = pos + 4;
    int metaLength = a;
    if (a == IpcMessages.CONTINUATION) {
      if (limit - pos < 8) {
        throw new DatasetFormatException(r, where, "truncated: the message at byte " + pos + " ends inside its prefix");
      }
      metaLength = f.region(pos + 4, 4, "message length").getInt(0);
      metaStart = pos + 8;
    }
    if (metaLength == 0) {
      return null;
    }
    if (metaLength < 0 || metaLength > limit - metaStart) {
      throw new DatasetFormatException(r, where, "the message at byte " + pos + " declares " + metaLength
          + " bytes of metadata but " + (limit - metaStart) + " bytes follow: truncated or damaged");
    }
    ByteBuffer meta = f.region(metaStart, metaLength, "message metadata");
    Message m = IpcMessages.message(meta, r, where);
    long bodyLength;
    byte type;
    try {
      bodyLength = m.bodyLength();
      type = m.headerType();
    } catch (RuntimeException e) {
      throw new DatasetFormatException(r, where, "malformed message metadata (" + e + ")", e);
    }
    long bodyStart = metaStart + metaLength;
    if (bodyLength < 0 || bodyLength > limit - bodyStart) {
      throw new DatasetFormatException(r, where, "the message at byte " + pos + " declares a body of " + bodyLength
          + " bytes but " + (limit - bodyStart) + " bytes follow: truncated or damaged");
    }
    return new IpcMessages.Parsed(m, type, metaStart, metaLength, bodyStart, bodyLength);
  }

  private static boolean startsWith(ByteBuffer b, byte[] magic) {
    for (int i = 0; i < magic.length; i++) {
      if (b.get(i) != magic[i]) {
        return false;
      }
    }
    return true;
  }

  private static String ascii(ByteBuffer b, int n) {
    byte[] a = new byte[Math.min(n, b.remaining())];
    b.duplicate().get(a);
    return new String(a, StandardCharsets.ISO_8859_1);
  }

  private static String hex(ByteBuffer b) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < b.remaining(); i++) {
      sb.append(i > 0 ? " " : "").append(String.format("%02x", b.get(i) & 0xff));
    }
    return sb.length() == 0 ? "nothing" : sb.toString();
  }

  /**
   * A dictionary as a record batch sees it: the batch that defined it and the deltas after it.
   * Its values are decoded on first use and kept (heap memory).
   */
  static final class DictionaryChain {
    final long id;
    final DictionaryChain previous; // the dictionary this batch is a delta of, or null
    final IpcMessages.Parsed message;
    final String position;
    final boolean bigEndian;
    private volatile Column values;

    DictionaryChain(long id, DictionaryChain previous, IpcMessages.Parsed message, String position,
        boolean bigEndian) {
      this.id = id;
      this.previous = previous;
      this.message = message;
      this.position = position;
      this.bigEndian = bigEndian;
    }

    /** The values, decoded from {@code f} with {@code leaf} on first use. */
    Column values(FileInput f, Leaf leaf) {
      Column v = values;
      if (v != null) {
        return v;
      }
      List<DictionaryChain> chain = new ArrayList<>();
      for (DictionaryChain c = this; c != null && c.values == null; c = c.previous) {
        chain.add(c);
      }
      Collections.reverse(chain);
      for (DictionaryChain c : chain) {
        Column own = c.decode(f, leaf);
        c.values = c.previous == null ? own : DictionaryValues.concat(c.previous.values, own);
      }
      return values;
    }

    private Column decode(FileInput f, Leaf leaf) {
      String r = f.resource();
      DictionaryBatch d = IpcMessages.dictionaryBatch(message.message(), r, position);
      ByteBuffer body = f.region(message.bodyOffset(), message.bodyLength(), "body of " + position);
      return DictionaryValues.decode(r, position, d, body, leaf, bigEndian);
    }
  }
}
