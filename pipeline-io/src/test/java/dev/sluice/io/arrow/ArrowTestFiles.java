package dev.sluice.io.arrow;

import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.Float16;
import dev.sluice.core.Tensor;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.Decimal256Vector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.IntervalYearVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeSecVector;
import org.apache.arrow.vector.ViewVarBinaryVector;
import org.apache.arrow.vector.ViewVarCharVector;
import org.apache.arrow.vector.complex.DenseUnionVector;
import org.apache.arrow.vector.complex.LargeListViewVector;
import org.apache.arrow.vector.complex.ListViewVector;
import org.apache.arrow.vector.complex.RunEndEncodedVector;
import org.apache.arrow.vector.complex.UnionVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.ArrowWriter;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Arrow IPC test files written by Arrow Java's own writers, in the spirit of apache/arrow-testing's
 * integration files: every primitive type Sluice maps, nulls at every level, lists, large lists,
 * fixed-size lists, lists of lists and of strings, structs, maps, lists of structs, dictionaries,
 * empty record batches, compressed buffers, file and stream formats. And the oracle: the rows as
 * Arrow Java reads them back, in the canonical form {@link #sluiceRow} gives Sluice's examples.
 */
final class ArrowTestFiles {
  static final long DICT_STRINGS = 1;
  static final long DICT_LONGS = 2;
  static final String[] WORDS = {"alpha", "", "gamma", "δέλτα", "epsilon with spaces", "z"};

  private ArrowTestFiles() {}

  private static Field f(String name, ArrowType type, Field... children) {
    return new Field(name, FieldType.nullable(type), children.length == 0 ? null : List.of(children));
  }

  private static Field required(String name, ArrowType type, Field... children) {
    return new Field(name, FieldType.notNullable(type), children.length == 0 ? null : List.of(children));
  }

  /** The columns of the rich file (dictionary columns in memory format: their index type). */
  static Schema richSchema() {
    ArrowType i32 = new ArrowType.Int(32, true);
    return new Schema(List.of(
        f("b", ArrowType.Bool.INSTANCE),
        f("i8", new ArrowType.Int(8, true)), f("i16", new ArrowType.Int(16, true)), f("i32", i32),
        required("i64", new ArrowType.Int(64, true)),
        f("u8", new ArrowType.Int(8, false)), f("u16", new ArrowType.Int(16, false)),
        f("u32", new ArrowType.Int(32, false)), f("u64", new ArrowType.Int(64, false)),
        f("f16", new ArrowType.FloatingPoint(FloatingPointPrecision.HALF)),
        f("f32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
        required("f64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
        f("s", ArrowType.Utf8.INSTANCE), f("ls", ArrowType.LargeUtf8.INSTANCE),
        f("bin", ArrowType.Binary.INSTANCE), f("lbin", ArrowType.LargeBinary.INSTANCE),
        f("fsb", new ArrowType.FixedSizeBinary(3)),
        f("date32", new ArrowType.Date(DateUnit.DAY)), f("date64", new ArrowType.Date(DateUnit.MILLISECOND)),
        f("time32", new ArrowType.Time(TimeUnit.MILLISECOND, 32)), f("time64", new ArrowType.Time(TimeUnit.MICROSECOND, 64)),
        f("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
        f("dur", new ArrowType.Duration(TimeUnit.MILLISECOND)),
        f("dec", new ArrowType.Decimal(10, 2, 128)), f("dec256", new ArrowType.Decimal(40, 5, 256)),
        f("list_i32", ArrowType.List.INSTANCE, f("item", i32)),
        f("llist_f64", ArrowType.LargeList.INSTANCE, f("item", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))),
        f("fsl_f32", new ArrowType.FixedSizeList(3), required("item", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE))),
        f("list_str", ArrowType.List.INSTANCE, f("item", ArrowType.Utf8.INSTANCE)),
        f("list_list", ArrowType.List.INSTANCE, f("item", ArrowType.List.INSTANCE, f("item", new ArrowType.Int(16, true)))),
        required("fsl_fsl", new ArrowType.FixedSizeList(2),
            required("item", new ArrowType.FixedSizeList(2), required("item", new ArrowType.Int(8, true)))),
        f("list_fsl", ArrowType.List.INSTANCE,
            f("item", new ArrowType.FixedSizeList(2), required("item", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))),
        f("fsl_str", new ArrowType.FixedSizeList(2), f("item", ArrowType.Utf8.INSTANCE)),
        f("st", ArrowType.Struct.INSTANCE, f("a", i32), f("b", ArrowType.Utf8.INSTANCE)),
        f("m", new ArrowType.Map(false), required("entries", ArrowType.Struct.INSTANCE,
            required("key", ArrowType.Utf8.INSTANCE), f("value", new ArrowType.Int(64, true)))),
        f("list_struct", ArrowType.List.INSTANCE,
            f("item", ArrowType.Struct.INSTANCE, f("p", i32), f("q", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)))),
        new Field("dict_s", new FieldType(true, i32, new DictionaryEncoding(DICT_STRINGS, false, new ArrowType.Int(32, true))), null),
        new Field("dict_i", new FieldType(true, new ArrowType.Int(8, true),
            new DictionaryEncoding(DICT_LONGS, false, new ArrowType.Int(8, true))), null)));
  }

  /** Whether row {@code r} of column {@code c} is null (every third-ish row of nullable columns). */
  private static boolean isNull(int r, int c) {
    return (r * 7 + c * 3) % 5 == 2;
  }

  /**
   * Writes the rich columns in {@code format}, record batches of the given row counts (0 makes an
   * empty batch), compressed with {@code codec}.
   */
  static void writeRich(Path out, IpcFormat format, CompressionUtil.CodecType codec, int[] batchRows, long seed)
      throws IOException {
    try (BufferAllocator alloc = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(richSchema(), alloc);
        Dictionaries dicts = new Dictionaries(alloc);
        FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      org.apache.arrow.vector.compression.CompressionCodec.Factory factory = codec == CompressionUtil.CodecType.NO_COMPRESSION
          ? org.apache.arrow.vector.compression.CompressionCodec.Factory.INSTANCE : CommonsCompressionFactory.INSTANCE;
      ArrowWriter w = format == IpcFormat.FILE
          ? new ArrowFileWriter(root, dicts.provider, ch, null, IpcOption.DEFAULT, factory, codec)
          : new ArrowStreamWriter(root, dicts.provider, ch, IpcOption.DEFAULT, factory, codec);
      try (w) {
        w.start();
        int first = 0;
        Random rnd = new Random(seed);
        for (int n : batchRows) {
          root.allocateNew();
          for (int r = 0; r < n; r++) {
            fillRow(root, r, first + r, rnd);
          }
          root.setRowCount(n);
          w.writeBatch();
          first += n;
        }
        w.end();
      }
    }
  }

  /**
   * The other types: a sparse and a dense union, a binary and a string view, a list view, a
   * run-end encoded string, a null column, day-time and month-day-nano intervals, a timestamp in
   * seconds; record batches of the given row counts, compressed with {@code codec}.
   */
  static void writeOtherTypes(Path out, IpcFormat format, CompressionUtil.CodecType codec, int[] batchRows)
      throws IOException {
    int intId = org.apache.arrow.vector.types.Types.MinorType.INT.ordinal();
    int strId = org.apache.arrow.vector.types.Types.MinorType.VARCHAR.ordinal();
    Schema schema = new Schema(List.of(
        required("sparse", new ArrowType.Union(org.apache.arrow.vector.types.UnionMode.Sparse, new int[] {intId, strId}),
            f("i", new ArrowType.Int(32, true)), f("s", ArrowType.Utf8.INSTANCE)),
        required("dense", new ArrowType.Union(org.apache.arrow.vector.types.UnionMode.Dense, new int[] {3, 1}),
            f("d", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)), f("b", new ArrowType.Int(8, true))),
        f("sv", ArrowType.Utf8View.INSTANCE), f("bv", ArrowType.BinaryView.INSTANCE),
        f("lv", ArrowType.ListView.INSTANCE, f("item", new ArrowType.Int(16, true))),
        f("ree", ArrowType.RunEndEncoded.INSTANCE, required("run_ends", new ArrowType.Int(16, true)),
            f("values", ArrowType.Utf8.INSTANCE)),
        f("n", ArrowType.Null.INSTANCE),
        f("dt", new ArrowType.Interval(org.apache.arrow.vector.types.IntervalUnit.DAY_TIME)),
        f("mdn", new ArrowType.Interval(org.apache.arrow.vector.types.IntervalUnit.MONTH_DAY_NANO)),
        f("ts", new ArrowType.Timestamp(TimeUnit.SECOND, null))));
    try (BufferAllocator alloc = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
        FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      org.apache.arrow.vector.compression.CompressionCodec.Factory factory = codec == CompressionUtil.CodecType.NO_COMPRESSION
          ? org.apache.arrow.vector.compression.CompressionCodec.Factory.INSTANCE : CommonsCompressionFactory.INSTANCE;
      ArrowWriter w = format == IpcFormat.FILE
          ? new ArrowFileWriter(root, null, ch, null, IpcOption.DEFAULT, factory, codec)
          : new ArrowStreamWriter(root, null, ch, IpcOption.DEFAULT, factory, codec);
      try (w) {
        w.start();
        int first = 0;
        for (int n : batchRows) {
          root.clear(); // view vectors keep their data buffers through allocateNew alone
          root.allocateNew();
          fillOtherTypes(root, n, first, intId, strId);
          root.setRowCount(n);
          w.writeBatch();
          first += n;
        }
        w.end();
      }
    }
  }

  private static void fillOtherTypes(VectorSchemaRoot root, int n, int first, int intId, int strId) {
    UnionVector sparse = (UnionVector) root.getVector("sparse");
    IntVector si = (IntVector) sparse.getChildrenFromFields().get(0);
    VarCharVector ss = (VarCharVector) sparse.getChildrenFromFields().get(1);
    DenseUnionVector dense = (DenseUnionVector) root.getVector("dense");
    Float8Vector dd = (Float8Vector) dense.getChildrenFromFields().get(0);
    TinyIntVector db = (TinyIntVector) dense.getChildrenFromFields().get(1);
    ViewVarCharVector sv = (ViewVarCharVector) root.getVector("sv");
    ViewVarBinaryVector bv = (ViewVarBinaryVector) root.getVector("bv");
    ListViewVector lv = (ListViewVector) root.getVector("lv");
    SmallIntVector lvItems = (SmallIntVector) lv.getDataVector();
    IntervalDayVector dt = (IntervalDayVector) root.getVector("dt");
    IntervalMonthDayNanoVector mdn = (IntervalMonthDayNanoVector) root.getVector("mdn");
    TimeStampVector ts = (TimeStampVector) root.getVector("ts");
    int nd = 0;
    int nb = 0;
    for (int j = 0; j < 2 * n + 1; j++) {
      lvItems.setSafe(j, (short) (first + j));
    }
    lvItems.setValueCount(2 * n + 1);
    for (int i = 0; i < n; i++) {
      int r = first + i;
      boolean nul = isNull(r, 1);
      sparse.getTypeBuffer().setByte(i, r % 2 == 0 ? intId : strId);
      si.setSafe(i, r * 3);
      ss.setSafe(i, (WORDS[r % WORDS.length] + r).getBytes(StandardCharsets.UTF_8));
      if (r % 3 == 0) {
        dense.setTypeId(i, (byte) 3);
        dense.getOffsetBuffer().setInt(i * 4L, nd);
        dd.setSafe(nd++, r / 7.0);
      } else {
        dense.setTypeId(i, (byte) 1);
        dense.getOffsetBuffer().setInt(i * 4L, nb);
        db.setSafe(nb++, (byte) r);
      }
      if (nul) {
        sv.setNull(i);
        bv.setNull(i);
        lv.setNull(i);
        dt.setNull(i);
        mdn.setNull(i);
        ts.setNull(i);
        continue;
      }
      sv.setSafe(i, ("view " + r + (r % 2 == 0 ? "" : " long enough to leave the view")).getBytes(StandardCharsets.UTF_8));
      bv.setSafe(i, new byte[] {(byte) r, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, (byte) (r >> 8)}, 0, 1 + r % 14);
      BitVectorHelper.setBit(lv.getValidityBuffer(), i);
      lv.getOffsetBuffer().setInt(i * 4L, (2 * n - i) % (2 * n + 1));
      lv.getSizeBuffer().setInt(i * 4L, Math.min(r % 3, 2 * n + 1 - (2 * n - i) % (2 * n + 1)));
      dt.setSafe(i, r, -r * 1000);
      mdn.setSafe(i, r, -r, r * 1_000_000_007L);
      ts.setSafe(i, r % 2 == 0 ? -62_135_596_800L : 253_402_214_400L + r);
    }
    si.setValueCount(n);
    ss.setValueCount(n);
    sparse.setValueCount(n);
    dd.setValueCount(nd);
    db.setValueCount(nb);
    dense.setValueCount(n);
    dd.setValueCount(nd);
    db.setValueCount(nb);
    sv.setValueCount(n);
    bv.setValueCount(n);
    lv.setValueCount(n);
    ((NullVector) root.getVector("n")).setValueCount(n);
    RunEndEncodedVector ree = (RunEndEncodedVector) root.getVector("ree");
    SmallIntVector ends = (SmallIntVector) ree.getRunEndsVector();
    VarCharVector values = (VarCharVector) ree.getValuesVector();
    int runs = 0;
    for (int end = Math.min(n, 2); end <= n && n > 0; end = end == n ? n + 1 : Math.min(n, end + 1 + runs)) {
      ends.setSafe(runs, (short) end);
      if (runs % 3 == 2) {
        values.setNull(runs);
      } else {
        values.setSafe(runs, ("run " + (first + runs)).getBytes(StandardCharsets.UTF_8));
      }
      runs++;
    }
    ends.setValueCount(runs);
    values.setValueCount(runs);
    ree.setValueCount(n);
  }

  /** The dictionaries of the rich file. */
  static final class Dictionaries implements AutoCloseable {
    final DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider();
    private final VarCharVector strings;
    private final BigIntVector longs;

    Dictionaries(BufferAllocator alloc) {
      strings = new VarCharVector("dict_s", alloc);
      strings.allocateNew();
      for (int i = 0; i < WORDS.length; i++) {
        strings.setSafe(i, WORDS[i].getBytes(StandardCharsets.UTF_8));
      }
      strings.setNull(WORDS.length); // a null value in the dictionary itself
      strings.setValueCount(WORDS.length + 1);
      longs = new BigIntVector("dict_i", alloc);
      longs.allocateNew();
      for (int i = 0; i < 5; i++) {
        longs.setSafe(i, (i - 2) * 1_000_000_007L);
      }
      longs.setValueCount(5);
      provider.put(new Dictionary(strings, new DictionaryEncoding(DICT_STRINGS, false, new ArrowType.Int(32, true))));
      provider.put(new Dictionary(longs, new DictionaryEncoding(DICT_LONGS, false, new ArrowType.Int(8, true))));
    }

    @Override
    public void close() {
      strings.close();
      longs.close();
    }
  }

  private static void fillRow(VectorSchemaRoot root, int i, int r, Random rnd) {
    List<FieldVector> v = root.getFieldVectors();
    int c = 0;
    ((BitVector) v.get(c)).setNull(i);
    if (!isNull(r, c)) {
      ((BitVector) v.get(c)).setSafe(i, rnd.nextBoolean() ? 1 : 0);
    }
    c++;
    long x = rnd.nextLong();
    setOrNull((TinyIntVector) v.get(c), i, isNull(r, c), () -> ((TinyIntVector) v.get(1)).setSafe(i, (byte) x));
    c++;
    setOrNull((SmallIntVector) v.get(c), i, isNull(r, c), () -> ((SmallIntVector) v.get(2)).setSafe(i, (short) (x >> 8)));
    c++;
    setOrNull((IntVector) v.get(c), i, isNull(r, c), () -> ((IntVector) v.get(3)).setSafe(i, (int) (x >> 16)));
    c++;
    ((BigIntVector) v.get(c++)).setSafe(i, x);
    setOrNull((UInt1Vector) v.get(c), i, isNull(r, c), () -> ((UInt1Vector) v.get(5)).setSafe(i, (byte) (0x80 | r)));
    c++;
    setOrNull((UInt2Vector) v.get(c), i, isNull(r, c), () -> ((UInt2Vector) v.get(6)).setSafe(i, (char) (0x8000 | r)));
    c++;
    setOrNull((UInt4Vector) v.get(c), i, isNull(r, c), () -> ((UInt4Vector) v.get(7)).setSafe(i, 0x80000000 | r));
    c++;
    setOrNull((UInt8Vector) v.get(c), i, isNull(r, c), () -> ((UInt8Vector) v.get(8)).setSafe(i, 0x8000000000000000L | x));
    c++;
    setOrNull((Float2Vector) v.get(c), i, isNull(r, c), () -> ((Float2Vector) v.get(9)).setSafe(i, Float16.fromFloat(r * 0.5f - 3)));
    c++;
    setOrNull((Float4Vector) v.get(c), i, isNull(r, c), () -> ((Float4Vector) v.get(10)).setSafe(i, (float) rnd.nextGaussian()));
    c++;
    ((Float8Vector) v.get(c++)).setSafe(i, r % 11 == 0 ? Double.NaN : rnd.nextGaussian());
    String word = WORDS[r % WORDS.length] + r;
    byte[] utf8 = word.getBytes(StandardCharsets.UTF_8);
    setOrNull((VarCharVector) v.get(c), i, isNull(r, c), () -> ((VarCharVector) v.get(12)).setSafe(i, utf8));
    c++;
    setOrNull((LargeVarCharVector) v.get(c), i, isNull(r, c), () -> ((LargeVarCharVector) v.get(13)).setSafe(i, utf8));
    c++;
    byte[] blob = new byte[r % 9];
    rnd.nextBytes(blob);
    setOrNull((VarBinaryVector) v.get(c), i, isNull(r, c), () -> ((VarBinaryVector) v.get(14)).setSafe(i, blob));
    c++;
    setOrNull((LargeVarBinaryVector) v.get(c), i, isNull(r, c), () -> ((LargeVarBinaryVector) v.get(15)).setSafe(i, blob));
    c++;
    byte[] three = {(byte) r, (byte) (r >> 8), (byte) 0xff};
    setOrNull((FixedSizeBinaryVector) v.get(c), i, isNull(r, c), () -> ((FixedSizeBinaryVector) v.get(16)).setSafe(i, three));
    c++;
    setOrNull((DateDayVector) v.get(c), i, isNull(r, c), () -> ((DateDayVector) v.get(17)).setSafe(i, 19000 + r));
    c++;
    setOrNull((DateMilliVector) v.get(c), i, isNull(r, c), () -> ((DateMilliVector) v.get(18)).setSafe(i, (19000L + r) * 86_400_000L));
    c++;
    setOrNull((TimeMilliVector) v.get(c), i, isNull(r, c), () -> ((TimeMilliVector) v.get(19)).setSafe(i, r * 1001));
    c++;
    setOrNull((TimeMicroVector) v.get(c), i, isNull(r, c), () -> ((TimeMicroVector) v.get(20)).setSafe(i, r * 1_000_003L));
    c++;
    setOrNull((TimeStampVector) v.get(c), i, isNull(r, c), () -> ((TimeStampVector) v.get(21)).setSafe(i, 1_700_000_000_000_000L + r));
    c++;
    setOrNull((DurationVector) v.get(c), i, isNull(r, c), () -> ((DurationVector) v.get(22)).setSafe(i, -r * 17L));
    c++;
    setOrNull((DecimalVector) v.get(c), i, isNull(r, c), () -> ((DecimalVector) v.get(23)).setSafe(i, BigDecimal.valueOf(r * 12345L - 99, 2)));
    c++;
    setOrNull((Decimal256Vector) v.get(c), i, isNull(r, c),
        () -> ((Decimal256Vector) v.get(24)).setSafe(i, new BigDecimal("-12345678901234567890123456789." + (10000 + r))));
    c++;
    // list_i32: null lists, empty lists, null elements
    ListVector listI = (ListVector) v.get(c);
    if (isNull(r, c)) {
      listI.setNull(i);
    } else {
      int start = listI.startNewValue(i);
      int n = r % 4;
      IntVector items = (IntVector) listI.getDataVector();
      for (int j = 0; j < n; j++) {
        if ((r + j) % 3 == 1) {
          items.setNull(start + j);
        } else {
          items.setSafe(start + j, r * 10 + j);
        }
      }
      listI.endValue(i, n);
    }
    c++;
    LargeListVector llist = (LargeListVector) v.get(c);
    if (isNull(r, c)) {
      llist.setNull(i);
    } else {
      long start = llist.startNewValue(i);
      int n = (r * 5) % 3;
      Float8Vector items = (Float8Vector) llist.getDataVector();
      for (int j = 0; j < n; j++) {
        items.setSafe((int) start + j, r + j / 8.0);
      }
      llist.endValue(i, n);
    }
    c++;
    FixedSizeListVector fsl = (FixedSizeListVector) v.get(c);
    Float4Vector fslItems = (Float4Vector) fsl.getDataVector();
    for (int j = 0; j < 3; j++) {
      fslItems.setSafe(i * 3 + j, isNull(r, c) ? 99f : r + j * 0.25f); // garbage under a null list
    }
    if (isNull(r, c)) {
      fsl.setNull(i);
    } else {
      fsl.setNotNull(i);
    }
    c++;
    ListVector listStr = (ListVector) v.get(c);
    if (isNull(r, c)) {
      listStr.setNull(i);
    } else {
      int start = listStr.startNewValue(i);
      int n = r % 3;
      VarCharVector items = (VarCharVector) listStr.getDataVector();
      for (int j = 0; j < n; j++) {
        if (j == 1 && r % 2 == 0) {
          items.setNull(start + j);
        } else {
          items.setSafe(start + j, (WORDS[(r + j) % WORDS.length]).getBytes(StandardCharsets.UTF_8));
        }
      }
      listStr.endValue(i, n);
    }
    c++;
    ListVector listList = (ListVector) v.get(c);
    if (isNull(r, c)) {
      listList.setNull(i);
    } else {
      int start = listList.startNewValue(i);
      int n = r % 3;
      ListVector inner = (ListVector) listList.getDataVector();
      for (int j = 0; j < n; j++) {
        if ((r + j) % 4 == 3) {
          inner.setNull(start + j);
          continue;
        }
        int s2 = inner.startNewValue(start + j);
        int m = (r + j) % 3;
        SmallIntVector items = (SmallIntVector) inner.getDataVector();
        for (int k = 0; k < m; k++) {
          items.setSafe(s2 + k, (short) (r - k));
        }
        inner.endValue(start + j, m);
      }
      listList.endValue(i, n);
    }
    c++;
    FixedSizeListVector fslFsl = (FixedSizeListVector) v.get(c);
    fslFsl.setNotNull(i);
    FixedSizeListVector fslInner = (FixedSizeListVector) fslFsl.getDataVector();
    TinyIntVector fslBytes = (TinyIntVector) fslInner.getDataVector();
    for (int j = 0; j < 2; j++) {
      fslInner.setNotNull(i * 2 + j);
      for (int k = 0; k < 2; k++) {
        fslBytes.setSafe(i * 4 + j * 2 + k, (byte) (r + j * 2 + k));
      }
    }
    c++;
    ListVector listFsl = (ListVector) v.get(c);
    if (isNull(r, c)) {
      listFsl.setNull(i);
    } else {
      int start = listFsl.startNewValue(i);
      int n = r % 3;
      FixedSizeListVector pairs = (FixedSizeListVector) listFsl.getDataVector();
      Float4Vector pv = (Float4Vector) pairs.getDataVector();
      for (int j = 0; j < n; j++) {
        pairs.setNotNull(start + j);
        pv.setSafe((start + j) * 2, r);
        pv.setSafe((start + j) * 2 + 1, -j);
      }
      listFsl.endValue(i, n);
    }
    c++;
    FixedSizeListVector fslStr = (FixedSizeListVector) v.get(c);
    VarCharVector fslStrItems = (VarCharVector) fslStr.getDataVector();
    if (isNull(r, c)) {
      fslStr.setNull(i);
      fslStrItems.setSafe(i * 2, "junk".getBytes(StandardCharsets.UTF_8));
      fslStrItems.setSafe(i * 2 + 1, "junk".getBytes(StandardCharsets.UTF_8));
    } else {
      fslStr.setNotNull(i);
      fslStrItems.setSafe(i * 2, WORDS[r % WORDS.length].getBytes(StandardCharsets.UTF_8));
      if (r % 3 == 0) {
        fslStrItems.setNull(i * 2 + 1);
      } else {
        fslStrItems.setSafe(i * 2 + 1, ("w" + r).getBytes(StandardCharsets.UTF_8));
      }
    }
    c++;
    StructVector st = (StructVector) v.get(c);
    IntVector sa = (IntVector) st.getChild("a");
    VarCharVector sb = (VarCharVector) st.getChild("b");
    if (isNull(r, c)) {
      st.setNull(i);
      sa.setSafe(i, 12345); // garbage under a null struct
      sb.setSafe(i, "hidden".getBytes(StandardCharsets.UTF_8));
    } else {
      st.setIndexDefined(i);
      if (r % 4 == 0) {
        sa.setNull(i);
      } else {
        sa.setSafe(i, -r);
      }
      sb.setSafe(i, ("b" + r).getBytes(StandardCharsets.UTF_8));
    }
    c++;
    MapVector m = (MapVector) v.get(c);
    if (isNull(r, c)) {
      m.setNull(i);
    } else {
      int start = m.startNewValue(i);
      int n = r % 3;
      StructVector entries = (StructVector) m.getDataVector();
      VarCharVector keys = (VarCharVector) entries.getChild("key");
      BigIntVector values = (BigIntVector) entries.getChild("value");
      for (int j = 0; j < n; j++) {
        entries.setIndexDefined(start + j);
        keys.setSafe(start + j, ("k" + j).getBytes(StandardCharsets.UTF_8));
        if (j == 1) {
          values.setNull(start + j);
        } else {
          values.setSafe(start + j, (long) r * j);
        }
      }
      m.endValue(i, n);
    }
    c++;
    ListVector listStruct = (ListVector) v.get(c);
    if (isNull(r, c)) {
      listStruct.setNull(i);
    } else {
      int start = listStruct.startNewValue(i);
      int n = r % 3;
      StructVector items = (StructVector) listStruct.getDataVector();
      IntVector p = (IntVector) items.getChild("p");
      Float8Vector q = (Float8Vector) items.getChild("q");
      for (int j = 0; j < n; j++) {
        if ((r + j) % 5 == 4) {
          items.setNull(start + j);
        } else {
          items.setIndexDefined(start + j);
          p.setSafe(start + j, r + j);
          q.setSafe(start + j, r / 4.0 + j);
        }
      }
      listStruct.endValue(i, n);
    }
    c++;
    IntVector dictS = (IntVector) v.get(c);
    setOrNull(dictS, i, isNull(r, c), () -> dictS.setSafe(i, r % (WORDS.length + 1)));
    c++;
    TinyIntVector dictI = (TinyIntVector) v.get(c);
    setOrNull(dictI, i, isNull(r, c), () -> dictI.setSafe(i, (byte) (r % 5)));
  }

  private static void setOrNull(BaseFixedWidthVector v, int i, boolean isNull, Runnable set) {
    if (isNull) {
      v.setNull(i);
    } else {
      set.run();
    }
  }

  private static void setOrNull(org.apache.arrow.vector.BaseLargeVariableWidthVector v, int i, boolean isNull,
      Runnable set) {
    if (isNull) {
      v.setNull(i);
    } else {
      set.run();
    }
  }

  private static void setOrNull(BaseVariableWidthVector v, int i, boolean isNull, Runnable set) {
    if (isNull) {
      v.setNull(i);
    } else {
      set.run();
    }
  }

  // ------------------------------------------------------------------ the oracle

  /** Every row of {@code file} as Arrow Java reads it, flattened the way Sluice names fields. */
  static List<Map<String, Object>> arrowRows(Path file, IpcFormat format) throws IOException {
    List<Map<String, Object>> rows = new ArrayList<>();
    try (BufferAllocator alloc = new RootAllocator();
        FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
        ArrowReader reader = format == IpcFormat.FILE
            ? new ArrowFileReader(ch, alloc, CommonsCompressionFactory.INSTANCE)
            : new ArrowStreamReader(ch, alloc, CommonsCompressionFactory.INSTANCE)) {
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      while (reader.loadNextBatch()) {
        for (int i = 0; i < root.getRowCount(); i++) {
          Map<String, Object> row = new LinkedHashMap<>();
          List<Field> fields = root.getSchema().getFields(); // the file's own (Arrow Java renumbers union type ids)
          java.util.Set<String> seen = new java.util.HashSet<>();
          for (int c = 0; c < fields.size(); c++) {
            Field field = fields.get(c);
            String name = field.getName() == null || field.getName().isEmpty() ? "_" + c : field.getName();
            name = seen.add(name) ? name : name + "#" + c;
            row.putAll(values(name, field, root.getVector(c), i, reader));
          }
          rows.add(row);
        }
      }
    }
    return rows;
  }

  private static Map<String, Object> values(String name, Field f, ValueVector v, int i, DictionaryProvider dicts) {
    Map<String, Object> out = new LinkedHashMap<>();
    if (f.getDictionary() != null) {
      if (v.isNull(i)) {
        out.put(name, null);
      } else {
        Dictionary d = dicts.lookup(f.getDictionary().getId());
        int index = (int) ((BaseIntVector) v).getValueAsLong(i);
        FieldVector dv = d.getVector();
        Field df = dv.getField();
        if (df.getType() instanceof ArrowType.Struct || df.getType() instanceof ArrowType.List
            || df.getType() instanceof ArrowType.LargeList || df.getType() instanceof ArrowType.FixedSizeList) {
          return values(name, df, dv, index, dicts);
        }
        out.put(name, scalar(dv, index));
      }
      return out;
    }
    if (v instanceof StructVector st) {
      java.util.Set<String> seen = new java.util.HashSet<>();
      for (int k = 0; k < f.getChildren().size(); k++) {
        Field c = f.getChildren().get(k);
        String cname = c.getName() == null || c.getName().isEmpty() ? "_" + k : c.getName();
        cname = seen.add(cname) ? cname : cname + "#" + k;
        Map<String, Object> child = values(name + "." + cname, c, st.getChildrenFromFields().get(k), i, dicts);
        if (st.isNull(i)) {
          child.replaceAll((key, x) -> null);
        }
        out.putAll(child);
      }
      return out;
    }
    if (v instanceof IntervalDayVector d) {
      boolean isNull = d.isNull(i);
      out.put(name + ".days", isNull ? null : (long) d.getDataBuffer().getInt((long) i * 8));
      out.put(name + ".milliseconds", isNull ? null : (long) d.getDataBuffer().getInt((long) i * 8 + 4));
      return out;
    }
    if (v instanceof IntervalMonthDayNanoVector d) {
      boolean isNull = d.isNull(i);
      out.put(name + ".months", isNull ? null : (long) d.getDataBuffer().getInt((long) i * 16));
      out.put(name + ".days", isNull ? null : (long) d.getDataBuffer().getInt((long) i * 16 + 4));
      out.put(name + ".nanoseconds", isNull ? null : d.getDataBuffer().getLong((long) i * 16 + 8));
      return out;
    }
    if (v instanceof UnionVector u) {
      byte type = (byte) u.getTypeValue(i);
      out.put(name + ".type_id", (long) type);
      ArrowType.Union ut = (ArrowType.Union) f.getType();
      for (int k = 0; k < f.getChildren().size(); k++) {
        Field c = f.getChildren().get(k);
        int id = ut.getTypeIds() == null ? k : ut.getTypeIds()[k];
        Map<String, Object> child = values(name + "." + c.getName(), c, u.getChildrenFromFields().get(k), i, dicts);
        if (id != type) {
          child.replaceAll((key, x) -> null);
        }
        out.putAll(child);
      }
      return out;
    }
    if (v instanceof DenseUnionVector u) {
      byte type = u.getTypeId(i);
      out.put(name + ".type_id", (long) type);
      ArrowType.Union ut = (ArrowType.Union) f.getType();
      for (int k = 0; k < f.getChildren().size(); k++) {
        Field c = f.getChildren().get(k);
        int id = ut.getTypeIds() == null ? k : ut.getTypeIds()[k];
        Map<String, Object> child;
        if (id == type) {
          child = values(name + "." + c.getName(), c, u.getChildrenFromFields().get(k), u.getOffset(i), dicts);
        } else {
          child = new LinkedHashMap<>();
          for (String leaf : leaves(name + "." + c.getName(), c)) {
            child.put(leaf, null);
          }
        }
        out.putAll(child);
      }
      return out;
    }
    if (v instanceof RunEndEncodedVector ree) {
      Field valuesField = f.getChildren().get(1);
      int physical = ree.getPhysicalIndex(i);
      return values(name, valuesField, ree.getValuesVector(), physical, dicts);
    }
    if (v instanceof ListViewVector || v instanceof LargeListViewVector) {
      Field childField = f.getChildren().get(0);
      boolean large = v instanceof LargeListViewVector;
      FieldVector lv = (FieldVector) v;
      ValueVector data = large ? ((LargeListViewVector) v).getDataVector() : ((ListViewVector) v).getDataVector();
      long start = large ? lv.getOffsetBuffer().getLong((long) i * 8) : lv.getOffsetBuffer().getInt((long) i * 4);
      long size = large ? ((LargeListViewVector) v).getSizeBuffer().getLong((long) i * 8)
          : ((ListViewVector) v).getSizeBuffer().getInt((long) i * 4);
      Map<String, List<Object>> lists = new LinkedHashMap<>();
      for (String leaf : leaves(name, childField)) {
        lists.put(leaf, new ArrayList<>());
      }
      if (!v.isNull(i)) {
        for (long j = start; j < start + size; j++) {
          values(name, childField, data, (int) j, dicts).forEach((k, x) -> lists.get(k).add(x));
        }
      }
      lists.forEach((k, l) -> out.put(k, v.isNull(i) ? null : l));
      return out;
    }
    if (v instanceof ListVector || v instanceof LargeListVector || v instanceof FixedSizeListVector) {
      Field childField = f.getChildren().get(0);
      ValueVector data;
      long start;
      long end;
      if (v instanceof MapVector mv) {
        data = mv.getDataVector();
        start = mv.getElementStartIndex(i);
        end = mv.getElementEndIndex(i);
      } else if (v instanceof ListVector lv) {
        data = lv.getDataVector();
        start = lv.getElementStartIndex(i);
        end = lv.getElementEndIndex(i);
      } else if (v instanceof LargeListVector lv) {
        data = lv.getDataVector();
        start = lv.getElementStartIndex(i);
        end = lv.getElementEndIndex(i);
      } else {
        FixedSizeListVector fv = (FixedSizeListVector) v;
        data = fv.getDataVector();
        start = (long) i * fv.getListSize();
        end = start + fv.getListSize();
      }
      Map<String, List<Object>> lists = new LinkedHashMap<>();
      for (String leaf : leaves(name, childField)) {
        lists.put(leaf, new ArrayList<>());
      }
      if (!v.isNull(i)) {
        for (long j = start; j < end; j++) {
          values(name, childField, data, (int) j, dicts).forEach((k, x) -> lists.get(k).add(x));
        }
      }
      lists.forEach((k, l) -> out.put(k, v.isNull(i) ? null : l));
      return out;
    }
    out.put(name, scalar(v, i));
    return out;
  }

  private static List<String> leaves(String name, Field f) {
    if (f.getDictionary() == null && f.getType() instanceof ArrowType.Struct) {
      List<String> out = new ArrayList<>();
      java.util.Set<String> seen = new java.util.HashSet<>();
      for (int k = 0; k < f.getChildren().size(); k++) {
        Field c = f.getChildren().get(k);
        String cname = c.getName() == null || c.getName().isEmpty() ? "_" + k : c.getName();
        cname = seen.add(cname) ? cname : cname + "#" + k;
        out.addAll(leaves(name + "." + cname, c));
      }
      return out;
    }
    if (f.getDictionary() == null && f.getType() instanceof ArrowType.Union) {
      List<String> out = new ArrayList<>();
      out.add(name + ".type_id");
      for (Field c : f.getChildren()) {
        out.addAll(leaves(name + "." + c.getName(), c));
      }
      return out;
    }
    if (f.getDictionary() == null && f.getType() instanceof ArrowType.Interval iv) {
      return switch (iv.getUnit()) {
        case YEAR_MONTH -> List.of(name);
        case DAY_TIME -> List.of(name + ".days", name + ".milliseconds");
        case MONTH_DAY_NANO -> List.of(name + ".months", name + ".days", name + ".nanoseconds");
      };
    }
    if (f.getDictionary() == null && f.getType() instanceof ArrowType.RunEndEncoded) {
      return leaves(name, f.getChildren().get(1));
    }
    if (f.getDictionary() == null && (f.getType() instanceof ArrowType.ListView
        || f.getType() instanceof ArrowType.LargeListView)) {
      return leaves(name, f.getChildren().get(0));
    }
    if (f.getDictionary() == null && f.getType() instanceof ArrowType.Map) {
      return leaves(name, f.getChildren().get(0));
    }
    if (f.getDictionary() == null && (f.getType() instanceof ArrowType.List || f.getType() instanceof ArrowType.LargeList
        || f.getType() instanceof ArrowType.FixedSizeList)) {
      return leaves(name, f.getChildren().get(0));
    }
    return List.of(name);
  }

  /** One Arrow value in canonical form: Long, Double, Boolean, String, or hex for bytes; null for a null. */
  static Object scalar(ValueVector v, int i) {
    if (v.isNull(i)) {
      return null;
    }
    if (v instanceof BitVector b) {
      return b.get(i) != 0;
    }
    if (v instanceof Float2Vector h) {
      return (double) Float16.toFloat(h.get(i));
    }
    if (v instanceof Float4Vector x) {
      return (double) x.get(i);
    }
    if (v instanceof Float8Vector x) {
      return x.get(i);
    }
    if (v instanceof DateMilliVector d) {
      return d.get(i);
    }
    if (v instanceof TimeSecVector t) {
      return (long) t.get(i);
    }
    if (v instanceof TimeMilliVector t) {
      return (long) t.getDataBuffer().getInt((long) i * 4);
    }
    if (v instanceof TimeMicroVector t) {
      return t.get(i);
    }
    if (v instanceof TimeNanoVector t) {
      return t.get(i);
    }
    if (v instanceof TimeStampVector t) {
      return t.get(i);
    }
    if (v instanceof DurationVector d) {
      return DurationVector.get(d.getDataBuffer(), i);
    }
    if (v instanceof IntervalYearVector y) {
      return (long) y.get(i);
    }
    if (v instanceof DecimalVector d) {
      return d.getObject(i).doubleValue();
    }
    if (v instanceof Decimal256Vector d) {
      return d.getObject(i).doubleValue();
    }
    if (v instanceof DateDayVector d) {
      return (long) d.get(i);
    }
    if (v instanceof BaseIntVector x) {
      return x.getValueAsLong(i);
    }
    if (v instanceof ViewVarCharVector s) {
      return new String(s.get(i), StandardCharsets.UTF_8);
    }
    if (v instanceof ViewVarBinaryVector b) {
      return HexFormat.of().formatHex(b.get(i));
    }
    if (v instanceof VarCharVector s) {
      return new String(s.get(i), StandardCharsets.UTF_8);
    }
    if (v instanceof LargeVarCharVector s) {
      return new String(s.get(i), StandardCharsets.UTF_8);
    }
    if (v instanceof VarBinaryVector b) {
      return HexFormat.of().formatHex(b.get(i));
    }
    if (v instanceof LargeVarBinaryVector b) {
      return HexFormat.of().formatHex(b.get(i));
    }
    if (v instanceof FixedSizeBinaryVector b) {
      return HexFormat.of().formatHex(b.get(i));
    }
    throw new IllegalArgumentException("no canonical form for " + v.getClass().getSimpleName());
  }

  // ------------------------------------------------------------------ Sluice's side

  /** The fields of {@code e} in canonical form (see {@link #scalar}); lists and fixed dimensions are lists. */
  static Map<String, Object> sluiceRow(Example e) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (String name : e.names()) {
      out.put(name, e.isNull(name) ? null : canonical(e.tensor(name)));
    }
    return out;
  }

  static Object canonical(Tensor t) {
    if (t.shape().rank() == 0) {
      return scalar(t, 0);
    }
    long n = t.shape().dim(0);
    List<Object> out = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      out.add(t.isNull(i) ? null : canonical(t.slice(i)));
    }
    return out;
  }

  private static Object scalar(Tensor t, long i) {
    DType d = t.dtype();
    return switch (d) {
      case BOOL -> t.getBoolean(i);
      case FLOAT16, FLOAT32, FLOAT64 -> t.getAsDouble(i);
      case STRING -> t.getString();
      case BYTES -> {
        java.nio.ByteBuffer b = t.bytesAt(0);
        byte[] a = new byte[b.remaining()];
        b.get(a);
        yield HexFormat.of().formatHex(a);
      }
      default -> t.getAsLong(i);
    };
  }

  static List<Map<String, Object>> unmodifiable(List<Map<String, Object>> rows) {
    return Collections.unmodifiableList(rows);
  }
}
