package dev.sluice.io.arrow;

import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.internal.OptionalLibrary;
import dev.sluice.io.arrow.internal.BatchExport;
import dev.sluice.io.arrow.internal.BatchImport;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * Sluice batches as Arrow Java vectors and back, sharing memory instead of copying values where the
 * two layouts agree.
 *
 * <p><b>Mapping.</b> A fixed-width column is a primitive vector (bool, int8–uint64, float16–float64;
 * bfloat16 an unsigned 16-bit vector marked {@code sluice.dtype=bfloat16}), a fixed dimension a
 * {@code FixedSizeList}, a ragged level a {@code LargeList} (Sluice's offsets are int64, as Arrow's
 * large types), a string or bytes column {@code LargeUtf8} or {@code LargeBinary}. Arrow to Sluice
 * takes any schema {@link Arrow#open(java.nio.file.Path)} reads (lists with int32 offsets, structs,
 * maps, dictionaries, ...), with the same names and conversions.
 *
 * <p><b>What is shared.</b> Sluice to Arrow: fixed-width values, offsets and string bytes are the
 * batch's own memory (no copy); validity bytes become bitmaps and booleans become bits in the
 * allocator's memory. Arrow to Sluice: fixed-width values, int64 offsets that start at 0 and string
 * bytes are the vectors' memory; int32 offsets are widened, bitmaps become validity bytes, in pooled
 * memory (stage {@value ArrowOptions#STAGE}).
 *
 * <p><b>Ownership.</b> {@link #toArrow} returns a root that the caller closes; its shared buffers
 * keep a handle on the batch (a {@link Batch#retain()}), so the caller may close its own batch
 * handle at once, and the batch's memory is released when the root (or the last vector holding a
 * shared buffer) is closed. {@link #fromArrow} returns a batch that the caller closes; it retains
 * the vectors' buffers, so the root may be cleared, reloaded or closed right away, but the
 * allocator that owns them must stay open until the batch is closed.
 *
 * <p>Every method first checks that Arrow Java (arrow-vector, arrow-memory-netty, netty-buffer,
 * arrow-compression) is on the class path, and throws a
 * {@link dev.sluice.core.MissingDependencyException} naming what to add when it is not.
 */
public final class ArrowBridge {
  private ArrowBridge() {}

  /**
   * The Arrow schema of Sluice fields.
   *
   * @throws UnsupportedOperationException for complex64 and complex128, which Arrow has no type for
   */
  public static org.apache.arrow.vector.types.pojo.Schema toArrowSchema(Schema schema) {
    OptionalLibrary.ARROW.require();
    return BatchExport.schema(schema);
  }

  /**
   * The Sluice fields of an Arrow schema (memory format: a dictionary-encoded field has its index
   * type, and {@code dictionaries} gives the values' type).
   *
   * @param dictionaries the dictionaries of dictionary-encoded fields, or null when there are none
   * @throws dev.sluice.core.UnsupportedFormatException naming a field Sluice cannot represent
   */
  public static Schema toSluiceSchema(org.apache.arrow.vector.types.pojo.Schema schema, DictionaryProvider dictionaries) {
    OptionalLibrary.ARROW.require();
    return BatchImport.schema(schema, dictionaries);
  }

  /**
   * A root holding {@code batch}'s rows, allocated from {@code allocator} (only validity bitmaps and
   * booleans are; the rest is the batch's memory). The caller closes the root.
   *
   * @throws UnsupportedOperationException for a padded column or a complex dtype
   */
  public static VectorSchemaRoot toArrow(Batch batch, BufferAllocator allocator) {
    Objects.requireNonNull(batch, "batch");
    Objects.requireNonNull(allocator, "allocator");
    OptionalLibrary.ARROW.require();
    VectorSchemaRoot root = VectorSchemaRoot.create(BatchExport.schema(batch.schema()), allocator);
    try (ArrowRecordBatch rb = BatchExport.recordBatch(batch, allocator)) {
      new VectorLoader(root).load(rb);
      return root;
    } catch (RuntimeException e) {
      root.close();
      throw e;
    }
  }

  /**
   * The rows of {@code root} as a batch (row indices 0, 1, ...); the caller closes it.
   *
   * @throws dev.sluice.core.UnsupportedFormatException naming a field Sluice cannot represent
   */
  public static Batch fromArrow(VectorSchemaRoot root) {
    return fromArrow(root, null, 0);
  }

  /**
   * The rows of {@code root}, whose dictionary-encoded fields are decoded with {@code dictionaries},
   * as a batch whose rows have indices {@code firstIndex, firstIndex + 1, ...}; the caller closes it.
   *
   * @param dictionaries the dictionaries, or null when no field is dictionary-encoded
   * @param firstIndex the source index of the first row, &gt;= 0
   */
  public static Batch fromArrow(VectorSchemaRoot root, DictionaryProvider dictionaries, long firstIndex) {
    Objects.requireNonNull(root, "root");
    OptionalLibrary.ARROW.require();
    if (firstIndex < 0) {
      throw new IllegalArgumentException("firstIndex >= 0 required but it was " + firstIndex);
    }
    return BatchImport.batch(root, dictionaries, firstIndex, MemoryManager.shared().pool(ArrowOptions.STAGE));
  }
}
