package dev.sluice.io.arrow;

import com.google.flatbuffers.FlatBufferBuilder;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import org.apache.arrow.flatbuf.BodyCompression;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.Endianness;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flatbuf.Schema;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The messages of an Arrow IPC stream as bytes, for tests that damage one field of one message:
 * where each message and body is, and a record batch or schema message rebuilt with a change.
 */
final class IpcBytes {
  /** One message of a stream. */
  record Msg(int start, int metaStart, int metaLength, int bodyStart, int bodyLength, Message message) {
    int end() {
      return bodyStart + bodyLength;
    }

    RecordBatch recordBatch() {
      return (RecordBatch) message.header(new RecordBatch());
    }
  }

  private IpcBytes() {}

  /** The messages of a stream (continuation markers required), up to the end-of-stream marker. */
  static List<Msg> messages(byte[] stream) {
    ByteBuffer b = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN);
    List<Msg> out = new ArrayList<>();
    int pos = 0;
    while (pos + 8 <= stream.length && b.getInt(pos + 4) != 0) {
      int len = b.getInt(pos + 4);
      ByteBuffer meta = ByteBuffer.wrap(stream, pos + 8, len).slice().order(ByteOrder.LITTLE_ENDIAN);
      Message m = Message.getRootAsMessage(meta);
      int bodyStart = pos + 8 + len;
      out.add(new Msg(pos, pos + 8, len, bodyStart, (int) m.bodyLength(), m));
      pos = bodyStart + (int) m.bodyLength();
    }
    return out;
  }

  /** The record batches of a stream. */
  static List<Msg> recordBatches(byte[] stream) {
    return messages(stream).stream().filter(m -> m.message().headerType() == MessageHeader.RecordBatch).toList();
  }

  /** Where buffer {@code i} of record batch {@code m} starts in the stream: {offset in the file, length}. */
  static long[] buffer(Msg m, int i) {
    Buffer buf = m.recordBatch().buffers(i);
    return new long[] {m.bodyStart() + buf.offset(), buf.length()};
  }

  /** {@code stream} with message {@code m}'s metadata replaced by {@code meta} (padded to 8 bytes). */
  static byte[] replaceMetadata(byte[] stream, Msg m, byte[] meta) {
    int padded = (meta.length + 7) / 8 * 8;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(stream, 0, m.start());
    ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(-1).putInt(padded);
    out.writeBytes(prefix.array());
    out.writeBytes(Arrays.copyOf(meta, padded));
    out.write(stream, m.bodyStart(), stream.length - m.bodyStart());
    return out.toByteArray();
  }

  /** Record batch {@code m} rebuilt with its buffers' {offset, length} pairs changed by {@code edit}. */
  static byte[] recordBatchWith(Msg m, UnaryOperator<long[][]> edit) {
    return recordBatchWith(m, edit, UnaryOperator.identity());
  }

  /**
   * Record batch {@code m} rebuilt with its buffers' {offset, length} pairs changed by {@code edit}
   * and its field nodes' {length, null count} pairs changed by {@code editNodes}.
   */
  static byte[] recordBatchWith(Msg m, UnaryOperator<long[][]> edit, UnaryOperator<long[][]> editNodes) {
    RecordBatch rb = m.recordBatch();
    long[][] buffers = new long[rb.buffersLength()][];
    for (int i = 0; i < buffers.length; i++) {
      Buffer b = rb.buffers(i);
      buffers[i] = new long[] {b.offset(), b.length()};
    }
    buffers = edit.apply(buffers);
    long[][] fieldNodes = new long[rb.nodesLength()][];
    for (int i = 0; i < fieldNodes.length; i++) {
      FieldNode n = rb.nodes(i);
      fieldNodes[i] = new long[] {n.length(), n.nullCount()};
    }
    fieldNodes = editNodes.apply(fieldNodes);
    FlatBufferBuilder fb = new FlatBufferBuilder();
    RecordBatch.startNodesVector(fb, fieldNodes.length);
    for (int i = fieldNodes.length - 1; i >= 0; i--) {
      FieldNode.createFieldNode(fb, fieldNodes[i][0], fieldNodes[i][1]);
    }
    int nodes = fb.endVector();
    RecordBatch.startBuffersVector(fb, buffers.length);
    for (int i = buffers.length - 1; i >= 0; i--) {
      Buffer.createBuffer(fb, buffers[i][0], buffers[i][1]);
    }
    int bufs = fb.endVector();
    BodyCompression c = rb.compression();
    int compression = c == null ? 0 : BodyCompression.createBodyCompression(fb, c.codec(), c.method());
    RecordBatch.startRecordBatch(fb);
    RecordBatch.addLength(fb, rb.length());
    RecordBatch.addNodes(fb, nodes);
    RecordBatch.addBuffers(fb, bufs);
    if (c != null) {
      RecordBatch.addCompression(fb, compression);
    }
    int header = RecordBatch.endRecordBatch(fb);
    fb.finish(Message.createMessage(fb, m.message().version(), MessageHeader.RecordBatch, header,
        m.message().bodyLength(), 0));
    return fb.sizedByteArray();
  }

  /** A schema message of {@code fields} declaring the given endianness. */
  static byte[] schemaMessage(List<Field> fields, short endianness) {
    FlatBufferBuilder fb = new FlatBufferBuilder();
    int[] offsets = new int[fields.size()];
    for (int i = 0; i < offsets.length; i++) {
      offsets[i] = fields.get(i).getField(fb);
    }
    int fv = Schema.createFieldsVector(fb, offsets);
    Schema.startSchema(fb);
    Schema.addEndianness(fb, endianness);
    Schema.addFields(fb, fv);
    int schema = Schema.endSchema(fb);
    fb.finish(Message.createMessage(fb, org.apache.arrow.flatbuf.MetadataVersion.V5, MessageHeader.Schema, schema, 0, 0));
    return fb.sizedByteArray();
  }

  static short big() {
    return Endianness.Big;
  }
}
