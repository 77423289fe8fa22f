package dev.sluice.spark.internal;

import dev.sluice.core.DType;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** Spark types to shard fields and back (the table in docs/spark.md). */
public final class SchemaMapping {
  /** Column metadata key (and option {@code shape.<column>}) declaring a fixed array length. */
  public static final String SHAPE = "shape";

  private SchemaMapping() {}

  /** The shard schema of a DataFrame about to be written; refuses a column with no mapping, naming it. */
  public static Schema toShards(StructType spark, Map<String, String> options) {
    List<TensorSpec> out = new ArrayList<>();
    for (StructField f : spark.fields()) {
      String declared = options.get(SHAPE + "." + f.name());
      if (declared == null) {
        declared = options.get((SHAPE + "." + f.name()).toLowerCase(java.util.Locale.ROOT));
      }
      if (declared == null && f.metadata().contains(SHAPE)) {
        declared = f.metadata().getString(SHAPE);
      }
      DataType t = f.dataType();
      if (t instanceof ArrayType a) {
        DType e = scalar(a.elementType());
        if (e == null || e.isVariableLength()) {
          throw unsupported(f);
        }
        if (declared != null) {
          out.add(new TensorSpec(f.name(), e, Shape.of(parseShape(f.name(), declared)), f.nullable()));
        } else {
          out.add(new TensorSpec(f.name(), e, Shape.of(-1), f.nullable(), a.containsNull() ? 1 : 0));
        }
      } else {
        DType d = scalar(t);
        if (d == null) {
          throw unsupported(f);
        }
        if (declared != null) {
          throw new IllegalArgumentException("sluice: column '" + f.name() + "' is a " + t.simpleString()
              + ", not an array, but a shape " + declared + " is declared for it");
        }
        out.add(new TensorSpec(f.name(), d, Shape.scalar(),
            f.nullable()));
      }
    }
    return Schema.of(out);
  }

  private static long[] parseShape(String column, String text) {
    String[] parts = text.trim().split("\\s*[,x]\\s*");
    long[] dims = new long[parts.length];
    for (int i = 0; i < parts.length; i++) {
      try {
        dims[i] = Long.parseLong(parts[i]);
      } catch (NumberFormatException e) {
        dims[i] = -1;
      }
      if (dims[i] < 0) {
        throw new IllegalArgumentException("sluice: shape." + column + " must be lengths >= 0 separated by commas"
            + " (\"64\" or \"2,3\") but it was \"" + text + "\"");
      }
    }
    return dims;
  }

  private static IllegalArgumentException unsupported(StructField f) {
    return new IllegalArgumentException("sluice: column '" + f.name() + "' of type " + f.dataType().simpleString()
        + " has no shard field type: write booleans, integers, floats, doubles, strings, binary, or arrays of"
        + " booleans, integers, floats or doubles (cast other columns first)");
  }

  private static DType scalar(DataType t) {
    if (t.equals(DataTypes.BooleanType)) {
      return DType.BOOL;
    } else if (t.equals(DataTypes.ByteType)) {
      return DType.INT8;
    } else if (t.equals(DataTypes.ShortType)) {
      return DType.INT16;
    } else if (t.equals(DataTypes.IntegerType)) {
      return DType.INT32;
    } else if (t.equals(DataTypes.LongType)) {
      return DType.INT64;
    } else if (t.equals(DataTypes.FloatType)) {
      return DType.FLOAT32;
    } else if (t.equals(DataTypes.DoubleType)) {
      return DType.FLOAT64;
    } else if (t.equals(DataTypes.StringType)) {
      return DType.STRING;
    } else if (t.equals(DataTypes.BinaryType)) {
      return DType.BYTES;
    }
    return null;
  }

  /** The Spark schema of a shard set; refuses a field Spark cannot hold, naming it. */
  public static StructType toSpark(Schema schema, String where) {
    List<StructField> out = new ArrayList<>();
    for (TensorSpec f : schema.fields()) {
      DataType leaf = sparkType(f.dtype());
      if (leaf == null || f.raggedRank() > 1 || (f.raggedRank() == 1 && f.dtype().isVariableLength())
          || (f.raggedRank() == 1 && f.shape().rank() > 1)) {
        throw new IllegalArgumentException(where + ": field '" + f.name() + "' " + f
            + " has no Spark type here (supported: bool, int8..int64, float32, float64, string, bytes,"
            + " fixed shapes and one variable dimension of numbers)");
      }
      Metadata meta = Metadata.empty();
      DataType t = leaf;
      if (f.raggedRank() == 1) {
        t = DataTypes.createArrayType(leaf, f.elementsNullable(0));
      } else if (f.shape().rank() > 0) {
        t = DataTypes.createArrayType(leaf, false);
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < f.shape().rank(); i++) {
          s.append(i == 0 ? "" : ",").append(f.shape().dim(i));
        }
        meta = new MetadataBuilder().putString(SHAPE, s.toString()).build();
      }
      out.add(new StructField(f.name(), t, f.nullable(), meta));
    }
    return new StructType(out.toArray(new StructField[0]));
  }

  private static DataType sparkType(DType d) {
    return switch (d) {
      case BOOL -> DataTypes.BooleanType;
      case INT8 -> DataTypes.ByteType;
      case INT16 -> DataTypes.ShortType;
      case INT32 -> DataTypes.IntegerType;
      case INT64 -> DataTypes.LongType;
      case FLOAT32 -> DataTypes.FloatType;
      case FLOAT64 -> DataTypes.DoubleType;
      case STRING -> DataTypes.StringType;
      case BYTES -> DataTypes.BinaryType;
      default -> null;
    };
  }
}
