package dev.sluice.io.arrow.internal;

import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flatbuf.DictionaryBatch;

/**
 * The values of dictionary batches, decoded once into heap memory (a column of one value per
 * dictionary entry) and shared by every record batch that refers to them; a delta batch appends to
 * the values before it.
 */
final class DictionaryValues {
  private DictionaryValues() {}

  /** The plan of a dictionary batch's single column of {@code values}. */
  static FieldPlan plan(long id, Leaf values) {
    String name = "dictionary " + id;
    TensorSpec spec = new TensorSpec(name, values.dtype(), Shape.scalar(), true);
    return new FieldPlan(spec, List.of(new FieldPlan.Step(0, FieldPlan.Kind.LEAF, 0, 0, false, name, true)), values,
        values.arrowType());
  }

  /** The one array of a dictionary batch and its buffers. */
  static NodeLayout layout(Leaf values) {
    return layout(values, false);
  }

  /** The one array of a dictionary batch and its buffers, whose data is big-endian when {@code bigEndian}. */
  static NodeLayout layout(Leaf values, boolean bigEndian) {
    int buffers = switch (values.kind()) {
      case BINARY32, BINARY64 -> 3;
      default -> 2;
    };
    int unit = switch (values.kind()) {
      case BINARY32 -> 4;
      case BINARY64 -> 8;
      case FIXED, DECIMAL -> values.width();
      default -> 0;
    };
    return new NodeLayout() {
      @Override
      public int nodeCount() {
        return 1;
      }

      @Override
      public int bufferCount(int node) {
        return buffers;
      }

      @Override
      public boolean bigEndian() {
        return bigEndian;
      }

      @Override
      public int swapUnit(int node, int which) {
        return which == 1 ? unit : 0;
      }
    };
  }

  /**
   * Decodes the values of a dictionary batch whose body is {@code body}.
   *
   * @param position where the batch is, for messages
   */
  static Column decode(String resource, String position, DictionaryBatch batch, ByteBuffer body, Leaf values,
      boolean bigEndian) {
    Memory memory = Memory.limited(Memory.heap(), Memory.budget(body.remaining()));
    IpcBatchBuffers data = IpcBatchBuffers.open(resource, position, layout(values, bigEndian), batch.data(), body,
        memory);
    return decode(data, batch.id(), values, memory);
  }

  /** Decodes the dictionary values of {@code data} into {@code memory} (heap memory). */
  static Column decode(BatchBuffers data, long id, Leaf values, Memory memory) {
    long rows = data.rows();
    return ColumnAssembler.assemble(plan(id, values), data, 0, (int) rows, memory, d -> {
      throw new DatasetFormatException(data.resource(), data.position(), "dictionary " + id
          + " is itself dictionary-encoded, which Sluice does not read");
    });
  }

  /** The values of {@code a} followed by those of {@code b} (a delta dictionary batch), in heap memory. */
  static Column concat(Column a, Column b) {
    TensorSpec spec = a.spec();
    int n = Math.addExact(a.size(), b.size());
    Tensor validity = null;
    if (a.hasValidity() || b.hasValidity()) {
      ByteBuffer v = ByteBuffer.allocate(n);
      putValidity(v, 0, a);
      putValidity(v, a.size(), b);
      validity = Tensor.wrap(DType.BOOL, Shape.of(n), v);
    }
    if (!spec.dtype().isVariableLength()) {
      ByteBuffer out = ByteBuffer.allocate(Math.addExact(a.values().byteSize(), b.values().byteSize()))
          .order(ByteOrder.LITTLE_ENDIAN);
      out.put(a.values().data()).put(b.values().data()).flip();
      return Column.of(spec, n, Tensor.wrap(spec.dtype(), Shape.of(n), out), List.of(), validityList(validity));
    }
    ByteBuffer bytes = ByteBuffer.allocate(Math.addExact(a.values().byteSize(), b.values().byteSize()));
    bytes.put(a.values().data()).put(b.values().data()).flip();
    ByteBuffer off = ByteBuffer.allocate((n + 1) * 8).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer ao = a.offsets().data();
    ByteBuffer bo = b.offsets().data();
    for (int i = 0; i <= a.size(); i++) {
      off.putLong(i * 8, ao.getLong(i * 8));
    }
    long base = ao.getLong(a.size() * 8);
    for (int i = 1; i <= b.size(); i++) {
      off.putLong((a.size() + i) * 8, base + bo.getLong(i * 8));
    }
    Tensor offsets = Tensor.wrap(DType.INT64, Shape.of(n + 1L), off);
    return Column.of(spec, n, Tensor.wrapVariable(spec.dtype(), bytes, off), List.of(offsets), validityList(validity));
  }

  private static List<Tensor> validityList(Tensor validity) {
    List<Tensor> v = new ArrayList<>(1);
    if (validity != null) {
      v.add(validity);
    }
    return v;
  }

  private static void putValidity(ByteBuffer v, int at, Column c) {
    for (int i = 0; i < c.size(); i++) {
      v.put(at + i, (byte) (c.isValid(i) ? 1 : 0));
    }
  }
}
