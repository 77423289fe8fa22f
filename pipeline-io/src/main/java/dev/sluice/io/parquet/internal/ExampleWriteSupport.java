package dev.sluice.io.parquet.internal;

import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.Schema;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;

/**
 * Writes {@link Example}s with parquet-java. A field with a concrete shape becomes a standard
 * 3-level LIST ({@code list} / {@code element}, the layout pyarrow writes for a FixedSizeList) and
 * footer key {@code sluice.shape.<name>} declares its shape; a field with ragged levels (lists of
 * lists, lists of strings) becomes one 3-level LIST per level, its elements optional where the
 * spec lets them be null; scalars become primitive columns; string/bytes become BYTE_ARRAY.
 * Nullable fields are optional.
 */
public final class ExampleWriteSupport extends WriteSupport<Example> {
  private final Schema schema;
  private final MessageType parquetSchema;
  private final Map<String, String> extra = new HashMap<>();
  private RecordConsumer out;

  public ExampleWriteSupport(Schema schema) {
    this.schema = schema;
    List<Type> fields = new ArrayList<>();
    for (TensorSpec f : schema.fields()) {
      Type.Repetition rep = f.nullable() ? Type.Repetition.OPTIONAL : Type.Repetition.REQUIRED;
      if (f.shape().rank() == 0) {
        fields.add(primitive(f, rep, f.name()));
      } else if (f.shape().isFullyDefined()) { // one flat list per row, its shape in the footer
        Type element = primitive(f, Type.Repetition.REQUIRED, "element");
        fields.add(Types.buildGroup(rep).as(LogicalTypeAnnotation.listType())
            .repeatedGroup().addField(element).named("list").named(f.name()));
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < f.shape().rank(); i++) {
          sb.append(i > 0 ? ", " : "").append(f.shape().dim(i));
        }
        extra.put(SchemaMapper.SHAPE_KEY_PREFIX + f.name(), sb.append(']').toString());
      } else if (f.itemShape().rank() == 0) { // lists of lists of scalars or strings: one LIST per level
        int levels = f.raggedRank();
        Type inner = primitive(f, f.elementsNullable(levels - 1) ? Type.Repetition.OPTIONAL : Type.Repetition.REQUIRED,
            "element");
        for (int j = levels - 1; j >= 0; j--) {
          Type.Repetition r = j == 0 ? rep
              : f.elementsNullable(j - 1) ? Type.Repetition.OPTIONAL : Type.Repetition.REQUIRED;
          inner = Types.buildGroup(r).as(LogicalTypeAnnotation.listType())
              .repeatedGroup().addField(inner).named("list").named(j == 0 ? f.name() : "element");
        }
        fields.add(inner);
      } else {
        throw new IllegalArgumentException("field '" + f.name() + "' " + f
            + ": lists of fixed-shape items (a fixed dimension after a variable one) cannot be written to Parquet by Sluice");
      }
    }
    this.parquetSchema = new MessageType("sluice", fields);
  }

  public MessageType parquetSchema() {
    return parquetSchema;
  }

  private static PrimitiveType primitive(TensorSpec f, Type.Repetition rep, String name) {
    return switch (f.dtype()) {
      case BOOL -> Types.primitive(PrimitiveTypeName.BOOLEAN, rep).named(name);
      case INT8 -> Types.primitive(PrimitiveTypeName.INT32, rep).as(LogicalTypeAnnotation.intType(8, true)).named(name);
      case INT16 -> Types.primitive(PrimitiveTypeName.INT32, rep).as(LogicalTypeAnnotation.intType(16, true)).named(name);
      case INT32 -> Types.primitive(PrimitiveTypeName.INT32, rep).named(name);
      case INT64 -> Types.primitive(PrimitiveTypeName.INT64, rep).named(name);
      case UINT8 -> Types.primitive(PrimitiveTypeName.INT32, rep).as(LogicalTypeAnnotation.intType(8, false)).named(name);
      case UINT16 -> Types.primitive(PrimitiveTypeName.INT32, rep).as(LogicalTypeAnnotation.intType(16, false)).named(name);
      case UINT32 -> Types.primitive(PrimitiveTypeName.INT32, rep).as(LogicalTypeAnnotation.intType(32, false)).named(name);
      case UINT64 -> Types.primitive(PrimitiveTypeName.INT64, rep).as(LogicalTypeAnnotation.intType(64, false)).named(name);
      case FLOAT16 -> Types.primitive(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, rep).length(2)
          .as(LogicalTypeAnnotation.float16Type()).named(name);
      case FLOAT32 -> Types.primitive(PrimitiveTypeName.FLOAT, rep).named(name);
      case FLOAT64 -> Types.primitive(PrimitiveTypeName.DOUBLE, rep).named(name);
      case STRING -> Types.primitive(PrimitiveTypeName.BINARY, rep).as(LogicalTypeAnnotation.stringType()).named(name);
      case BYTES -> Types.primitive(PrimitiveTypeName.BINARY, rep).named(name);
      default -> throw new IllegalArgumentException("field '" + f.name() + "': " + f.dtype()
          + " cannot be written to Parquet by Sluice");
    };
  }

  @Override
  public WriteContext init(org.apache.hadoop.conf.Configuration configuration) {
    return new WriteContext(parquetSchema, extra);
  }

  @Override
  public WriteContext init(org.apache.parquet.conf.ParquetConfiguration configuration) {
    return new WriteContext(parquetSchema, extra);
  }

  @Override
  public void prepareForWrite(RecordConsumer recordConsumer) {
    this.out = recordConsumer;
  }

  @Override
  public void write(Example e) {
    out.startMessage();
    for (int i = 0; i < schema.size(); i++) {
      TensorSpec f = schema.field(i);
      if (e.isNull(f.name())) {
        if (!f.nullable()) {
          throw new IllegalArgumentException("example " + e.index() + ": field '" + f.name() + "' is null but not nullable");
        }
        continue;
      }
      Tensor t = e.tensor(f.name());
      out.startField(f.name(), i);
      if (f.shape().rank() == 0) {
        add(f.dtype(), t, 0);
      } else if (f.shape().isFullyDefined()) {
        out.startGroup();
        long n = t.numElements();
        if (n > 0) {
          out.startField("list", 0);
          for (long k = 0; k < n; k++) {
            out.startGroup();
            out.startField("element", 0);
            add(f.dtype(), t, k);
            out.endField("element", 0);
            out.endGroup();
          }
          out.endField("list", 0);
        }
        out.endGroup();
      } else {
        list(f, 0, t, e.index());
      }
      out.endField(f.name(), i);
    }
    out.endMessage();
  }

  /** Writes {@code t}, a list at {@code depth} of field {@code f}, and its elements (null ones left out). */
  private void list(TensorSpec f, int depth, Tensor t, long example) {
    if (t.shape().rank() != f.shape().rank() - depth) {
      throw new IllegalArgumentException("example " + example + ": field '" + f.name() + "' has shape " + t.shape()
          + " but " + f + " expects rank " + (f.shape().rank() - depth) + " at list level " + depth);
    }
    boolean leaves = depth + 1 == f.raggedRank();
    out.startGroup();
    long n = t.shape().dim(0);
    if (n > 0) {
      out.startField("list", 0);
      for (long k = 0; k < n; k++) {
        out.startGroup();
        if (!t.isNull(k)) {
          out.startField("element", 0);
          if (!leaves) {
            list(f, depth + 1, t.slice(k), example);
          } else if (f.dtype().isVariableLength()) {
            out.addBinary(Binary.fromConstantByteBuffer(t.bytesAt(k)));
          } else {
            add(f.dtype(), t, k);
          }
          out.endField("element", 0);
        } else if (!f.elementsNullable(depth)) {
          throw new IllegalArgumentException("example " + example + ": field '" + f.name() + "' holds a null element at "
              + "list level " + depth + " but " + f + " has none");
        }
        out.endGroup();
      }
      out.endField("list", 0);
    }
    out.endGroup();
  }

  private void add(DType dtype, Tensor t, long k) {
    switch (dtype) {
      case BOOL -> out.addBoolean(t.getBoolean(k));
      case INT8, INT16, INT32, UINT8, UINT16, UINT32 -> out.addInteger((int) t.getAsLong(k));
      case INT64, UINT64 -> out.addLong(t.getLong(k));
      case FLOAT16 -> {
        ByteBuffer b = ByteBuffer.allocate(2).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putShort(0, t.getShort(k));
        out.addBinary(Binary.fromConstantByteArray(b.array()));
      }
      case FLOAT32 -> out.addFloat(t.getFloat(k));
      case FLOAT64 -> out.addDouble(t.getDouble(k));
      case STRING, BYTES -> out.addBinary(Binary.fromConstantByteBuffer(t.bytesAt(0)));
      default -> throw new IllegalArgumentException(dtype + " cannot be written to Parquet");
    }
  }
}
