package dev.sluice.io.arrow.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import java.nio.ByteBuffer;
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

  /**
   * The values of {@code a} followed by those of {@code b} (a delta dictionary batch), copied
   * through a column builder into heap memory.
   */
  static Column concat(Column a, Column b) {
    Schema schema = Schema.of(a.spec());
    int n = Math.addExact(a.size(), b.size());
    try (BatchBuilder out = BatchBuilder.onHeap(schema, Math.max(1, n))) {
      append(out, schema, a);
      append(out, schema, b);
      return out.build().column(0);
    }
  }

  private static void append(BatchBuilder out, Schema schema, Column c) {
    if (c.size() > 0) {
      try (Batch source = Batch.of(schema, List.of(c), new long[c.size()], () -> { })) {
        out.appendRange(source, 0, c.size());
      }
    }
  }
}
