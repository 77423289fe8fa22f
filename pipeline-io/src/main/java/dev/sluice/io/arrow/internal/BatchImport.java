package dev.sluice.io.arrow.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Schema;
import dev.sluice.core.spi.BufferPool;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.util.DictionaryUtility;

/**
 * Arrow Java vectors as a Sluice batch: the vectors' buffers are unloaded (each retained once) and
 * the columns built over them as over an IPC record batch, sharing what the layouts allow.
 */
public final class BatchImport {
  private BatchImport() {}

  /** The Sluice schema of an Arrow schema in memory format (dictionary fields with their index type). */
  public static Schema schema(org.apache.arrow.vector.types.pojo.Schema arrow, DictionaryProvider provider) {
    SchemaPlan plan = SchemaPlan.of(messageFormat(arrow, provider));
    return SchemaPlan.schemaOf(plan.select("Arrow schema", List.of()));
  }

  /**
   * The rows of {@code root} as a batch whose rows have indices {@code firstIndex, firstIndex + 1,
   * ...}. The batch retains the vectors' buffers: {@code root} may be cleared, reloaded or closed
   * once this returns, but its allocator must stay open until the batch is closed.
   */
  public static Batch batch(VectorSchemaRoot root, DictionaryProvider provider, long firstIndex, BufferPool pool) {
    org.apache.arrow.vector.types.pojo.Schema message = messageFormat(root.getSchema(), provider);
    SchemaPlan plan = SchemaPlan.of(message);
    List<FieldPlan> fields = plan.select("Arrow vectors", List.of());
    Map<Long, Column> dictionaries = new HashMap<>();
    for (Map.Entry<Long, Leaf> e : plan.dictionaries().entrySet()) {
      dictionaries.put(e.getKey(), dictionary(provider, e.getKey(), e.getValue()));
    }
    ArrowRecordBatch rb = new VectorUnloader(root).getRecordBatch();
    Memory memory = Memory.pooled(pool);
    try {
      RecordBatchBuffers data = new RecordBatchBuffers("Arrow vectors", "record batch", plan, rb);
      int rows = root.getRowCount();
      List<Column> cols = new ArrayList<>(fields.size());
      for (FieldPlan p : fields) {
        cols.add(ColumnAssembler.assemble(p, data, 0, rows, memory, id -> dictionaries.get(id)));
      }
      long[] indices = new long[rows];
      for (int i = 0; i < rows; i++) {
        indices[i] = firstIndex + i;
      }
      return Batch.of(SchemaPlan.schemaOf(fields), cols, indices, () -> {
        try {
          memory.close();
        } finally {
          rb.close();
        }
      });
    } catch (RuntimeException e) {
      memory.close();
      rb.close();
      throw e;
    }
  }

  private static org.apache.arrow.vector.types.pojo.Schema messageFormat(org.apache.arrow.vector.types.pojo.Schema s,
      DictionaryProvider provider) {
    List<Field> fields = new ArrayList<>(s.getFields().size());
    for (Field f : s.getFields()) {
      fields.add(provider == null ? f : DictionaryUtility.toMessageFormat(f, provider, new HashSet<>()));
    }
    return new org.apache.arrow.vector.types.pojo.Schema(fields, s.getCustomMetadata());
  }

  private static Column dictionary(DictionaryProvider provider, long id, Leaf values) {
    Dictionary d = provider == null ? null : provider.lookup(id);
    if (d == null) {
      throw new DatasetFormatException("Arrow vectors", null, "dictionary " + id + " is not in the dictionary provider");
    }
    FieldVector v = d.getVector();
    VectorSchemaRoot one = new VectorSchemaRoot(Arrays.asList(v)); // not closed: the vector is the provider's
    try (ArrowRecordBatch rb = new VectorUnloader(one).getRecordBatch()) {
      return DictionaryValues.decode(new RecordBatchBuffers("Arrow vectors", "dictionary " + id,
          DictionaryValues.layout(values), rb), id, values, Memory.heap());
    }
  }
}
