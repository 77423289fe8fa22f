package dev.sluice.io.arrow.internal;

import dev.sluice.core.DType;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.io.arrow.FixedSizeListNulls;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * How an Arrow schema maps to Sluice fields (see {@code docs/formats/arrow.md}): a struct's fields
 * become {@code a.b}, a map {@code m.key} and {@code m.value}, lists ragged levels, fixed-size lists
 * fixed dimensions, dictionary-encoded columns their values. Columns Sluice cannot represent are
 * listed with the reason, and refused only when selected.
 *
 * <p>It also numbers the arrays of a record batch (its field nodes, in the order the IPC format
 * lists them) and knows how many buffers each has.
 */
public final class SchemaPlan implements NodeLayout {
  /** Field metadata key that names a Sluice dtype Arrow has no type for (written by Sluice). */
  public static final String DTYPE_KEY = "sluice.dtype";

  private final org.apache.arrow.vector.types.pojo.Schema arrow;
  private final List<Field> nodes = new ArrayList<>(); // every array, in record-batch order
  private final List<FieldPlan> fields = new ArrayList<>();
  private final Map<String, String> refused = new LinkedHashMap<>();
  private final Map<Long, Leaf> dictionaries = new LinkedHashMap<>();
  private final Set<String> names = new HashSet<>();

  private final boolean bigEndian;
  private final FixedSizeListNulls fixedSizeListNulls;

  private SchemaPlan(org.apache.arrow.vector.types.pojo.Schema arrow, boolean bigEndian,
      FixedSizeListNulls fixedSizeListNulls) {
    this.arrow = arrow;
    this.bigEndian = bigEndian;
    this.fixedSizeListNulls = fixedSizeListNulls;
  }

  /** The plan of {@code arrow}, whose record batches hold little-endian data. */
  public static SchemaPlan of(org.apache.arrow.vector.types.pojo.Schema arrow) {
    return of(arrow, false, FixedSizeListNulls.FIXED_DIMENSION);
  }

  /**
   * The plan of {@code arrow}, whose record batches hold big-endian data when {@code bigEndian},
   * reading fixed-size lists of nullable items as {@code fixedSizeListNulls} says.
   */
  public static SchemaPlan of(org.apache.arrow.vector.types.pojo.Schema arrow, boolean bigEndian,
      FixedSizeListNulls fixedSizeListNulls) {
    SchemaPlan p = new SchemaPlan(arrow, bigEndian, fixedSizeListNulls);
    List<Field> top = arrow.getFields();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < top.size(); i++) {
      Field f = top.get(i);
      String name = columnName(f, i, seen);
      p.visit(f, name, new ArrayList<>(), f.getType().toString());
    }
    return p;
  }

  /**
   * The Sluice name of top-level column (or struct field) {@code i}: its Arrow name; {@code _i}
   * when it has none; {@code name#i} when an earlier one has the same name.
   */
  static String columnName(Field f, int i, Set<String> seen) {
    String name = f.getName() == null || f.getName().isEmpty() ? "_" + i : f.getName();
    return seen.add(name) ? name : name + "#" + i;
  }

  /** The Arrow schema. */
  public org.apache.arrow.vector.types.pojo.Schema arrow() {
    return arrow;
  }

  /** Number of arrays (field nodes) in a record batch of this schema. */
  @Override
  public int nodeCount() {
    return nodes.size();
  }

  /** The Arrow field of array {@code node}. */
  Field node(int node) {
    return nodes.get(node);
  }

  /**
   * Buffers of array {@code node}, or -1 for the view types whose count the record batch gives
   * ({@code 2 +} its variadic buffer count).
   */
  @Override
  public int bufferCount(int node) {
    ArrowType t = nodes.get(node).getType();
    if (nodes.get(node).getDictionary() != null) {
      return 2; // validity and indices
    }
    if (t instanceof ArrowType.Utf8View || t instanceof ArrowType.BinaryView) {
      return -1;
    }
    return TypeLayout.getTypeBufferCount(t);
  }

  @Override
  public boolean bigEndian() {
    return bigEndian;
  }

  @Override
  public int swapUnit(int node, int which) {
    Field f = nodes.get(node);
    if (f.getDictionary() != null) {
      ArrowType.Int index = f.getDictionary().getIndexType();
      return which == 1 ? (index == null ? 4 : index.getBitWidth() / 8) : 0;
    }
    ArrowType t = f.getType();
    return switch (t.getTypeID()) {
      case Int -> which == 1 ? ((ArrowType.Int) t).getBitWidth() / 8 : 0;
      case FloatingPoint -> which != 1 ? 0 : switch (((ArrowType.FloatingPoint) t).getPrecision()) {
        case HALF -> 2;
        case SINGLE -> 4;
        case DOUBLE -> 8;
      };
      case Date -> which == 1 ? (((ArrowType.Date) t).getUnit() == org.apache.arrow.vector.types.DateUnit.DAY ? 4 : 8) : 0;
      case Time -> which == 1 ? ((ArrowType.Time) t).getBitWidth() / 8 : 0;
      case Timestamp, Duration -> which == 1 ? 8 : 0;
      case Decimal -> which == 1 ? ((ArrowType.Decimal) t).getBitWidth() / 8 : 0;
      case Interval -> which != 1 ? 0 : switch (((ArrowType.Interval) t).getUnit()) {
        case YEAR_MONTH, DAY_TIME -> 4;
        case MONTH_DAY_NANO -> SWAP_MONTH_DAY_NANO;
      };
      case Utf8, Binary, List, Map -> which == 1 ? 4 : 0;
      case LargeUtf8, LargeBinary, LargeList -> which == 1 ? 8 : 0;
      case ListView -> which == 1 || which == 2 ? 4 : 0;
      case LargeListView -> which == 1 || which == 2 ? 8 : 0;
      case Utf8View, BinaryView -> which == 1 ? SWAP_VIEWS : 0;
      case Union -> which == 1 ? 4 : 0; // dense offsets (a sparse union has only its int8 type ids)
      default -> 0;
    };
  }

  /** The Sluice fields this schema maps to, in column order (refused columns left out). */
  List<FieldPlan> fields() {
    return fields;
  }

  /** How the values of each dictionary are read, by dictionary id. */
  Map<Long, Leaf> dictionaries() {
    return dictionaries;
  }

  /** Columns that cannot be read, with the reason, by Sluice name. */
  public Map<String, String> refused() {
    return refused;
  }

  /**
   * The plans of the named fields in that order, or of every field when {@code columns} is empty; a
   * struct's or a map's name selects all the fields under it.
   *
   * @throws UnsupportedFormatException naming a selected column Sluice cannot read (every column
   *     when none is selected) and its type
   * @throws IllegalArgumentException naming a column the file does not have
   */
  List<FieldPlan> select(String resource, List<String> columns) {
    if (columns.isEmpty()) {
      if (!refused.isEmpty()) {
        Map.Entry<String, String> e = refused.entrySet().iterator().next();
        throw refusal(resource, e.getKey(), e.getValue(), true);
      }
      return List.copyOf(fields);
    }
    List<FieldPlan> out = new ArrayList<>();
    Set<String> taken = new HashSet<>();
    for (String c : columns) {
      boolean found = false;
      for (FieldPlan p : fields) {
        if (p.name().equals(c) || p.name().startsWith(c + ".")) {
          found = true;
          if (taken.add(p.name())) {
            out.add(p);
          }
        }
      }
      for (Map.Entry<String, String> e : refused.entrySet()) {
        if (e.getKey().equals(c) || e.getKey().startsWith(c + ".")) {
          throw refusal(resource, e.getKey(), e.getValue(), false);
        }
      }
      if (!found) {
        List<String> known = new ArrayList<>();
        fields.forEach(p -> known.add(p.name()));
        known.addAll(refused.keySet());
        throw new IllegalArgumentException(resource + ": no column '" + c + "'; columns are " + known);
      }
    }
    return out;
  }

  /** The Sluice schema of {@code plans}. */
  static Schema schemaOf(List<FieldPlan> plans) {
    List<TensorSpec> specs = new ArrayList<>(plans.size());
    plans.forEach(p -> specs.add(p.spec()));
    return Schema.of(specs);
  }

  private static UnsupportedFormatException refusal(String resource, String column, String reason, boolean hint) {
    return new UnsupportedFormatException(resource, "column '" + column + "'", reason
        + (hint ? "; select the other columns to read the rest (--columns, or ArrowOptions.columns)" : ""));
  }

  // ------------------------------------------------------------------ mapping

  private record Raw(int node, Field field, FieldPlan.Kind kind, int size) { }

  /** Numbers {@code f} and everything under it, and maps its leaves to Sluice fields. */
  private void visit(Field f, String name, List<Raw> path, String topType) {
    int node = nodes.size();
    nodes.add(f);
    ArrowType t = f.getType();
    if (f.getDictionary() != null) {
      // a record batch holds only the indices: the values (and any children) are in dictionary batches
      DictionaryEncoding d = f.getDictionary();
      Leaf values = leafOf(f, t);
      if (values == null || values.kind() == Leaf.Kind.NULL || values.kind() == Leaf.Kind.VIEW) {
        refuse(name, "dictionary-encoded " + t + " values are not supported (only primitive, string and binary values)");
        return;
      }
      ArrowType.Int index = d.getIndexType() == null ? new ArrowType.Int(32, true) : d.getIndexType();
      if (!List.of(8, 16, 32, 64).contains(index.getBitWidth())) {
        refuse(name, "dictionary index type " + index + " is not an integer type of 8, 16, 32 or 64 bits");
        return;
      }
      dictionaries.putIfAbsent(d.getId(), values);
      Leaf leaf = new Leaf(Leaf.Kind.DICTIONARY, values.dtype(), index.getBitWidth() / 8, 0, index.getIsSigned(),
          d.getId(), values, "dictionary<" + t + ", " + index + ">");
      leafField(name, append(path, new Raw(node, f, FieldPlan.Kind.LEAF, 0)), leaf, topType);
      return;
    }
    switch (t.getTypeID()) {
      case Struct -> {
        List<Raw> p = append(path, new Raw(node, f, FieldPlan.Kind.STRUCT, 0));
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < f.getChildren().size(); i++) {
          Field c = f.getChildren().get(i);
          visit(c, name + "." + columnName(c, i, seen), p, topType);
        }
        if (f.getChildren().isEmpty()) {
          refuse(name, "a struct without fields holds no values");
        }
      }
      case List, LargeList -> {
        if (f.getChildren().size() != 1) {
          numberChildren(f);
          refuse(name, t + " with " + f.getChildren().size() + " child fields (a list has one)");
          return;
        }
        FieldPlan.Kind k = t.getTypeID() == ArrowType.ArrowTypeID.List ? FieldPlan.Kind.LIST32 : FieldPlan.Kind.LIST64;
        visit(f.getChildren().get(0), name, append(path, new Raw(node, f, k, 0)), topType);
      }
      case FixedSizeList -> {
        if (f.getChildren().size() != 1) {
          numberChildren(f);
          refuse(name, t + " with " + f.getChildren().size() + " child fields (a list has one)");
          return;
        }
        int size = ((ArrowType.FixedSizeList) t).getListSize();
        if (size < 0) {
          numberChildren(f);
          refuse(name, t + " has a negative list size");
          return;
        }
        visit(f.getChildren().get(0), name, append(path, new Raw(node, f, FieldPlan.Kind.FIXED, size)), topType);
      }
      case ListView, LargeListView -> {
        if (f.getChildren().size() != 1) {
          numberChildren(f);
          refuse(name, t + " with " + f.getChildren().size() + " child fields (a list view has one)");
          return;
        }
        FieldPlan.Kind k = t.getTypeID() == ArrowType.ArrowTypeID.ListView ? FieldPlan.Kind.VIEW32 : FieldPlan.Kind.VIEW64;
        visit(f.getChildren().get(0), name, append(path, new Raw(node, f, k, 0)), topType);
      }
      case Union -> {
        ArrowType.Union u = (ArrowType.Union) t;
        FieldPlan.Kind k = u.getMode() == org.apache.arrow.vector.types.UnionMode.Dense
            ? FieldPlan.Kind.DENSE_MEMBER : FieldPlan.Kind.SPARSE_MEMBER;
        int[] ids = u.getTypeIds();
        if (f.getChildren().isEmpty() || ids != null && ids.length != f.getChildren().size()) {
          numberChildren(f);
          refuse(name, t + " has " + f.getChildren().size() + " members but " + (ids == null ? 0 : ids.length)
              + " type ids");
          return;
        }
        leafField(name + ".type_id", append(path, new Raw(node, f, FieldPlan.Kind.LEAF, 0)),
            Leaf.of(Leaf.Kind.TYPE_ID, DType.INT8, 1, t.toString()), topType);
        for (int i = 0; i < f.getChildren().size(); i++) {
          Field c = f.getChildren().get(i);
          int id = ids == null ? i : ids[i];
          visit(c, name + "." + c.getName(), append(path, new Raw(node, f, k, id)), topType);
        }
      }
      case RunEndEncoded -> {
        if (f.getChildren().size() != 2 || !(f.getChildren().get(0).getType() instanceof ArrowType.Int runEnds)
            || !List.of(16, 32, 64).contains(runEnds.getBitWidth())) {
          numberChildren(f);
          refuse(name, "a run-end encoded array whose children are not run ends (int16, int32 or int64) and values");
          return;
        }
        nodes.add(f.getChildren().get(0));
        numberChildren(f.getChildren().get(0));
        visit(f.getChildren().get(1), name, append(path, new Raw(node, f, FieldPlan.Kind.RUN_ENDS,
            runEnds.getBitWidth() / 8)), topType);
      }
      case Interval -> {
        numberChildren(f);
        List<Raw> p = append(path, new Raw(node, f, FieldPlan.Kind.LEAF, 0));
        switch (((ArrowType.Interval) t).getUnit()) {
          case YEAR_MONTH -> leafField(name, p, Leaf.of(Leaf.Kind.FIXED, DType.INT32, 4, t.toString()), topType);
          case DAY_TIME -> {
            leafField(name + ".days", p, Leaf.part(DType.INT32, 8, 0, t.toString()), topType);
            leafField(name + ".milliseconds", p, Leaf.part(DType.INT32, 8, 4, t.toString()), topType);
          }
          case MONTH_DAY_NANO -> {
            leafField(name + ".months", p, Leaf.part(DType.INT32, 16, 0, t.toString()), topType);
            leafField(name + ".days", p, Leaf.part(DType.INT32, 16, 4, t.toString()), topType);
            leafField(name + ".nanoseconds", p, Leaf.part(DType.INT64, 16, 8, t.toString()), topType);
          }
        }
      }
      case Map -> {
        Field entries = f.getChildren().size() == 1 ? f.getChildren().get(0) : null;
        if (entries == null || entries.getType().getTypeID() != ArrowType.ArrowTypeID.Struct
            || entries.getChildren().size() != 2 || entries.getDictionary() != null) {
          numberChildren(f);
          refuse(name, "a map whose entries are not a struct of key and value");
          return;
        }
        List<Raw> p = append(path, new Raw(node, f, FieldPlan.Kind.LIST32, 0));
        int entriesNode = nodes.size();
        nodes.add(entries);
        p = append(p, new Raw(entriesNode, entries, FieldPlan.Kind.STRUCT, 0));
        for (Field c : entries.getChildren()) {
          visit(c, name + "." + c.getName(), p, topType);
        }
      }
      default -> {
        numberChildren(f);
        Leaf leaf = leafOf(f, t);
        if (leaf == null) {
          refuse(name, "Arrow type " + t + " is not supported");
          return;
        }
        leafField(name, append(path, new Raw(node, f, FieldPlan.Kind.LEAF, 0)), leaf, topType);
      }
    }
  }

  private void numberChildren(Field f) {
    for (Field c : f.getChildren()) {
      nodes.add(c);
      numberChildren(c);
    }
  }

  private void refuse(String name, String reason) {
    refused.putIfAbsent(name, reason);
  }

  private static List<Raw> append(List<Raw> path, Raw r) {
    List<Raw> p = new ArrayList<>(path.size() + 1);
    p.addAll(path);
    p.add(r);
    return p;
  }

  /** The Sluice field of a complete path (the last entry is the leaf). */
  private void leafField(String name, List<Raw> path, Leaf leaf, String topType) {
    int n = path.size();
    FieldPlan.Kind[] kinds = new FieldPlan.Kind[n];
    // a fixed-size list is a fixed dimension when everything below it is fixed-width
    boolean fixedBelow = leaf.fixedWidth();
    for (int i = n - 1; i >= 0; i--) {
      Raw r = path.get(i);
      FieldPlan.Kind k = r.kind();
      boolean nullableItems = fixedSizeListNulls == FixedSizeListNulls.NULLABLE_ELEMENTS && i + 1 < n
          && path.get(i + 1).field().isNullable();
      if (k == FieldPlan.Kind.FIXED && (!fixedBelow || nullableItems)) {
        k = FieldPlan.Kind.FIXED_RAGGED;
        fixedBelow = false;
      }
      if (k == FieldPlan.Kind.LIST32 || k == FieldPlan.Kind.LIST64 || k == FieldPlan.Kind.VIEW32
          || k == FieldPlan.Kind.VIEW64) {
        fixedBelow = false;
      }
      kinds[i] = k;
    }
    List<FieldPlan.Step> steps = new ArrayList<>(n);
    List<Long> dims = new ArrayList<>();
    int depth = 0;
    boolean inside = false;
    boolean nullable = false;
    int nullableElements = 0;
    for (int i = 0; i < n; i++) {
      Raw r = path.get(i);
      FieldPlan.Kind k = kinds[i];
      steps.add(new FieldPlan.Step(r.node(), k, r.size(), depth, inside, r.field().getName(), hasValidity(r.field())));
      boolean mayBeNull = r.field().isNullable() || k == FieldPlan.Kind.SPARSE_MEMBER || k == FieldPlan.Kind.DENSE_MEMBER
          || i == n - 1 && leaf.kind() == Leaf.Kind.NULL;
      if (!inside && mayBeNull) {
        if (depth == 0) {
          nullable = true;
        } else {
          nullableElements |= 1 << (depth - 1);
        }
      }
      switch (k) {
        case LIST32, LIST64, FIXED_RAGGED, VIEW32, VIEW64 -> dims.add(-1L);
        case FIXED -> {
          dims.add((long) r.size());
          inside = true;
        }
        default -> { }
      }
      if (k == FieldPlan.Kind.LIST32 || k == FieldPlan.Kind.LIST64 || k == FieldPlan.Kind.FIXED_RAGGED
          || k == FieldPlan.Kind.VIEW32 || k == FieldPlan.Kind.VIEW64) {
        depth++;
        inside = false;
      }
    }
    if (depth > 30) {
      refuse(name, "lists nested " + depth + " deep (at most 30)");
      return;
    }
    long[] shape = new long[dims.size()];
    for (int i = 0; i < shape.length; i++) {
      shape[i] = dims.get(i);
    }
    if (!names.add(name)) {
      refuse(name + "#" + nodes.size(), "a second column named '" + name + "'");
      return;
    }
    TensorSpec spec = new TensorSpec(name, leaf.dtype(), Shape.of(shape), nullable, nullableElements);
    long itemBytes;
    try {
      itemBytes = Math.multiplyExact(spec.itemShape().numElements(), Math.max(1, leaf.dtype().byteSize()));
    } catch (ArithmeticException e) {
      itemBytes = Long.MAX_VALUE;
    }
    if (itemBytes > Integer.MAX_VALUE - 8) {
      refuse(name, "fixed-size lists of " + spec.itemShape() + " make items of " + itemBytes
          + " bytes, more than the 2 GiB a Sluice tensor holds");
      return;
    }
    fields.add(new FieldPlan(spec, List.copyOf(steps), leaf, topType));
  }

  /** How values of type {@code t} are read, or null when Sluice has no dtype for them. */
  static Leaf leafOf(Field f, ArrowType t) {
    String s = t.toString();
    String declared = f.getMetadata() == null ? null : f.getMetadata().get(DTYPE_KEY);
    switch (t.getTypeID()) {
      case Int: {
        ArrowType.Int i = (ArrowType.Int) t;
        DType d = switch (i.getBitWidth()) {
          case 8 -> i.getIsSigned() ? DType.INT8 : DType.UINT8;
          case 16 -> i.getIsSigned() ? DType.INT16 : DType.UINT16;
          case 32 -> i.getIsSigned() ? DType.INT32 : DType.UINT32;
          case 64 -> i.getIsSigned() ? DType.INT64 : DType.UINT64;
          default -> null;
        };
        if (d == DType.UINT16 && DType.BFLOAT16.numpyName().equals(declared)) {
          d = DType.BFLOAT16;
        }
        return d == null ? null : Leaf.of(Leaf.Kind.FIXED, d, i.getBitWidth() / 8, s);
      }
      case FloatingPoint: {
        FloatingPointPrecision p = ((ArrowType.FloatingPoint) t).getPrecision();
        return switch (p) {
          case HALF -> Leaf.of(Leaf.Kind.FIXED, DType.FLOAT16, 2, s);
          case SINGLE -> Leaf.of(Leaf.Kind.FIXED, DType.FLOAT32, 4, s);
          case DOUBLE -> Leaf.of(Leaf.Kind.FIXED, DType.FLOAT64, 8, s);
        };
      }
      case Bool:
        return Leaf.of(Leaf.Kind.BOOL, DType.BOOL, 0, s);
      case Utf8:
        return Leaf.of(Leaf.Kind.BINARY32, DType.STRING, 0, s);
      case LargeUtf8:
        return Leaf.of(Leaf.Kind.BINARY64, DType.STRING, 0, s);
      case Binary:
        return Leaf.of(Leaf.Kind.BINARY32, DType.BYTES, 0, s);
      case LargeBinary:
        return Leaf.of(Leaf.Kind.BINARY64, DType.BYTES, 0, s);
      case FixedSizeBinary:
        return Leaf.of(Leaf.Kind.FIXED_BINARY, DType.BYTES, ((ArrowType.FixedSizeBinary) t).getByteWidth(), s);
      case Date:
        return ((ArrowType.Date) t).getUnit() == org.apache.arrow.vector.types.DateUnit.DAY
            ? Leaf.of(Leaf.Kind.FIXED, DType.INT32, 4, s)
            : Leaf.of(Leaf.Kind.FIXED, DType.INT64, 8, s);
      case Time: {
        int width = ((ArrowType.Time) t).getBitWidth() / 8;
        if (width != 4 && width != 8) {
          return null;
        }
        return Leaf.of(Leaf.Kind.FIXED, width == 4 ? DType.INT32 : DType.INT64, width, s);
      }
      case Timestamp:
      case Duration:
        return Leaf.of(Leaf.Kind.FIXED, DType.INT64, 8, s);
      case Null:
        return Leaf.of(Leaf.Kind.NULL, DType.BOOL, 0, s);
      case Utf8View:
        return Leaf.of(Leaf.Kind.VIEW, DType.STRING, 16, s);
      case BinaryView:
        return Leaf.of(Leaf.Kind.VIEW, DType.BYTES, 16, s);
      case Decimal: {
        ArrowType.Decimal d = (ArrowType.Decimal) t;
        int width = d.getBitWidth() / 8;
        if (width != 4 && width != 8 && width != 16 && width != 32) {
          return null;
        }
        return new Leaf(Leaf.Kind.DECIMAL, DType.FLOAT64, width, d.getScale(), true, -1, null, s);
      }
      default:
        return null;
    }
  }

  /** Whether arrays of {@code f}'s type carry a validity bitmap (unions, run-end encoded and null arrays do not). */
  private static boolean hasValidity(Field f) {
    if (f.getDictionary() != null) {
      return true;
    }
    ArrowType.ArrowTypeID id = f.getType().getTypeID();
    return id != ArrowType.ArrowTypeID.Union && id != ArrowType.ArrowTypeID.RunEndEncoded
        && id != ArrowType.ArrowTypeID.Null;
  }
}
