package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.Column;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.Float16;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Split;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.spi.ColumnCursor;
import dev.sluice.core.spi.ColumnWindow;
import dev.sluice.io.parquet.internal.ColumnPlan;
import dev.sluice.io.parquet.internal.SchemaMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.NanoTime;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.ReadSupport;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/** Writes Parquet test files with parquet-java and reads them back with its own Group reader. */
final class ParquetTestFiles {
  private ParquetTestFiles() {}

  /** Every type Sluice maps, nullable columns, structs, lists in both layouts, a map, a list of structs. */
  static final MessageType WIDE = MessageTypeParser.parseMessageType("""
      message wide {
        required int32 i32;
        optional int32 i8 (INTEGER(8,true));
        optional int32 u8 (INTEGER(8,false));
        optional int32 i16 (INTEGER(16,true));
        optional int32 u16 (INTEGER(16,false));
        optional int32 u32 (INTEGER(32,false));
        optional int64 i64;
        optional int64 u64 (INTEGER(64,false));
        optional float f32;
        required double f64;
        optional boolean flag;
        optional binary s (STRING);
        optional binary raw;
        optional fixed_len_byte_array(4) fixed;
        optional fixed_len_byte_array(2) half (FLOAT16);
        optional int32 dec32 (DECIMAL(9,2));
        optional int64 dec64 (DECIMAL(18,4));
        optional fixed_len_byte_array(16) decfl (DECIMAL(38,6));
        optional binary decbin (DECIMAL(20,3));
        optional int32 day (DATE);
        optional int32 tms (TIME(MILLIS,true));
        optional int64 tus (TIME(MICROS,true));
        optional int64 tsm (TIMESTAMP(MILLIS,true));
        optional int64 tsu (TIMESTAMP(MICROS,false));
        optional int64 tsn (TIMESTAMP(NANOS,true));
        optional int96 legacy_ts;
        optional group st {
          required int32 a;
          optional group inner { optional double b; }
        }
        optional group x (LIST) { repeated group list { required float element; } }
        optional group v (LIST) { repeated group list { optional int64 element; } }
        optional group legacy (LIST) { repeated int32 array; }
        repeated double bare;
        optional group m (MAP) { repeated group key_value { required int32 key; optional double value; } }
        optional group ls (LIST) { repeated group list { optional group element { required int32 p; optional float q; } } }
      }
      """);

  /** Footer metadata declaring x as a 2×2 tensor. */
  static final Map<String, String> WIDE_META = Map.of("sluice.shape.x", "[2, 2]");

  /** Writer settings of one test file. */
  record Config(CompressionCodecName codec, WriterVersion version, boolean dictionary, boolean byteStreamSplit,
      boolean nulls) {
    @Override
    public String toString() {
      return codec + "/" + version + (dictionary ? "/dict" : "/plain") + (byteStreamSplit ? "/bss" : "")
          + (nulls ? "/nulls" : "");
    }
  }

  /** Pairwise cover of codec × page version × dictionary, with byte-stream-split and nulls mixed in. */
  static List<Config> pairwise() {
    CompressionCodecName[] codecs = {CompressionCodecName.UNCOMPRESSED, CompressionCodecName.SNAPPY,
        CompressionCodecName.GZIP, CompressionCodecName.ZSTD, CompressionCodecName.LZ4_RAW};
    List<Config> out = new ArrayList<>();
    for (int i = 0; i < codecs.length; i++) {
      boolean even = i % 2 == 0;
      out.add(new Config(codecs[i], WriterVersion.PARQUET_1_0, even, i % 3 == 0, true));
      out.add(new Config(codecs[i], WriterVersion.PARQUET_2_0, !even, i % 3 == 1, i != 2));
    }
    return out;
  }

  static ParquetWriter<Group> writer(Path file, MessageType schema, Map<String, String> meta, Config c,
      int rowGroupRows, int pageRows) throws IOException {
    return writer(file, schema, meta, c, rowGroupRows, pageRows, false);
  }

  /** A writer; {@code rawLz4}: LZ4 pages are raw LZ4 blocks instead of Hadoop-framed ({@link TestCodecs}). */
  static ParquetWriter<Group> writer(Path file, MessageType schema, Map<String, String> meta, Config c,
      int rowGroupRows, int pageRows, boolean rawLz4) throws IOException {
    return ExampleParquetWriter.builder(new LocalOutputFile(file))
        .withConf(new PlainParquetConfiguration())
        .withCodecFactory(new TestCodecs(rawLz4))
        .withType(schema)
        .withExtraMetaData(meta)
        .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
        .withCompressionCodec(c.codec())
        .withWriterVersion(c.version())
        .withDictionaryEncoding(c.dictionary())
        .withByteStreamSplitEncoding(c.byteStreamSplit())
        .withRowGroupRowCountLimit(rowGroupRows)
        .withPageRowCountLimit(pageRows)
        .withPageWriteChecksumEnabled(true)
        .build();
  }

  /** Writes {@code rows} random rows of {@code schema}. */
  static void write(Path file, MessageType schema, Map<String, String> meta, Config c, int rows, int rowGroupRows,
      int pageRows, long seed) throws IOException {
    write(file, schema, meta, c, rows, rowGroupRows, pageRows, seed, false);
  }

  /** As {@link #write(Path, MessageType, Map, Config, int, int, int, long)}, LZ4 pages raw when {@code rawLz4}. */
  static void write(Path file, MessageType schema, Map<String, String> meta, Config c, int rows, int rowGroupRows,
      int pageRows, long seed, boolean rawLz4) throws IOException {
    Random rnd = new Random(seed);
    SimpleGroupFactory f = new SimpleGroupFactory(schema);
    try (ParquetWriter<Group> w = writer(file, schema, meta, c, rowGroupRows, pageRows, rawLz4)) {
      for (int r = 0; r < rows; r++) {
        Group g = f.newGroup();
        fill(g, schema, rnd, c.nulls(), r);
        w.write(g);
      }
    }
  }

  private static void fill(Group g, GroupType type, Random rnd, boolean nulls, int row) {
    for (int i = 0; i < type.getFieldCount(); i++) {
      Type t = type.getType(i);
      int reps;
      if (t.isRepetition(Type.Repetition.REPEATED)) {
        reps = rnd.nextInt(4);
      } else if (t.isRepetition(Type.Repetition.OPTIONAL)) {
        reps = nulls && rnd.nextInt(5) == 0 ? 0 : 1;
      } else {
        reps = 1;
      }
      for (int k = 0; k < reps; k++) {
        if (t.isPrimitive()) {
          addValue(g, t.asPrimitiveType(), rnd, i);
        } else {
          Group child = g.addGroup(i);
          GroupType gt = t.asGroupType();
          if (t.getName().equals("x")) { // the declared [2, 2] list: exactly 4 elements
            for (int e = 0; e < 4; e++) {
              child.addGroup(0).add(0, rnd.nextFloat() * 100 - 50);
            }
          } else {
            fill(child, gt, rnd, nulls, row);
          }
        }
      }
    }
  }

  private static void addValue(Group g, PrimitiveType p, Random rnd, int i) {
    LogicalTypeAnnotation ann = p.getLogicalTypeAnnotation();
    switch (p.getPrimitiveTypeName()) {
      case BOOLEAN -> g.add(i, rnd.nextBoolean());
      case INT32 -> {
        int v = rnd.nextInt();
        if (ann instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation in && in.getBitWidth() < 32) {
          v = in.getBitWidth() == 8 ? (in.isSigned() ? (byte) v : v & 0xFF) : (in.isSigned() ? (short) v : v & 0xFFFF);
        } else if (ann instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation) {
          v = rnd.nextInt(1_000_000_000) - 500_000_000;
        } else if (ann instanceof LogicalTypeAnnotation.TimeLogicalTypeAnnotation) {
          v = rnd.nextInt(86_400_000);
        } else if (rnd.nextInt(3) == 0) {
          v = rnd.nextInt(7); // repeats, so dictionaries have something to do
        }
        g.add(i, v);
      }
      case INT64 -> {
        long v = rnd.nextLong();
        if (ann instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation
            || ann instanceof LogicalTypeAnnotation.TimeLogicalTypeAnnotation) {
          v = Math.floorMod(v, 4_000_000_000_000L);
        } else if (ann instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation) {
          v = rnd.nextLong() % 1_000_000_000_000_000L;
        } else if (rnd.nextInt(3) == 0) {
          v = rnd.nextInt(5);
        }
        g.add(i, v);
      }
      case INT96 -> g.add(i, new NanoTime(2_440_588 + rnd.nextInt(30_000), Math.floorMod(rnd.nextLong(), 86_400_000_000_000L)));
      case FLOAT -> g.add(i, rnd.nextInt(4) == 0 ? 1.5f : rnd.nextFloat() * 1000 - 500);
      case DOUBLE -> g.add(i, rnd.nextInt(4) == 0 ? -2.25 : rnd.nextGaussian() * 1e6);
      case BINARY -> {
        if (ann instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation) {
          g.add(i, Binary.fromConstantByteArray(BigInteger.valueOf(rnd.nextLong() % 100_000_000_000L).toByteArray()));
        } else if (ann instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation) {
          g.add(i, rnd.nextInt(3) == 0 ? "same" : "s" + rnd.nextInt(1000) + "é".repeat(rnd.nextInt(3)));
        } else {
          byte[] b = new byte[rnd.nextInt(6)];
          rnd.nextBytes(b);
          g.add(i, Binary.fromConstantByteArray(b));
        }
      }
      case FIXED_LEN_BYTE_ARRAY -> {
        byte[] b = new byte[p.getTypeLength()];
        if (ann instanceof LogicalTypeAnnotation.Float16LogicalTypeAnnotation) {
          short h = Float16.fromFloat(rnd.nextFloat() * 10);
          b[0] = (byte) h;
          b[1] = (byte) (h >> 8);
        } else if (ann instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation) {
          byte[] v = BigInteger.valueOf(rnd.nextLong()).toByteArray();
          byte fillByte = v[0] < 0 ? (byte) -1 : 0;
          java.util.Arrays.fill(b, fillByte);
          System.arraycopy(v, 0, b, b.length - v.length, v.length);
        } else {
          rnd.nextBytes(b);
        }
        g.add(i, Binary.fromConstantByteArray(b));
      }
    }
  }

  // ------------------------------------------------------------------ reading with parquet-java

  /**
   * Every row of {@code file} through parquet-java's own Group reader (its own codecs; Brotli, which
   * it lacks, through Sluice's).
   */
  static List<Group> readGroups(Path file) throws IOException {
    List<Group> out = new ArrayList<>();
    try (ParquetReader<Group> r = new GroupReaderBuilder(new LocalInputFile(file))
        .withCodecFactory(new TestCodecs(false)).build()) {
      Group g;
      while ((g = r.read()) != null) {
        out.add(g);
      }
    }
    return out;
  }

  private static final class GroupReaderBuilder extends ParquetReader.Builder<Group> {
    GroupReaderBuilder(InputFile file) {
      super(file, new PlainParquetConfiguration());
    }

    @Override
    protected ReadSupport<Group> getReadSupport() {
      return new GroupReadSupport();
    }
  }

  /** The plans of a file (same mapping the dataset uses). */
  static List<ColumnPlan> plans(ParquetDataset ds, Path file) throws IOException {
    try (org.apache.parquet.hadoop.ParquetFileReader r =
        org.apache.parquet.hadoop.ParquetFileReader.open(new LocalInputFile(file))) {
      SchemaMapper.Mapping m = SchemaMapper.map(file.toString(), r.getFileMetaData().getSchema(),
          r.getFileMetaData().getKeyValueMetaData(), ds.options().shapes());
      return m.select(file.toString(), ds.options().columns());
    }
  }

  // ------------------------------------------------------------------ expected values

  /**
   * The value Sluice must deliver for {@code plan} in row {@code g}, read through parquet-java's
   * Group: null, a scalar, or a list (of lists, at every repeated node of the path) whose null
   * elements are nulls.
   */
  static Object expected(Group g, ColumnPlan plan) {
    return value(g, plan.descriptor().getPath(), 0, plan);
  }

  private static Object value(Group cur, String[] path, int i, ColumnPlan plan) {
    Type t = cur.getType().getType(path[i]);
    int n = cur.getFieldRepetitionCount(path[i]);
    boolean leaf = i == path.length - 1;
    if (t.isRepetition(Type.Repetition.REPEATED)) {
      List<Object> out = new ArrayList<>();
      for (int k = 0; k < n; k++) {
        out.add(leaf ? leafValue(cur, path[i], k, plan) : value(cur.getGroup(path[i], k), path, i + 1, plan));
      }
      return out;
    }
    if (n == 0) {
      return null;
    }
    return leaf ? leafValue(cur, path[i], 0, plan) : value(cur.getGroup(path[i], 0), path, i + 1, plan);
  }

  private static Object leafValue(Group g, String field, int k, ColumnPlan plan) {
    PrimitiveType p = g.getType().getType(field).asPrimitiveType();
    LogicalTypeAnnotation ann = p.getLogicalTypeAnnotation();
    if (ann instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation d) {
      BigInteger unscaled = switch (p.getPrimitiveTypeName()) {
        case INT32 -> BigInteger.valueOf(g.getInteger(field, k));
        case INT64 -> BigInteger.valueOf(g.getLong(field, k));
        default -> new BigInteger(g.getBinary(field, k).getBytes());
      };
      return new BigDecimal(unscaled, d.getScale()).doubleValue();
    }
    long timeScale = 1;
    if (ann instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation t) {
      timeScale = nanos(t.getUnit());
    } else if (ann instanceof LogicalTypeAnnotation.TimeLogicalTypeAnnotation t) {
      timeScale = nanos(t.getUnit());
    }
    return switch (p.getPrimitiveTypeName()) {
      case BOOLEAN -> g.getBoolean(field, k) ? 1L : 0L;
      case INT32 -> {
        int v = g.getInteger(field, k);
        yield switch (plan.dtype()) {
          case INT8 -> (long) (byte) v;
          case UINT8 -> (long) (v & 0xFF);
          case INT16 -> (long) (short) v;
          case UINT16 -> (long) (v & 0xFFFF);
          case UINT32 -> Integer.toUnsignedLong(v);
          default -> (long) v * timeScale;
        };
      }
      case INT64 -> g.getLong(field, k) * timeScale;
      case INT96 -> {
        NanoTime t = NanoTime.fromBinary(g.getInt96(field, k));
        yield (t.getJulianDay() - 2_440_588L) * 86_400_000_000_000L + t.getTimeOfDayNanos();
      }
      case FLOAT -> (double) g.getFloat(field, k);
      case DOUBLE -> g.getDouble(field, k);
      case BINARY -> HexFormat.of().formatHex(g.getBinary(field, k).getBytes());
      case FIXED_LEN_BYTE_ARRAY -> {
        byte[] b = g.getBinary(field, k).getBytes();
        if (ann instanceof LogicalTypeAnnotation.Float16LogicalTypeAnnotation) {
          yield (double) Float16.toFloat(ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getShort());
        }
        yield HexFormat.of().formatHex(b);
      }
    };
  }

  private static long nanos(LogicalTypeAnnotation.TimeUnit u) {
    return switch (u) {
      case MILLIS -> 1_000_000L;
      case MICROS -> 1_000L;
      case NANOS -> 1L;
    };
  }

  // ------------------------------------------------------------------ actual values

  /** The value of row {@code row} of a batch column, normalized like {@link #expected}. */
  static Object actual(Column c, int row) {
    return c.isValid(row) ? normalize(c.spec(), c.row(row)) : null;
  }

  static Object actual(Example e, TensorSpec spec) {
    return e.isNull(spec.name()) ? null : normalize(spec, e.tensor(spec.name()));
  }

  /** A row's value as null / scalar / hex string / (nested) list, walking its levels. */
  static Object normalize(TensorSpec spec, Tensor t) {
    if (spec.raggedRank() == 0) {
      if (spec.dtype().isVariableLength()) {
        return HexFormat.of().formatHex(t.toByteArray());
      }
      if (spec.shape().rank() == 0) {
        return scalar(t, 0);
      }
      List<Object> out = new ArrayList<>(); // a fixed-shape list: its elements in order
      for (long i = 0; i < t.numElements(); i++) {
        out.add(scalar(t, i));
      }
      return out;
    }
    return list(spec, t, 0);
  }

  private static List<Object> list(TensorSpec spec, Tensor t, int depth) {
    List<Object> out = new ArrayList<>();
    for (long i = 0, n = t.shape().dim(0); i < n; i++) {
      if (t.isNull(i)) {
        out.add(null);
      } else if (depth + 1 < spec.raggedRank()) {
        out.add(list(spec, t.slice(i), depth + 1));
      } else if (spec.dtype().isVariableLength()) {
        out.add(HexFormat.of().formatHex(t.slice(i).toByteArray()));
      } else {
        out.add(scalar(t, i));
      }
    }
    return out;
  }

  private static Object scalar(Tensor t, long i) {
    if (t.dtype().isFloatingPoint()) {
      return t.getAsDouble(i);
    }
    return t.getAsLong(i);
  }

  /** Asserts that the batches hold exactly {@code groups[from..)} in order. */
  static int assertBatchesMatch(List<Batch> batches, List<Group> groups, int from, List<ColumnPlan> plans, String what) {
    int row = from;
    for (Batch b : batches) {
      Schema s = b.schema();
      for (int r = 0; r < b.size(); r++, row++) {
        assertEquals(row, b.index(r), what + ": index of row " + row);
        for (int c = 0; c < plans.size(); c++) {
          assertEquals(expected(groups.get(row), plans.get(c)), actual(b.column(c), r),
              what + ": row " + row + ", column '" + s.field(c).name() + "'");
        }
      }
    }
    return row;
  }

  /**
   * Every row of {@code ds} read as the window shuffle reads it: row groups open as cursors, windows
   * of {@code windowRows} rows (a window may span row groups) decoded one field at a time and
   * gathered, in order or each window reversed, one batch per window. The caller closes the batches.
   */
  static List<Batch> gatherByColumns(ParquetDataset ds, int windowRows, boolean reversed) {
    BufferPool pool = MemoryManager.shared().pool("test.by-columns");
    List<Batch> out = new ArrayList<>();
    List<ColumnCursor> open = new ArrayList<>();
    try (ColumnWindow window = new ColumnWindow(ds.schema(), windowRows, pool, ds.toString())) {
      java.util.Iterator<Split> splits = ds.splits().iterator();
      ColumnCursor current = null;
      long left = 0; // rows of the current cursor not yet in a window
      for (;;) {
        while (window.size() < windowRows) {
          if (left == 0) {
            if (!splits.hasNext()) {
              break;
            }
            current = ds.openColumns(splits.next(), 0, Long.MAX_VALUE);
            open.add(current);
            left = current.remaining();
            continue;
          }
          int n = (int) Math.min(left, windowRows - window.size());
          window.add(current, n);
          left -= n;
        }
        int size = window.size();
        if (size == 0) {
          return out;
        }
        int[] order = new int[size];
        for (int i = 0; i < size; i++) {
          order[i] = reversed ? size - 1 - i : i;
        }
        try (BatchBuilder b = BatchBuilder.create(ds.schema(), size, pool)) {
          BatchBuilder.appendRows(window, order, 0, size, List.of(b));
          out.add(b.build());
        }
      }
    } catch (RuntimeException e) {
      out.forEach(Batch::close);
      throw e;
    } finally {
      open.forEach(ColumnCursor::close);
    }
  }

  // ------------------------------------------------------------------ canonical bytes, from the Group reader

  /**
   * The SHA-256 of the canonical bytes (fields in name order; a list is its count then its
   * elements, a flag byte before each where the level is nullable), written from the values
   * parquet-java's Group reader gives, not from Sluice's tensors.
   */
  static String canonicalSha(List<Group> groups, List<ColumnPlan> plans) throws Exception {
    List<ColumnPlan> sorted = new ArrayList<>(plans);
    sorted.sort((a, b) -> a.name().compareTo(b.name()));
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    for (Group g : groups) {
      for (ColumnPlan p : sorted) {
        Object v = expected(g, p);
        TensorSpec spec = p.spec();
        if (spec.nullable()) {
          md.update((byte) (v == null ? 0 : 1));
        }
        if (v == null) {
          if (spec.isFixedLength()) {
            md.update(new byte[(int) spec.rowBytes()]);
          } else {
            count(md, 0);
          }
        } else if (spec.isFixedLength() && spec.shape().rank() > 0) {
          for (Object e : (List<?>) v) {
            leaf(md, spec, e);
          }
        } else {
          item(md, spec, 0, v);
        }
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }

  private static void item(MessageDigest md, TensorSpec spec, int depth, Object v) {
    if (depth == spec.raggedRank()) {
      leaf(md, spec, v);
      return;
    }
    List<?> list = (List<?>) v;
    count(md, list.size());
    for (Object e : list) {
      if (spec.elementsNullable(depth)) {
        md.update((byte) (e == null ? 0 : 1));
      }
      if (e != null) {
        item(md, spec, depth + 1, e);
      } else if (depth + 1 == spec.raggedRank() && !spec.dtype().isVariableLength()) {
        md.update(new byte[spec.dtype().byteSize()]);
      } else {
        count(md, 0);
      }
    }
  }

  private static void leaf(MessageDigest md, TensorSpec spec, Object v) {
    ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    switch (spec.dtype()) {
      case STRING, BYTES -> {
        byte[] bytes = HexFormat.of().parseHex((String) v);
        count(md, bytes.length);
        md.update(bytes);
        return;
      }
      case FLOAT16 -> b.putShort(Float16.fromFloat((float) (double) (Double) v));
      case FLOAT32 -> b.putFloat((float) (double) (Double) v);
      case FLOAT64 -> b.putDouble((Double) v);
      default -> b.putLong((Long) v); // integers and booleans: the low bytes, little-endian
    }
    md.update(b.array(), 0, spec.dtype().byteSize());
  }

  private static void count(MessageDigest md, long n) {
    md.update(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(n).array());
  }
}
