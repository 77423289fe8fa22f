package dev.sluice.io.parquet.internal;

import dev.sluice.core.DType;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.UnsupportedFormatException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * Maps a Parquet schema to Sluice fields: one field per leaf column, named by its path without the
 * LIST / MAP wrapper levels ({@code a.b} for struct fields, {@code m.key} / {@code m.value} for maps).
 * Each repeated node on a leaf's path is one ragged level of its field ({@code -1} dimension), so a
 * list of lists of strings is {@code string[-1, -1]}; optional nodes make the row or a level's
 * elements nullable. Leaves Sluice cannot represent are kept as named refusals, so a projection can
 * leave them out.
 */
public final class SchemaMapper {
  /** Footer key that declares the per-row shape of a list column: {@code sluice.shape.x = [64]}. */
  public static final String SHAPE_KEY_PREFIX = "sluice.shape.";

  private final String file;
  private final MessageType schema;
  private final Map<String, String> keyValues;
  private final Map<String, Shape> hints;
  private final List<ColumnPlan> plans = new ArrayList<>();
  private final Map<String, String> refused = new LinkedHashMap<>();
  private final Map<String, Long> arrowLengths;

  private SchemaMapper(String file, MessageType schema, Map<String, String> keyValues, Map<String, Shape> hints) {
    this.file = file;
    this.schema = schema;
    this.keyValues = keyValues;
    this.hints = hints;
    this.arrowLengths = ArrowSchemaShapes.parse(keyValues.get("ARROW:schema"));
  }

  /** The mapping of every leaf: the plans, and the refused fields with the reason. */
  public record Mapping(List<ColumnPlan> plans, Map<String, String> refused) {
    /**
     * The plans for the requested output names (all when empty). A struct's name selects its fields.
     *
     * @throws UnsupportedFormatException if a selected field cannot be read
     * @throws IllegalArgumentException if a name matches no field
     */
    public List<ColumnPlan> select(String file, List<String> names) {
      if (names.isEmpty()) {
        if (!refused.isEmpty()) {
          Map.Entry<String, String> e = refused.entrySet().iterator().next();
          throw new UnsupportedFormatException(file, "column '" + e.getKey() + "'", e.getValue()
              + " (leave it out with a column projection to read the other columns)");
        }
        return plans;
      }
      List<ColumnPlan> out = new ArrayList<>();
      for (String n : names) {
        if (refused.containsKey(n)) {
          throw new UnsupportedFormatException(file, "column '" + n + "'", refused.get(n));
        }
        int before = out.size();
        for (ColumnPlan p : plans) {
          if (p.name().equals(n) || p.name().startsWith(n + ".")) {
            out.add(p);
          }
        }
        for (Map.Entry<String, String> e : refused.entrySet()) {
          if (e.getKey().startsWith(n + ".")) {
            throw new UnsupportedFormatException(file, "column '" + e.getKey() + "'", e.getValue());
          }
        }
        if (out.size() == before) {
          List<String> known = new ArrayList<>();
          plans.forEach(p -> known.add(p.name()));
          known.addAll(refused.keySet());
          throw new IllegalArgumentException("column '" + n + "' is not in " + file + "; columns are " + known);
        }
      }
      return out;
    }
  }

  public static Mapping map(String file, MessageType schema, Map<String, String> keyValues, Map<String, Shape> hints) {
    SchemaMapper m = new SchemaMapper(file, schema, keyValues, hints);
    for (Type t : schema.getFields()) {
      m.visit(t, t.getName(), new ArrayList<>(List.of(t.getName())));
    }
    for (String hinted : hints.keySet()) {
      for (ColumnPlan p : m.plans) {
        if (p.name().equals(hinted) && p.layout() != ColumnPlan.Layout.FIXED_LIST && !Shape.of(-1).equals(hints.get(hinted))) {
          throw new IllegalArgumentException("shape hint for '" + hinted + "': only a single-level list of numbers "
              + "can be read as a fixed-shape tensor, but in " + file + " it is " + p.spec());
        }
      }
    }
    return new Mapping(List.copyOf(m.plans), Map.copyOf(m.refused));
  }

  /**
   * Names the leaves below {@code type}: a struct adds its field names, a LIST or MAP wrapper and
   * its repeated group add nothing (the element of a 3-level list takes the list's name, the
   * fields of a 2-level list of structs and of a map's key/value group are {@code name.field}).
   */
  private void visit(Type type, String name, List<String> path) {
    if (type.isPrimitive()) {
      leaf(type.asPrimitiveType(), name, path);
      return;
    }
    GroupType g = type.asGroupType();
    LogicalTypeAnnotation ann = g.getLogicalTypeAnnotation();
    boolean isList = ann instanceof LogicalTypeAnnotation.ListLogicalTypeAnnotation;
    boolean isMap = ann instanceof LogicalTypeAnnotation.MapLogicalTypeAnnotation
        || ann instanceof LogicalTypeAnnotation.MapKeyValueTypeAnnotation;
    if (!g.isRepetition(Type.Repetition.REPEATED) && (isList || isMap)) {
      if (g.getFieldCount() != 1 || !g.getType(0).isRepetition(Type.Repetition.REPEATED)) {
        refuseLeaves(g, name, (isList ? "LIST" : "MAP") + " group without a single repeated field");
        return;
      }
      Type r = g.getType(0);
      List<String> rPath = append(path, r.getName());
      if (isMap) {
        if (r.isPrimitive()) {
          refuseLeaves(g, name, "MAP whose repeated field is not a key/value group");
          return;
        }
        for (Type f : r.asGroupType().getFields()) {
          visit(f, name + "." + f.getName(), append(rPath, f.getName()));
        }
        return;
      }
      if (r.isPrimitive()) {
        leaf(r.asPrimitiveType(), name, rPath); // legacy 2-level list of primitives
        return;
      }
      GroupType rg = r.asGroupType();
      boolean threeLevel = rg.getFieldCount() == 1 && !rg.getName().equals("array")
          && !rg.getName().equals(g.getName() + "_tuple");
      if (threeLevel) {
        Type element = rg.getType(0);
        visit(element, name, append(rPath, element.getName()));
      } else {
        for (Type f : rg.getFields()) { // legacy 2-level list of structs
          visit(f, name + "." + f.getName(), append(rPath, f.getName()));
        }
      }
      return;
    }
    // a struct, or an unannotated repeated group (a list of structs): its fields
    for (Type f : g.getFields()) {
      visit(f, name + "." + f.getName(), append(path, f.getName()));
    }
  }

  private static List<String> append(List<String> path, String name) {
    List<String> p = new ArrayList<>(path);
    p.add(name);
    return p;
  }

  private void refuseLeaves(Type type, String name, String reason) {
    refused.put(name, reason + " (" + typeName(type) + ")");
  }

  private static String typeName(Type t) {
    return t.toString().replaceAll("\\s+", " ").trim();
  }

  private void leaf(PrimitiveType p, String name, List<String> path) {
    ColumnDescriptor desc = schema.getColumnDescription(path.toArray(new String[0]));
    TypeMapping tm;
    try {
      tm = typeOf(p);
    } catch (UnsupportedOperationException e) {
      refused.put(name, e.getMessage());
      return;
    }
    // walk the path: each optional node adds a definition level, each repeated node a list level
    List<Integer> repeatedAt = new ArrayList<>(); // definition level of each repeated node
    Type t = schema;
    int def = 0;
    for (String part : path) {
      t = t.asGroupType().getType(part);
      if (!t.isRepetition(Type.Repetition.REQUIRED)) {
        def++;
      }
      if (t.isRepetition(Type.Repetition.REPEATED)) {
        repeatedAt.add(def);
      }
    }
    int levels = repeatedAt.size();
    if (levels > 30) {
      refused.put(name, "lists nested " + levels + " deep; Sluice reads at most 30 levels");
      return;
    }
    int[] definedAt = new int[levels + 1];
    int mask = 0;
    for (int j = 0; j <= levels; j++) {
      definedAt[j] = j < levels ? repeatedAt.get(j) - 1 : desc.getMaxDefinitionLevel();
      int floor = j == 0 ? 0 : repeatedAt.get(j - 1);
      if (j > 0 && definedAt[j] > floor) {
        mask |= 1 << (j - 1); // an optional node between two list levels: elements may be null
      }
    }
    boolean nullable = definedAt[0] > 0;
    if (levels == 0) {
      TensorSpec spec = new TensorSpec(name, tm.dtype, Shape.scalar(), nullable);
      plans.add(new ColumnPlan(desc, spec, ColumnPlan.Layout.SCALAR, tm.conversion, 1, definedAt, tm.scale));
      return;
    }
    Shape declared = null;
    if (levels == 1 && !tm.dtype.isVariableLength() && !Shape.of(-1).equals(hints.get(name))) {
      declared = hints.get(name);
      String source = "the shape hint";
      if (declared == null) {
        declared = parseShape(keyValues.get(SHAPE_KEY_PREFIX + name));
        source = "footer key '" + SHAPE_KEY_PREFIX + name + "'";
      }
      if (declared == null && arrowLengths.containsKey(name)) {
        declared = Shape.of(arrowLengths.get(name)); // pyarrow's FixedSizeList
        source = "the FixedSizeList size of footer key 'ARROW:schema'";
      }
      if (declared != null) {
        checkRowBytes(name, declared, tm.dtype, source);
      }
    }
    if (declared != null) { // one contiguous block per row: its elements hold no nulls
      TensorSpec spec = new TensorSpec(name, tm.dtype, declared, nullable);
      plans.add(new ColumnPlan(desc, spec, ColumnPlan.Layout.FIXED_LIST, tm.conversion,
          Math.toIntExact(declared.numElements()), definedAt, tm.scale));
      return;
    }
    long[] dims = new long[levels];
    java.util.Arrays.fill(dims, -1);
    TensorSpec spec = new TensorSpec(name, tm.dtype, Shape.of(dims), nullable, mask);
    plans.add(new ColumnPlan(desc, spec, ColumnPlan.Layout.LISTS, tm.conversion, -1, definedAt, tm.scale));
  }

  /** A declared row shape of {@code dtype} must make rows of at most {@link Integer#MAX_VALUE} bytes. */
  private void checkRowBytes(String name, Shape declared, DType dtype, String source) {
    java.math.BigInteger bytes = java.math.BigInteger.valueOf(Math.max(1, dtype.byteSize()));
    for (long d : declared.dims()) {
      bytes = bytes.multiply(java.math.BigInteger.valueOf(d));
    }
    if (bytes.compareTo(java.math.BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
      throw new dev.sluice.core.DatasetFormatException(file, "footer", "column '" + name + "': " + source
          + " declares rows of shape " + declared + " of " + dtype.numpyName() + ", " + bytes
          + " bytes each, more than one row can hold (" + Integer.MAX_VALUE + ")");
    }
  }

  private Shape parseShape(String value) {
    if (value == null) {
      return null;
    }
    String s = value.trim();
    if (s.startsWith("[") && s.endsWith("]")) {
      s = s.substring(1, s.length() - 1);
    } else if (s.startsWith("(") && s.endsWith(")")) {
      s = s.substring(1, s.length() - 1);
    }
    List<Long> dims = new ArrayList<>();
    for (String part : s.split(",")) {
      if (!part.isBlank()) {
        try {
          long v = Long.parseLong(part.trim());
          if (v < 0) {
            throw new NumberFormatException("negative");
          }
          dims.add(v);
        } catch (NumberFormatException e) {
          throw new dev.sluice.core.DatasetFormatException(file, "footer",
              "footer key '" + SHAPE_KEY_PREFIX + "...' must hold a shape like [64] but it was '" + value + "'");
        }
      }
    }
    if (dims.isEmpty()) {
      return null;
    }
    return Shape.of(dims.stream().mapToLong(Long::longValue).toArray());
  }

  private record TypeMapping(DType dtype, ColumnPlan.Conversion conversion, long scale) {}

  private static TypeMapping tm(DType t, ColumnPlan.Conversion c) {
    return new TypeMapping(t, c, 1);
  }

  private static long toNanos(LogicalTypeAnnotation.TimeUnit unit) {
    return switch (unit) {
      case MILLIS -> 1_000_000L;
      case MICROS -> 1_000L;
      case NANOS -> 1L;
    };
  }

  /** The output dtype and conversion of a primitive column. */
  static TypeMapping typeOf(PrimitiveType p) {
    LogicalTypeAnnotation ann = p.getLogicalTypeAnnotation();
    if (ann instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation dec) {
      ColumnPlan.Conversion c = switch (p.getPrimitiveTypeName()) {
        case INT32 -> ColumnPlan.Conversion.DECIMAL_INT32;
        case INT64 -> ColumnPlan.Conversion.DECIMAL_INT64;
        case BINARY, FIXED_LEN_BYTE_ARRAY -> ColumnPlan.Conversion.DECIMAL_BINARY;
        default -> throw new UnsupportedOperationException("DECIMAL stored as " + p.getPrimitiveTypeName() + " is not supported");
      };
      return new TypeMapping(DType.FLOAT64, c, dec.getScale());
    }
    switch (p.getPrimitiveTypeName()) {
      case BOOLEAN:
        return tm(DType.BOOL, ColumnPlan.Conversion.BOOLEAN);
      case FLOAT:
        return tm(DType.FLOAT32, ColumnPlan.Conversion.COPY);
      case DOUBLE:
        return tm(DType.FLOAT64, ColumnPlan.Conversion.COPY);
      case INT96:
        return tm(DType.INT64, ColumnPlan.Conversion.INT96_TO_NANOS);
      case INT32:
        if (ann instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i) {
          return switch (i.getBitWidth()) {
            case 8 -> tm(i.isSigned() ? DType.INT8 : DType.UINT8, ColumnPlan.Conversion.INT32_TO_1);
            case 16 -> tm(i.isSigned() ? DType.INT16 : DType.UINT16, ColumnPlan.Conversion.INT32_TO_2);
            default -> tm(i.isSigned() ? DType.INT32 : DType.UINT32, ColumnPlan.Conversion.COPY);
          };
        }
        if (ann instanceof LogicalTypeAnnotation.TimeLogicalTypeAnnotation t) {
          return new TypeMapping(DType.INT64, ColumnPlan.Conversion.INT32_TO_INT64_SCALED, toNanos(t.getUnit()));
        }
        return tm(DType.INT32, ColumnPlan.Conversion.COPY); // plain and DATE (days since 1970-01-01)
      case INT64:
        if (ann instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i) {
          return tm(i.isSigned() ? DType.INT64 : DType.UINT64, ColumnPlan.Conversion.COPY);
        }
        if (ann instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation t) {
          return new TypeMapping(DType.INT64, ColumnPlan.Conversion.INT64_SCALED, toNanos(t.getUnit()));
        }
        if (ann instanceof LogicalTypeAnnotation.TimeLogicalTypeAnnotation t) {
          return new TypeMapping(DType.INT64, ColumnPlan.Conversion.INT64_SCALED, toNanos(t.getUnit()));
        }
        return tm(DType.INT64, ColumnPlan.Conversion.COPY);
      case BINARY:
        if (ann instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation
            || ann instanceof LogicalTypeAnnotation.EnumLogicalTypeAnnotation
            || ann instanceof LogicalTypeAnnotation.JsonLogicalTypeAnnotation) {
          return tm(DType.STRING, ColumnPlan.Conversion.BINARY);
        }
        return tm(DType.BYTES, ColumnPlan.Conversion.BINARY);
      case FIXED_LEN_BYTE_ARRAY:
        if (ann instanceof LogicalTypeAnnotation.Float16LogicalTypeAnnotation && p.getTypeLength() == 2) {
          return tm(DType.FLOAT16, ColumnPlan.Conversion.FIXED_BYTES);
        }
        return tm(DType.BYTES, ColumnPlan.Conversion.BINARY);
      default:
        throw new UnsupportedOperationException("physical type " + p.getPrimitiveTypeName() + " is not supported");
    }
  }
}
