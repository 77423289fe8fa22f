package dev.sluice.io.arrow.internal;

import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.UnsupportedFormatException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.Field;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.MetadataVersion;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flatbuf.Schema;

/**
 * Reading IPC metadata (flatbuffers) from untrusted bytes: every access is bounds-checked by the
 * buffer it reads, a schema's nesting and size are bounded before it is converted, and whatever a
 * damaged flatbuffer makes the generated accessors throw becomes a {@link DatasetFormatException}.
 */
final class IpcMessages {
  /** The continuation marker that starts every message since format 0.15. */
  static final int CONTINUATION = 0xFFFFFFFF;
  /** The deepest nesting of fields a schema may have. */
  private static final int MAX_DEPTH = 64;
  /** The most fields (at all levels) a schema may have. */
  private static final int MAX_FIELDS = 100_000;

  private IpcMessages() {}

  /** A parsed message and where it and its body are. */
  record Parsed(Message message, byte type, long metadataOffset, int metadataLength, long bodyOffset,
      long bodyLength) {
    long end() {
      return bodyOffset + bodyLength;
    }
  }

  /**
   * The message whose flatbuffer is {@code meta}.
   *
   * @throws DatasetFormatException when it is not a readable message
   * @throws UnsupportedFormatException for metadata older than version 4 (Arrow 0.8)
   */
  static Message message(ByteBuffer meta, String resource, String position) {
    Message m;
    short version;
    try {
      m = Message.getRootAsMessage(meta.duplicate().order(ByteOrder.LITTLE_ENDIAN));
      version = m.version();
      m.headerType();
      m.bodyLength();
    } catch (RuntimeException e) {
      throw new DatasetFormatException(resource, position, "malformed message metadata (" + e + ")", e);
    }
    if (version < MetadataVersion.V4 || version > MetadataVersion.V5) {
      throw version >= 0 && version < MetadataVersion.V4
          ? new UnsupportedFormatException(resource, position, "metadata version " + MetadataVersion.name(version)
              + " (before Arrow 0.8) is not supported; re-write the file with a current Arrow library")
          : new DatasetFormatException(resource, position, "unknown metadata version " + version);
    }
    return m;
  }

  static String typeName(byte type) {
    return type >= 0 && type < MessageHeader.names.length ? MessageHeader.name(type) : "message type " + type;
  }

  /** The record batch header of {@code m}. */
  static RecordBatch recordBatch(Message m, String resource, String position) {
    try {
      RecordBatch rb = (RecordBatch) m.header(new RecordBatch());
      if (rb == null) {
        throw new DatasetFormatException(resource, position, "record batch message without a header");
      }
      return rb;
    } catch (RuntimeException e) {
      if (e instanceof DatasetFormatException d) {
        throw d;
      }
      throw new DatasetFormatException(resource, position, "malformed record batch metadata (" + e + ")", e);
    }
  }

  /** The dictionary batch header of {@code m}. */
  static DictionaryBatch dictionaryBatch(Message m, String resource, String position) {
    try {
      DictionaryBatch d = (DictionaryBatch) m.header(new DictionaryBatch());
      if (d == null || d.data() == null) {
        throw new DatasetFormatException(resource, position, "dictionary batch message without data");
      }
      d.id();
      d.isDelta();
      return d;
    } catch (RuntimeException e) {
      if (e instanceof DatasetFormatException x) {
        throw x;
      }
      throw new DatasetFormatException(resource, position, "malformed dictionary batch metadata (" + e + ")", e);
    }
  }

  /** The schema header of a schema message. */
  static Schema schemaHeader(Message m, String resource, String position) {
    try {
      Schema s = (Schema) m.header(new Schema());
      if (s == null) {
        throw new DatasetFormatException(resource, position, "schema message without a schema");
      }
      return s;
    } catch (RuntimeException e) {
      if (e instanceof DatasetFormatException x) {
        throw x;
      }
      throw new DatasetFormatException(resource, position, "malformed schema (" + e + ")", e);
    }
  }

  /** True when the data of schema {@code fb}'s record batches is big-endian (read byte-swapped). */
  static boolean bigEndian(Schema fb) {
    return fb.endianness() == Endianness.Big;
  }

  /**
   * The Arrow Java schema of {@code fb}, after checking that its nesting is bounded.
   *
   * @throws DatasetFormatException for a malformed one
   */
  static org.apache.arrow.vector.types.pojo.Schema schema(Schema fb, String resource) {
    try {
      int[] budget = {MAX_FIELDS};
      for (int i = 0; i < fb.fieldsLength(); i++) {
        walk(fb.fields(i), 1, budget, resource);
      }
      return org.apache.arrow.vector.types.pojo.Schema.convertSchema(fb);
    } catch (DatasetFormatException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new DatasetFormatException(resource, "schema", "malformed schema (" + e + ")", e);
    }
  }

  private static void walk(Field f, int depth, int[] budget, String resource) {
    if (f == null) {
      throw new DatasetFormatException(resource, "schema", "malformed schema: a missing field");
    }
    if (depth > MAX_DEPTH || --budget[0] < 0) {
      throw new DatasetFormatException(resource, "schema", "the schema nests fields more than " + MAX_DEPTH
          + " deep or has more than " + MAX_FIELDS + " of them");
    }
    for (int i = 0; i < f.childrenLength(); i++) {
      walk(f.children(i), depth + 1, budget, resource);
    }
  }
}
