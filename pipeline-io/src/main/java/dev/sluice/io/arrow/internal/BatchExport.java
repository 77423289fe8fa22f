package dev.sluice.io.arrow.internal;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.RefCount;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Sluice batches as Arrow record batches: a ragged level is a {@code LargeList} (its int64 offsets
 * shared), a fixed dimension a {@code FixedSizeList}, strings and bytes {@code LargeUtf8} and
 * {@code LargeBinary} (offsets and bytes shared), fixed-width values shared. Only validity (bytes
 * to bitmaps) and booleans (bytes to bits) are converted, into the allocator's memory.
 */
public final class BatchExport {
  /** The name of a list's or fixed-size list's child field (pyarrow's). */
  static final String ITEM = "item";

  private BatchExport() {}

  /** The Arrow schema of a Sluice schema. */
  public static Schema schema(dev.sluice.core.Schema schema) {
    List<Field> fields = new ArrayList<>(schema.size());
    for (TensorSpec s : schema.fields()) {
      fields.add(field(s));
    }
    return new Schema(fields);
  }

  /**
   * The Arrow field of a Sluice field.
   *
   * @throws UnsupportedOperationException for a dtype Arrow has no type for (complex64, complex128)
   */
  public static Field field(TensorSpec spec) {
    return level(spec, spec.name(), 0);
  }

  private static Field level(TensorSpec spec, String name, int depth) {
    boolean nullable = spec.nullableAt(depth);
    if (depth < spec.raggedRank()) {
      return new Field(name, new FieldType(nullable, ArrowType.LargeList.INSTANCE, null),
          List.of(level(spec, ITEM, depth + 1)));
    }
    return fixed(spec, name, nullable, 0);
  }

  private static Field fixed(TensorSpec spec, String name, boolean nullable, int i) {
    long[] dims = spec.itemShape().dims();
    if (i < dims.length) {
      if (dims[i] > Integer.MAX_VALUE) {
        throw new UnsupportedOperationException("field '" + spec.name() + "': a fixed dimension of " + dims[i]
            + " is larger than an Arrow fixed-size list");
      }
      return new Field(name, new FieldType(nullable, new ArrowType.FixedSizeList((int) dims[i]), null),
          List.of(fixed(spec, ITEM, false, i + 1)));
    }
    DType d = spec.dtype();
    ArrowType t = switch (d) {
      case BOOL -> ArrowType.Bool.INSTANCE;
      case INT8 -> new ArrowType.Int(8, true);
      case INT16 -> new ArrowType.Int(16, true);
      case INT32 -> new ArrowType.Int(32, true);
      case INT64 -> new ArrowType.Int(64, true);
      case UINT8 -> new ArrowType.Int(8, false);
      case UINT16, BFLOAT16 -> new ArrowType.Int(16, false);
      case UINT32 -> new ArrowType.Int(32, false);
      case UINT64 -> new ArrowType.Int(64, false);
      case FLOAT16 -> new ArrowType.FloatingPoint(FloatingPointPrecision.HALF);
      case FLOAT32 -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
      case FLOAT64 -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
      case STRING -> ArrowType.LargeUtf8.INSTANCE;
      case BYTES -> ArrowType.LargeBinary.INSTANCE;
      case COMPLEX64, COMPLEX128 -> throw new UnsupportedOperationException("field '" + spec.name() + "' is "
          + d + ", which Arrow has no type for; split it into real and imaginary float fields first");
    };
    Map<String, String> meta = d == DType.BFLOAT16 ? Map.of(SchemaPlan.DTYPE_KEY, d.numpyName()) : null;
    return new Field(name, new FieldType(nullable, t, null, meta), null);
  }

  /**
   * The record batch of {@code batch}'s columns. Its buffers share the batch's memory wherever the
   * layouts agree (each such buffer keeps a handle on the batch, released when the last of them is
   * released), so the caller may close its own handle on the batch once the record batch is loaded.
   *
   * @throws UnsupportedOperationException for a padded column or a dtype Arrow has no type for
   */
  public static ArrowRecordBatch recordBatch(Batch batch, BufferAllocator allocator) {
    Holder holder = new Holder(batch.retain());
    List<ArrowFieldNode> nodes = new ArrayList<>();
    List<ArrowBuf> buffers = new ArrayList<>();
    try {
      for (int f = 0; f < batch.schema().size(); f++) {
        Column c = batch.column(f);
        field(c.spec()); // refuses what Arrow cannot hold before anything is shared
        if (c.hasLengths()) {
          throw new UnsupportedOperationException("column '" + c.name() + "' was padded (paddedBatch): write the "
              + "batches before padding them");
        }
        export(c, nodes, buffers, allocator, holder);
      }
      ArrowRecordBatch rb = new ArrowRecordBatch(batch.size(), nodes, buffers,
          NoCompressionCodec.DEFAULT_BODY_COMPRESSION, true, true);
      return rb;
    } finally {
      for (ArrowBuf b : buffers) {
        b.getReferenceManager().release(); // the record batch holds its own references
      }
      holder.release();
    }
  }

  private static void export(Column c, List<ArrowFieldNode> nodes, List<ArrowBuf> buffers, BufferAllocator alloc,
      Holder holder) {
    TensorSpec spec = c.spec();
    int ragged = spec.raggedRank();
    for (int j = 0; j < ragged; j++) {
      long count = c.count(j);
      long nulls = nulls(c, j);
      nodes.add(new ArrowFieldNode(count, nulls));
      buffers.add(bitmap(c, j, count, nulls, alloc));
      buffers.add(share(c.offsets(j).data(), alloc, holder));
    }
    long count = c.count(ragged);
    long nulls = nulls(c, ragged);
    long[] dims = spec.itemShape().dims();
    boolean fixedDims = dims.length > 0;
    long items = count;
    for (int i = 0; i < dims.length; i++) {
      nodes.add(new ArrowFieldNode(items, i == 0 ? nulls : 0));
      buffers.add(i == 0 ? bitmap(c, ragged, count, nulls, alloc) : alloc.getEmpty());
      items = Math.multiplyExact(items, dims[i]);
    }
    nodes.add(new ArrowFieldNode(items, fixedDims ? 0 : nulls));
    buffers.add(fixedDims ? alloc.getEmpty() : bitmap(c, ragged, count, nulls, alloc));
    ByteBuffer values = c.values().data();
    switch (spec.dtype()) {
      case BOOL -> buffers.add(bits(values, items, alloc));
      case STRING, BYTES -> {
        buffers.add(share(c.offsets(ragged).data(), alloc, holder));
        buffers.add(share(values, alloc, holder));
      }
      default -> buffers.add(share(values, alloc, holder));
    }
  }

  private static long nulls(Column c, int depth) {
    if (!c.hasValidity(depth)) {
      return 0;
    }
    ByteBuffer v = c.validity(depth).data();
    long n = 0;
    for (int i = 0, end = v.remaining(); i < end; i++) {
      if (v.get(i) == 0) {
        n++;
      }
    }
    return n;
  }

  /** The validity bitmap of depth {@code depth}, or an empty buffer when nothing there is null. */
  private static ArrowBuf bitmap(Column c, int depth, long count, long nulls, BufferAllocator alloc) {
    if (nulls == 0) {
      return alloc.getEmpty();
    }
    ByteBuffer v = c.validity(depth).data();
    return bits(v, count, alloc);
  }

  /** One bit per byte of {@code bytes} (non-zero: set), LSB first, as Arrow packs booleans and validity. */
  private static ArrowBuf bits(ByteBuffer bytes, long count, BufferAllocator alloc) {
    long size = (count + 7) >>> 3;
    ArrowBuf b = alloc.buffer(size);
    b.setZero(0, size);
    for (int i = 0; i < count; i++) {
      if (bytes.get(i) != 0) {
        b.setByte(i >>> 3, b.getByte(i >>> 3) | 1 << (i & 7));
      }
    }
    b.writerIndex(size);
    return b;
  }

  /** An Arrow buffer over {@code view}'s memory (a copy when it is on the heap). */
  private static ArrowBuf share(ByteBuffer view, BufferAllocator alloc, Holder holder) {
    int size = view.remaining();
    if (size == 0) {
      return alloc.getEmpty();
    }
    if (!view.isDirect()) {
      ArrowBuf b = alloc.buffer(size);
      b.setBytes(0, view.duplicate());
      b.writerIndex(size);
      return b;
    }
    long address = MemoryUtil.getByteBufferAddress(view) + view.position();
    holder.retain();
    try {
      return alloc.wrapForeignAllocation(new Shared(size, address, holder));
    } catch (RuntimeException e) {
      holder.release();
      throw e;
    }
  }

  /** The batch handle that the shared buffers keep open: closed when the last of them is released. */
  private static final class Holder extends RefCount {
    private final Batch batch;

    Holder(Batch batch) {
      this.batch = batch;
    }

    @Override
    protected void onLastRelease() {
      batch.close();
    }
  }

  /** A buffer of the batch's memory lent to Arrow. */
  private static final class Shared extends ForeignAllocation {
    private final Holder holder;

    Shared(long size, long address, Holder holder) {
      super(size, address);
      this.holder = holder;
    }

    @Override
    protected void release0() {
      holder.release();
    }
  }
}
