package dev.sluice.core;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * An immutable, typed view of little-endian memory with a shape.
 *
 * <p>A tensor never copies on its own: {@link #wrap} and {@link #slice} share memory with their
 * source, so a row of a memory-mapped file is a tensor that points into the mapping. The tensor
 * does not own that memory and needs no release: a mapping is released by the GC once its last
 * view is gone, and a tensor of a {@link Batch} column is valid until the batch is closed.
 *
 * <p><b>Use after close.</b> A tensor taken from a batch (its columns, and slices of those) checks
 * the batch's lifetime: once the batch's memory went back to the pool (every handle closed), every
 * method that reads values throws {@link IllegalStateException} naming the batch, instead of
 * returning whatever the pool reused the memory for. Element accessors ({@link #getFloat} and the
 * like) check too, unless {@code -Dsluice.tensor.checkElements=false}; bulk accessors
 * ({@link #data}, {@link #toFloatArray}, {@link #copyTo}, {@link #slice(long)}, {@link #copy}, ...)
 * always check. {@link #dtype}, {@link #shape}, {@link #numElements} and {@link #byteSize} describe
 * the tensor and keep working. A buffer returned by {@link #data} is a view: do not keep it past the
 * batch's close. Tensors that do not come from a batch (mapped rows, heap tensors) have nothing to
 * check.
 *
 * <p>Variable-length tensors ({@link DType#STRING}, {@link DType#BYTES}) of rank 0 hold one value
 * (its bytes); of rank 1 they hold {@code n} values laid out as Arrow does, contiguous bytes plus
 * {@code n + 1} int64 offsets.
 *
 * <p><b>Nested values.</b> A tensor whose dimensions after the first are {@code -1} is ragged, like
 * tf.RaggedTensor: {@code float32[3, -1]} is a list of three lists of floats, each of its own
 * length, {@code string[2, -1]} a list of two lists of strings. It is Arrow's {@code LargeList}
 * layout applied recursively: the innermost values contiguous, and per ragged dimension int64
 * offsets ({@link #offsets(int)}). Items may be null ({@link #isNull(long)}): a null list, an empty
 * list and a list holding a null element are three different values. Walk a value level by level
 * with {@link #shape()}, {@link #isNull(long)} and {@link #slice(long)}; build one with
 * {@link #listOf} or {@link #ofStrings}.
 */
public final class Tensor {
  static final ByteBuffer[] NO_BUFFERS = new ByteBuffer[0];
  /**
   * Whether element accessors check the batch's lifetime ({@code -Dsluice.tensor.checkElements},
   * default true); bulk accessors always do.
   */
  private static final boolean CHECK_ELEMENTS =
      Boolean.parseBoolean(System.getProperty("sluice.tensor.checkElements", "true"));

  // package-private for the views and comparisons of TensorViews and TensorEquality
  final DType dtype;
  final Shape shape;
  final ByteBuffer data; // little-endian, position 0, limit = byte size; never exposed mutable
  /**
   * int64 offsets, 0-based, outermost first: one per ragged dimension (items of dimension j to
   * items of dimension j + 1), then, for string/bytes of rank >= 1, the byte offsets of the
   * innermost values. Empty when there are none.
   */
  final ByteBuffer[] offsets;
  /** Null when no item is null; else one entry per list dimension (0 .. ragged dims), null = all valid. */
  final ByteBuffer[] validity;
  final BatchMemory memory; // the lifetime of the batch whose memory this views, else null

  Tensor(DType dtype, Shape shape, ByteBuffer data, ByteBuffer[] offsets, ByteBuffer[] validity,
      BatchMemory memory) {
    this.dtype = dtype;
    this.shape = shape;
    this.data = data;
    this.offsets = offsets;
    this.validity = validity;
    this.memory = memory;
  }

  /** The lifetime of the batch whose memory this views, or null. */
  BatchMemory memory() {
    return memory;
  }

  /** This tensor over the same memory, checking {@code batch}'s lifetime. */
  Tensor bind(BatchMemory batch) {
    return new Tensor(dtype, shape, data, offsets, validity, batch);
  }

  /** Throws when this tensor views the memory of a batch that was released. */
  private void checkLive() {
    BatchMemory m = memory;
    if (m != null && m.isReleased()) {
      throw m.closed();
    }
  }

  /** {@link #checkLive()} for element accessors: a plain read, hoisted out of loops by the JIT. */
  private void checkLiveElement() {
    BatchMemory m = memory;
    if (m != null && m.isReleasedPlain()) {
      throw m.closed();
    }
  }

  /**
   * A tensor viewing {@code data} from its position to its limit, without a copy.
   *
   * @throws IllegalArgumentException if the shape is not concrete or its byte size differs from
   *     {@code data.remaining()}
   */
  public static Tensor wrap(DType dtype, Shape shape, ByteBuffer data) {
    return TensorLayouts.wrap(dtype, shape, data);
  }

  /**
   * A rank-1 tensor of {@code n} variable-length values: {@code data} holds their bytes back to
   * back, {@code offsets} holds {@code n + 1} little-endian int64 offsets into it.
   */
  public static Tensor wrapVariable(DType dtype, ByteBuffer data, ByteBuffer offsets) {
    return TensorLayouts.wrapVariable(dtype, data, offsets);
  }

  /**
   * A tensor of any nesting over existing memory, without a copy: the layout of Arrow's
   * {@code LargeList} applied recursively (tf.RaggedTensor's row splits).
   *
   * <p>{@code shape} has a concrete first dimension {@code n}, then the ragged ({@code -1})
   * dimensions, then fixed ones; string/bytes tensors take no fixed dimensions after the first.
   * {@code offsets} holds, outermost first, one int64 offsets buffer per ragged dimension (the
   * items of dimension {@code j} into those of dimension {@code j + 1}: {@code count(j) + 1}
   * values starting at 0), then for string/bytes the byte offsets of the innermost values.
   * {@code validity} is empty when nothing is null, else one entry per list dimension ({@code 0}
   * and each ragged dimension): null when every item of that dimension is valid, else one byte per
   * item (1 valid, 0 null). A null item still takes its place: an empty list or string, or zeros.
   *
   * @throws IllegalArgumentException naming the buffer that does not fit the shape
   */
  public static Tensor wrapRagged(DType dtype, Shape shape, ByteBuffer data, java.util.List<ByteBuffer> offsets,
      java.util.List<ByteBuffer> validity) {
    return TensorLayouts.wrapRagged(dtype, shape, data, offsets, validity);
  }

  /** A tensor over buffers already checked to fit the shape, with at most one offsets buffer. */
  static Tensor ofChecked(DType dtype, Shape shape, ByteBuffer data, ByteBuffer offsets) {
    return new Tensor(dtype, shape, data, offsets == null ? NO_BUFFERS : new ByteBuffer[] {offsets}, null, null);
  }

  /** Trusted constructor for core: the buffers already fit the shape. */
  static Tensor ofLayout(DType dtype, Shape shape, ByteBuffer data, ByteBuffer[] offsets, ByteBuffer[] validity) {
    return new Tensor(dtype, shape, data, offsets, validity != null && TensorLayouts.hasAny(validity) ? validity : null,
        null);
  }

  /**
   * A list of strings, {@code string[n]}; a null entry is a null element.
   */
  public static Tensor ofStrings(String... values) {
    return HeapTensors.ofStrings(values);
  }

  /**
   * A list whose elements are the given tensors (a null entry is a null element), copied to the
   * heap. Scalars make a rank-1 tensor; elements of rank {@code r} make a rank-{@code r + 1} tensor
   * whose second dimension is ragged ({@code -1}) unless every element has the same shape, so
   * {@code listOf(of(1, 2), of(3))} is {@code int32[2, -1]} and {@code listOf(of(1, 2), of(3, 4))}
   * is {@code int32[2, 2]}.
   *
   * @param dtype the dtype of the elements (needed when every element is null)
   * @throws IllegalArgumentException if the elements differ in dtype or rank
   */
  public static Tensor listOf(DType dtype, java.util.List<Tensor> elements) {
    return Nested.listOf(dtype, elements);
  }

  /** As {@link #listOf(DType, java.util.List)} with the dtype of the first element; at least one must be non-null. */
  public static Tensor listOf(Tensor... elements) {
    return HeapTensors.listOf(elements);
  }

  /** A rank-1 float32 tensor over a copy of {@code values}. */
  public static Tensor of(float... values) {
    return HeapTensors.ofFloats(values);
  }

  /** A rank-1 float64 tensor over a copy of {@code values}. */
  public static Tensor of(double... values) {
    return HeapTensors.ofDoubles(values);
  }

  /** A rank-1 int64 tensor over a copy of {@code values}. */
  public static Tensor of(long... values) {
    return HeapTensors.ofLongs(values);
  }

  /** A rank-1 int32 tensor over a copy of {@code values}. */
  public static Tensor of(int... values) {
    return HeapTensors.ofInts(values);
  }

  /** A tensor of the given dtype and shape over a copy of {@code bytes} (little-endian values). */
  public static Tensor copyOf(DType dtype, Shape shape, byte[] bytes) {
    return HeapTensors.copyOf(dtype, shape, bytes);
  }

  /** A rank-0 int64 tensor. */
  public static Tensor scalar(long value) {
    return HeapTensors.scalar(value);
  }

  /** A rank-0 float32 tensor. */
  public static Tensor scalar(float value) {
    return HeapTensors.scalar(value);
  }

  /** A rank-0 float64 tensor. */
  public static Tensor scalar(double value) {
    return HeapTensors.scalar(value);
  }

  /** A rank-0 string tensor holding {@code value} as UTF-8. */
  public static Tensor ofString(String value) {
    return HeapTensors.ofString(value);
  }

  /** A rank-0 bytes tensor over a copy of {@code value}. */
  public static Tensor ofBytes(byte[] value) {
    return HeapTensors.ofBytes(value);
  }

  /** The element type. */
  public DType dtype() {
    return dtype;
  }

  /**
   * The shape. The first dimension is concrete; the {@code -1} dimensions after it are ragged
   * (each item has its own length, read with {@link #slice(long)}).
   */
  public Shape shape() {
    return shape;
  }

  /** True when a dimension is ragged ({@code -1}): the tensor is a list of lists of varying length. */
  public boolean isRagged() {
    return shape.rank() > 1 && shape.dim(1) < 0;
  }

  /**
   * Number of innermost values: the product of the dimensions, or for a ragged tensor the values of
   * every list (for string/bytes tensors, the number of strings or blobs).
   */
  public long numElements() {
    if (!isRagged()) {
      return shape.numElements();
    }
    checkLive(); // a ragged tensor counts its values in its offsets
    int r = TensorLayouts.raggedDims(shape);
    return TensorElements.countAt(this, r) * TensorElements.innerElements(shape, r);
  }

  /** Size of the data in bytes (for variable-length tensors, the bytes of all values). */
  public int byteSize() {
    return data.remaining();
  }

  /** A read-only little-endian view of the data: position 0, limit {@link #byteSize()}. */
  public ByteBuffer data() {
    checkLive();
    return data.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** The data buffer itself (position 0, little-endian), for copies inside core; never handed to users. */
  ByteBuffer rawData() {
    checkLive();
    return data;
  }

  /** The offsets buffers themselves, for copies inside core. */
  ByteBuffer[] rawOffsets() {
    checkLive();
    return offsets;
  }

  /** The validity buffers themselves (null when nothing is null), for copies inside core. */
  ByteBuffer[] rawValidity() {
    checkLive();
    return validity;
  }

  /**
   * The first int64 offsets (read-only view): of a rank-1 string/bytes tensor, the byte offsets of
   * its values; of a ragged tensor, where each item of the first dimension starts.
   */
  public ByteBuffer offsets() {
    checkLive();
    if (offsets.length == 0) {
      throw new IllegalStateException("a " + dtype + shape + " tensor has no offsets");
    }
    return offsets[0].asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Number of offsets buffers: one per ragged dimension, plus one for the bytes of string/bytes values. */
  public int offsetLevels() {
    return offsets.length;
  }

  /**
   * Offsets buffer {@code level} (read-only view, int64, starting at 0): level {@code j} below the
   * number of ragged dimensions maps the items of dimension {@code j} to those of dimension
   * {@code j + 1}; the last level of a string/bytes tensor maps its values to their bytes.
   */
  public ByteBuffer offsets(int level) {
    checkLive();
    if (level < 0 || level >= offsets.length) {
      throw new IndexOutOfBoundsException("offsets level " + level + " out of bounds for a " + dtype + shape
          + " tensor with " + offsets.length);
    }
    return offsets[level].asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** True when some item of some dimension is null. */
  public boolean hasNulls() {
    return validity != null;
  }

  /**
   * True when item {@code i} of the first dimension is null (a null list element). Its value, read
   * with {@link #slice(long)}, is empty or zeros.
   */
  public boolean isNull(long i) {
    if (CHECK_ELEMENTS) {
      checkLiveElement();
    }
    if (shape.rank() == 0) {
      throw new IllegalStateException("isNull(i) on a scalar " + dtype + " tensor");
    }
    long n = shape.dim(0);
    if (i < 0 || i >= n) {
      throw new IndexOutOfBoundsException("item " + i + " out of bounds for first dimension " + n + " of tensor "
          + dtype + shape);
    }
    return validity != null && validity[0] != null && validity[0].get((int) i) == 0;
  }

  /** Copies the data into {@code target} at its position, advancing it. */
  public void copyTo(ByteBuffer target) {
    checkLive();
    target.put(data.duplicate());
  }

  /**
   * Item {@code index} of the first dimension, as a tensor with one dimension less: a view of the
   * values (the offsets of a ragged or string item are re-based copies).
   */
  public Tensor slice(long index) {
    checkLive();
    return TensorViews.item(this, index);
  }

  /** Items {@code [from, from + count)} of the first dimension, as a view (re-based copies of offsets). */
  public Tensor slice(long from, long count) {
    checkLive();
    return TensorViews.items(this, from, count);
  }

  /**
   * A compact copy on the heap (values, offsets and validity), valid whatever happens to the memory
   * this tensor views.
   */
  public Tensor copy() {
    checkLive();
    return TensorViews.copy(this);
  }

  private int offsetOf(long i, int width) {
    if (CHECK_ELEMENTS) {
      checkLiveElement();
    }
    if (dtype.isVariableLength()) {
      throw new IllegalStateException("element access on a " + dtype + " tensor; use bytesAt/stringAt");
    }
    long n = offsets.length == 0 ? shape.numElements() : numElements();
    if (i < 0 || i >= n) {
      throw new IndexOutOfBoundsException("element " + i + " out of bounds for " + n + " elements of tensor " + dtype + shape);
    }
    if (width != dtype.byteSize()) {
      throw new IllegalStateException("cannot read a " + width + "-byte value from a " + dtype + " tensor");
    }
    return (int) (i * width);
  }

  /**
   * Innermost value {@code i} (in C order) of a float32 tensor; throws if the dtype is not 4 bytes
   * wide or {@code i} is out of bounds.
   */
  public float getFloat(long i) {
    return data.getFloat(offsetOf(i, 4));
  }

  /**
   * Innermost value {@code i} (in C order) of a float64 tensor; throws if the dtype is not 8 bytes
   * wide or {@code i} is out of bounds.
   */
  public double getDouble(long i) {
    return data.getDouble(offsetOf(i, 8));
  }

  /**
   * Innermost value {@code i} (in C order) of an int64 or uint64 tensor; throws if the dtype is not
   * 8 bytes wide or {@code i} is out of bounds.
   */
  public long getLong(long i) {
    return data.getLong(offsetOf(i, 8));
  }

  /**
   * Innermost value {@code i} (in C order) of an int32 or uint32 tensor; throws if the dtype is not
   * 4 bytes wide or {@code i} is out of bounds.
   */
  public int getInt(long i) {
    return data.getInt(offsetOf(i, 4));
  }

  /**
   * Innermost value {@code i} (in C order) of a 2-byte tensor (int16, uint16, float16 bits); throws
   * on another width or an index out of bounds.
   */
  public short getShort(long i) {
    return data.getShort(offsetOf(i, 2));
  }

  /**
   * Innermost value {@code i} (in C order) of a 1-byte tensor (int8, uint8, bool); throws on
   * another width or an index out of bounds.
   */
  public byte getByte(long i) {
    return data.get(offsetOf(i, 1));
  }

  /** Element {@code i} of a 1-byte tensor as a boolean (non-zero is true). */
  public boolean getBoolean(long i) {
    return data.get(offsetOf(i, 1)) != 0;
  }

  /** Element {@code i} of any real numeric dtype converted to double (unsigned as unsigned). */
  public double getAsDouble(long i) {
    return TensorElements.asDouble(this, i);
  }

  /** Element {@code i} of an integer or bool dtype as a long (uint64 wraps like Java's long). */
  public long getAsLong(long i) {
    return TensorElements.asLong(this, i);
  }

  /** The bytes of value {@code i} of a variable-length tensor ({@code i = 0} for a scalar). */
  public ByteBuffer bytesAt(long i) {
    checkLive();
    return TensorElements.bytesAt(this, i);
  }

  /** Value {@code i} of a variable-length tensor decoded as UTF-8 ({@code i = 0} for a scalar). */
  public String stringAt(long i) {
    ByteBuffer b = bytesAt(i);
    byte[] a = new byte[b.remaining()];
    b.get(a);
    return new String(a, StandardCharsets.UTF_8);
  }

  /** The value of a scalar string tensor. */
  public String getString() {
    return stringAt(0);
  }

  /** A copy of every value of a float32 tensor, in C order; throws for another dtype. */
  public float[] toFloatArray() {
    return TensorElements.floats(this);
  }

  /** A copy of every value of an int64 or uint64 tensor, in C order; throws for another dtype. */
  public long[] toLongArray() {
    return TensorElements.longs(this);
  }

  /** A copy of the data bytes. */
  public byte[] toByteArray() {
    checkLive();
    byte[] out = new byte[data.remaining()];
    data.duplicate().get(out);
    return out;
  }

  /** True when dtype, shape, values and nulls are equal (see {@link #equals}). */
  public boolean contentEquals(Tensor other) {
    checkLive();
    other.checkLive();
    return TensorEquality.equal(this, other);
  }

  /**
   * True when dtype, shape, values and nulls are equal; a ragged dimension equals a dense one
   * whose items have the same values ({@code [[1], [2]]} as {@code int32[2, -1]} or {@code [2, 1]}).
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof Tensor t && contentEquals(t);
  }

  @Override
  public int hashCode() {
    checkLive();
    return TensorEquality.hash(this);
  }

  @Override
  public String toString() {
    return TensorText.describe(this);
  }

}
