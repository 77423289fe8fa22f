package dev.sluice.io.arrow.internal;

import dev.sluice.core.DatasetFormatException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/** The field nodes and buffers of Arrow Java vectors, unloaded into an {@link ArrowRecordBatch}. */
final class RecordBatchBuffers implements BatchBuffers {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN);

  private final String resource;
  private final String position;
  private final ArrowRecordBatch batch;
  private final List<ArrowFieldNode> nodes;
  private final List<ArrowBuf> buffers;
  private final int[] bufferStart;

  RecordBatchBuffers(String resource, String position, NodeLayout layout, ArrowRecordBatch batch) {
    this.resource = resource;
    this.position = position;
    this.batch = batch;
    this.nodes = batch.getNodes();
    this.buffers = batch.getBuffers();
    if (nodes.size() != layout.nodeCount()) {
      throw new DatasetFormatException(resource, position, "the schema has " + layout.nodeCount()
          + " arrays but the vectors have " + nodes.size());
    }
    bufferStart = new int[nodes.size() + 1];
    List<Long> variadic = batch.getVariadicBufferCounts();
    int v = 0;
    for (int i = 0; i < nodes.size(); i++) {
      int n = layout.bufferCount(i);
      if (n < 0) {
        n = 2 + (variadic == null || v >= variadic.size() ? 0 : (int) (long) variadic.get(v++));
      }
      bufferStart[i + 1] = bufferStart[i] + n;
    }
    if (bufferStart[nodes.size()] != buffers.size()) {
      throw new DatasetFormatException(resource, position, "the schema needs " + bufferStart[nodes.size()]
          + " buffers but the vectors have " + buffers.size());
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
    return batch.getLength();
  }

  @Override
  public long length(int node) {
    return nodes.get(node).getLength();
  }

  @Override
  public long nullCount(int node) {
    return nodes.get(node).getNullCount();
  }

  @Override
  public int bufferCount(int node) {
    return bufferStart[node + 1] - bufferStart[node];
  }

  @Override
  public ByteBuffer buffer(int node, int which, long required, long whole, String column, String what) {
    ArrowBuf b = buffers.get(bufferStart[node] + which);
    long n = b.readableBytes();
    if (n < required) {
      throw new DatasetFormatException(resource, position + ", column '" + column + "'", what + " holds " + n + " bytes but " + required
          + " are needed");
    }
    if (n == 0) {
      return EMPTY;
    }
    return b.nioBuffer(b.readerIndex(), (int) n).order(ByteOrder.LITTLE_ENDIAN);
  }
}
