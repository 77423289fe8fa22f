package dev.sluice.io.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.arrow.flatbuf.DictionaryBatch;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.DurationVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.IntervalMonthDayNanoVector;
import org.apache.arrow.vector.IntervalYearVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ViewVarBinaryVector;
import org.apache.arrow.vector.ViewVarCharVector;
import org.apache.arrow.vector.complex.DenseUnionVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.ListViewVector;
import org.apache.arrow.vector.complex.RunEndEncodedVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.UnionVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.ArrowWriter;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.IntervalUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.Types.MinorType;
import org.apache.arrow.vector.types.UnionMode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each Arrow type beyond the plain ones (the layouts of apache/arrow-testing's integration files),
 * written with Arrow Java and read through Sluice, value by value against Arrow Java's own reading;
 * and big-endian files, byte-swapped on read, against their little-endian twins.
 */
@ExtendWith(NoLeaks.class)
class ArrowTypesTest {
  private static final int ROWS = 7;

  @TempDir
  Path dir;

  private static Field nullable(String name, ArrowType type, Field... children) {
    return new Field(name, FieldType.nullable(type), children.length == 0 ? null : List.of(children));
  }

  private static Field required(String name, ArrowType type, Field... children) {
    return new Field(name, FieldType.notNullable(type), children.length == 0 ? null : List.of(children));
  }

  /** Writes one record batch of {@code ROWS} rows of {@code fields}, filled by {@code fill}. */
  private Path write(String name, List<Field> fields, Consumer<VectorSchemaRoot> fill, IpcFormat format)
      throws IOException {
    Path f = dir.resolve(name + (format == IpcFormat.FILE ? ".arrow" : ".arrows"));
    try (BufferAllocator alloc = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(fields), alloc);
        FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ArrowWriter w = format == IpcFormat.FILE ? new ArrowFileWriter(root, null, ch) : new ArrowStreamWriter(root, null, ch);
      try (w) {
        root.allocateNew();
        fill.accept(root);
        root.setRowCount(ROWS);
        w.start();
        w.writeBatch();
        w.end();
      }
    }
    return f;
  }

  /** Sluice's rows of {@code f} by random access and by the columnar path equal {@code expected}. */
  private static void assertRows(Path f, List<Map<String, Object>> expected) {
    try (ArrowDataset ds = Arrow.open(f)) {
      assertThat(ds.size()).isEqualTo(expected.size());
      for (int i = 0; i < expected.size(); i++) {
        assertThat(ArrowTestFiles.sluiceRow(ds.get(i))).as("row %d", i).isEqualTo(expected.get(i));
      }
      List<Map<String, Object>> fromBatches = new ArrayList<>();
      for (Split s : ds.splits()) {
        for (Batch b : ds.readBatches(s, 0, Long.MAX_VALUE, 3).collectList().block()) {
          try (b) {
            for (int r = 0; r < b.size(); r++) {
              fromBatches.add(ArrowTestFiles.sluiceRow(b.copyRow(r)));
            }
          }
        }
      }
      assertThat(fromBatches).isEqualTo(expected);
      // the index path: a gather in scattered order
      int n = expected.size();
      long[] indices = new long[n];
      for (int i = 0; i < n; i++) {
        indices[i] = (i * 5L + 3) % n;
      }
      try (BatchBuilder bb = BatchBuilder.create(ds.schema(), n, MemoryManager.shared().pool("test"))) {
        ds.gather(indices, 0, n, bb);
        try (Batch b = bb.build()) {
          for (int i = 0; i < n; i++) {
            assertThat(ArrowTestFiles.sluiceRow(b.copyRow(i))).as("gathered row %d", indices[i])
                .isEqualTo(expected.get((int) indices[i]));
          }
        }
      }
    }
  }

  private static void assertReadsAsArrowJava(Path f, IpcFormat format) throws IOException {
    List<Map<String, Object>> expected = ArrowTestFiles.arrowRows(f, format);
    assertRows(f, expected);
    // the bridge builds the same columns from Arrow Java's vectors
    List<Map<String, Object>> bridged = new ArrayList<>();
    try (BufferAllocator alloc = new RootAllocator();
        FileChannel ch = FileChannel.open(f, StandardOpenOption.READ);
        org.apache.arrow.vector.ipc.ArrowReader reader = format == IpcFormat.FILE
            ? new org.apache.arrow.vector.ipc.ArrowFileReader(ch, alloc)
            : new org.apache.arrow.vector.ipc.ArrowStreamReader(ch, alloc)) {
      while (reader.loadNextBatch()) {
        try (Batch b = ArrowBridge.fromArrow(reader.getVectorSchemaRoot())) {
          for (int r = 0; r < b.size(); r++) {
            bridged.add(ArrowTestFiles.sluiceRow(b.copyRow(r)));
          }
        }
      }
    }
    assertThat(bridged).isEqualTo(expected);
  }

  private static Schema schemaOf(Path f) {
    try (ArrowDataset ds = Arrow.open(f)) {
      return ds.schema();
    }
  }

  // ------------------------------------------------------------------ times

  @Test
  void timesDatesAndDurationsKeepTheirUnitOverTheWholeInt64Range() throws Exception {
    long[] seconds = {-62_135_596_800L, 253_402_214_400L, Long.MIN_VALUE, Long.MAX_VALUE, 0, -1, 1_700_000_000L};
    List<Field> fields = List.of(
        nullable("ts_s", new ArrowType.Timestamp(TimeUnit.SECOND, null)),
        nullable("ts_ms_tz", new ArrowType.Timestamp(TimeUnit.MILLISECOND, "US/Eastern")),
        nullable("dur_s", new ArrowType.Duration(TimeUnit.SECOND)),
        nullable("dur_ns", new ArrowType.Duration(TimeUnit.NANOSECOND)),
        nullable("date_ms", new ArrowType.Date(DateUnit.MILLISECOND)),
        nullable("time_ms", new ArrowType.Time(TimeUnit.MILLISECOND, 32)),
        nullable("time_ns", new ArrowType.Time(TimeUnit.NANOSECOND, 64)));
    Path f = write("times", fields, root -> {
      for (int i = 0; i < ROWS; i++) {
        long v = seconds[i];
        ((TimeStampVector) root.getVector("ts_s")).setSafe(i, v);
        ((TimeStampVector) root.getVector("ts_ms_tz")).setSafe(i, -v);
        ((DurationVector) root.getVector("dur_s")).setSafe(i, v);
        ((DurationVector) root.getVector("dur_ns")).setSafe(i, v ^ 0x5555);
        ((DateMilliVector) root.getVector("date_ms")).setSafe(i, v == Long.MIN_VALUE ? v : v * 3 + 1);
        ((TimeMilliVector) root.getVector("time_ms")).setSafe(i, (int) v);
        ((TimeNanoVector) root.getVector("time_ns")).setSafe(i, v);
      }
      ((DurationVector) root.getVector("dur_ns")).setNull(3);
    }, IpcFormat.FILE);
    assertReadsAsArrowJava(f, IpcFormat.FILE);
    Schema s = schemaOf(f);
    assertThat(s.field("ts_s").dtype()).isEqualTo(DType.INT64);
    assertThat(s.field("date_ms").dtype()).isEqualTo(DType.INT64);
    assertThat(s.field("time_ms").dtype()).isEqualTo(DType.INT32);
    assertThat(s.field("time_ns").dtype()).isEqualTo(DType.INT64);
    try (ArrowDataset ds = Arrow.open(f)) {
      assertThat(ds.get(1).tensor("ts_s").getLong(0)).isEqualTo(253_402_214_400L);
      assertThat(ds.get(2).tensor("dur_s").getLong(0)).isEqualTo(Long.MIN_VALUE);
    }
  }

  // ------------------------------------------------------------------ null and intervals

  @Test
  void nullColumnsAreNullEverywhereAndIntervalsAreTheirParts() throws Exception {
    List<Field> fields = List.of(
        nullable("n", ArrowType.Null.INSTANCE),
        nullable("ym", new ArrowType.Interval(IntervalUnit.YEAR_MONTH)),
        nullable("dt", new ArrowType.Interval(IntervalUnit.DAY_TIME)),
        nullable("mdn", new ArrowType.Interval(IntervalUnit.MONTH_DAY_NANO)),
        nullable("ln", ArrowType.List.INSTANCE, nullable("item", ArrowType.Null.INSTANCE)));
    Path f = write("intervals", fields, root -> {
      ((NullVector) root.getVector("n")).setValueCount(ROWS);
      ListVector ln = (ListVector) root.getVector("ln");
      for (int i = 0; i < ROWS; i++) {
        if (i % 3 == 1) {
          ((IntervalYearVector) root.getVector("ym")).setNull(i);
          ((IntervalDayVector) root.getVector("dt")).setNull(i);
          ((IntervalMonthDayNanoVector) root.getVector("mdn")).setNull(i);
          ln.setNull(i);
          continue;
        }
        ((IntervalYearVector) root.getVector("ym")).setSafe(i, -i * 13);
        ((IntervalDayVector) root.getVector("dt")).setSafe(i, i * 1000 - 3, -i * 86_399_999);
        ((IntervalMonthDayNanoVector) root.getVector("mdn")).setSafe(i, i - 3, -i * 31, Long.MIN_VALUE / (i + 1));
        ln.startNewValue(i);
        ln.endValue(i, i % 3);
      }
      ln.getDataVector().setValueCount(ROWS);
    }, IpcFormat.STREAM);
    assertReadsAsArrowJava(f, IpcFormat.STREAM);
    Schema s = schemaOf(f);
    assertThat(s.fields().stream().map(TensorSpec::name)).containsExactly("n", "ym", "dt.days", "dt.milliseconds", "mdn.months", "mdn.days",
        "mdn.nanoseconds", "ln");
    assertThat(s.field("n")).isEqualTo(new TensorSpec("n", DType.BOOL, Shape.scalar(), true));
    assertThat(s.field("ym").dtype()).isEqualTo(DType.INT32);
    assertThat(s.field("mdn.nanoseconds").dtype()).isEqualTo(DType.INT64);
    assertThat(s.field("ln")).isEqualTo(new TensorSpec("ln", DType.BOOL, Shape.of(-1), true, 1));
  }

  // ------------------------------------------------------------------ unions

  @Test
  void unionsAreTheirTypeIdAndOneNullableFieldPerMember() throws Exception {
    int intId = MinorType.INT.ordinal();
    int strId = MinorType.VARCHAR.ordinal();
    List<Field> fields = List.of(
        required("sparse", new ArrowType.Union(UnionMode.Sparse, new int[] {intId, strId}),
            nullable("i", new ArrowType.Int(32, true)), nullable("s", ArrowType.Utf8.INSTANCE)),
        required("dense", new ArrowType.Union(UnionMode.Dense, new int[] {5, 9}),
            nullable("f", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
            nullable("l", ArrowType.List.INSTANCE, nullable("item", new ArrowType.Int(16, true)))));
    Path f = write("unions", fields, root -> {
      UnionVector sparse = (UnionVector) root.getVector("sparse");
      IntVector si = (IntVector) sparse.getChildrenFromFields().get(0);
      VarCharVector ss = (VarCharVector) sparse.getChildrenFromFields().get(1);
      DenseUnionVector dense = (DenseUnionVector) root.getVector("dense");
      Float8Vector df = (Float8Vector) dense.getChildrenFromFields().get(0);
      ListVector dl = (ListVector) dense.getChildrenFromFields().get(1);
      SmallIntVector items = (SmallIntVector) dl.getDataVector();
      int nf = 0;
      int nl = 0;
      int item = 0;
      for (int i = 0; i < ROWS; i++) {
        boolean first = i % 3 != 2;
        sparse.getTypeBuffer().setByte(i, first ? intId : strId);
        si.setSafe(i, i * 11); // a sparse union's members have a slot for every row
        ss.setSafe(i, ("word" + i).getBytes(StandardCharsets.UTF_8));
        if (i == 4) {
          si.setNull(i);
        }
        dense.setTypeId(i, (byte) (first ? 5 : 9));
        if (first) {
          dense.getOffsetBuffer().setInt(i * 4L, nf);
          if (i == 3) {
            df.setNull(nf);
          } else {
            df.setSafe(nf, i / 4.0);
          }
          nf++;
        } else {
          dense.getOffsetBuffer().setInt(i * 4L, nl);
          dl.startNewValue(nl);
          for (int j = 0; j < i % 4; j++) {
            items.setSafe(item++, (short) (i * 100 + j));
          }
          dl.endValue(nl, i % 4);
          nl++;
        }
      }
      si.setValueCount(ROWS);
      ss.setValueCount(ROWS);
      sparse.setValueCount(ROWS);
      df.setValueCount(nf);
      items.setValueCount(item);
      dl.setValueCount(nl);
      dense.setValueCount(ROWS);
      df.setValueCount(nf);
      dl.setValueCount(nl);
    }, IpcFormat.FILE);
    assertReadsAsArrowJava(f, IpcFormat.FILE);
    Schema s = schemaOf(f);
    assertThat(s.fields().stream().map(TensorSpec::name)).containsExactly("sparse.type_id", "sparse.i", "sparse.s", "dense.type_id", "dense.f",
        "dense.l");
    assertThat(s.field("sparse.type_id")).isEqualTo(new TensorSpec("sparse.type_id", DType.INT8, Shape.scalar(), false));
    assertThat(s.field("dense.f").nullable()).isTrue();
    assertThat(s.field("dense.l")).isEqualTo(new TensorSpec("dense.l", DType.INT16, Shape.of(-1), true, 1));
    try (ArrowDataset ds = Arrow.open(f)) {
      assertThat(ArrowTestFiles.sluiceRow(ds.get(2))).containsEntry("sparse.type_id", (long) strId)
          .containsEntry("sparse.i", null).containsEntry("sparse.s", "word2").containsEntry("dense.type_id", 9L)
          .containsEntry("dense.f", null).containsEntry("dense.l", List.of(200L, 201L));
      assertThat(ArrowTestFiles.sluiceRow(ds.get(4))).containsEntry("sparse.i", null).containsEntry("sparse.s", null)
          .containsEntry("dense.f", 1.0);
    }
  }

  // ------------------------------------------------------------------ views and runs

  @Test
  void viewsAndRunEndEncodedArraysAreMaterialized() throws Exception {
    List<Field> fields = List.of(
        nullable("sv", ArrowType.Utf8View.INSTANCE),
        nullable("bv", ArrowType.BinaryView.INSTANCE),
        nullable("lv", ArrowType.ListView.INSTANCE, nullable("item", new ArrowType.Int(32, true))),
        nullable("ree", ArrowType.RunEndEncoded.INSTANCE, required("run_ends", new ArrowType.Int(32, true)),
            nullable("values", ArrowType.Utf8.INSTANCE)));
    Path f = write("views", fields, root -> {
      ViewVarCharVector sv = (ViewVarCharVector) root.getVector("sv");
      ViewVarBinaryVector bv = (ViewVarBinaryVector) root.getVector("bv");
      for (int i = 0; i < ROWS; i++) {
        if (i == 2) {
          sv.setNull(i);
          bv.setNull(i);
          continue;
        }
        // short values are inline in the view, long ones in a data buffer
        sv.setSafe(i, ("v" + i + (i % 2 == 0 ? "" : " is longer than twelve bytes")).getBytes(StandardCharsets.UTF_8));
        byte[] b = new byte[i * 5];
        for (int j = 0; j < b.length; j++) {
          b[j] = (byte) (i * 31 + j);
        }
        bv.setSafe(i, b);
      }
      sv.setValueCount(ROWS);
      bv.setValueCount(ROWS);
      // list views out of order and overlapping: row i is elements [offset, offset + size) of 0..9
      ListViewVector lv = (ListViewVector) root.getVector("lv");
      IntVector elems = (IntVector) lv.getDataVector();
      for (int j = 0; j < 10; j++) {
        elems.setSafe(j, j * j);
      }
      elems.setValueCount(10);
      for (int i = 0; i < ROWS; i++) {
        if (i == 5) {
          lv.setNull(i);
          continue;
        }
        BitVectorHelper.setBit(lv.getValidityBuffer(), i);
        lv.getOffsetBuffer().setInt(i * 4L, (9 - i) % 10 / 2);
        lv.getSizeBuffer().setInt(i * 4L, i % 4);
      }
      lv.setValueCount(ROWS);
      // runs: rows 0-2 "a", 3 null, 4-6 "long run value"
      RunEndEncodedVector ree = (RunEndEncodedVector) root.getVector("ree");
      IntVector ends = (IntVector) ree.getRunEndsVector();
      VarCharVector values = (VarCharVector) ree.getValuesVector();
      ends.setSafe(0, 3);
      ends.setSafe(1, 4);
      ends.setSafe(2, ROWS);
      ends.setValueCount(3);
      values.setSafe(0, "a".getBytes(StandardCharsets.UTF_8));
      values.setNull(1);
      values.setSafe(2, "long run value".getBytes(StandardCharsets.UTF_8));
      values.setValueCount(3);
      ree.setValueCount(ROWS);
    }, IpcFormat.FILE);
    assertReadsAsArrowJava(f, IpcFormat.FILE);
    Schema s = schemaOf(f);
    assertThat(s.field("sv").dtype()).isEqualTo(DType.STRING);
    assertThat(s.field("bv").dtype()).isEqualTo(DType.BYTES);
    assertThat(s.field("lv")).isEqualTo(new TensorSpec("lv", DType.INT32, Shape.of(-1), true, 1));
    assertThat(s.field("ree")).isEqualTo(new TensorSpec("ree", DType.STRING, Shape.scalar(), true));
    try (ArrowDataset ds = Arrow.open(f)) {
      assertThat(ArrowTestFiles.sluiceRow(ds.get(3))).containsEntry("sv", "v3 is longer than twelve bytes")
          .containsEntry("lv", List.of(9L, 16L, 25L)).containsEntry("ree", null);
      assertThat(ArrowTestFiles.sluiceRow(ds.get(6))).containsEntry("ree", "long run value");
    }
  }

  // ------------------------------------------------------------------ fixed-size lists of nullable items

  @Test
  void fixedSizeListsOfNullableItemsAreReadWholeAsNullableElementsOnRequest() throws Exception {
    List<Field> fields = List.of(
        nullable("fsl", new ArrowType.FixedSizeList(3), nullable("item", new ArrowType.Int(32, true))),
        nullable("clean", new ArrowType.FixedSizeList(2), nullable("item", new ArrowType.Int(64, true))));
    Path f = write("fsl", fields, root -> {
      FixedSizeListVector fsl = (FixedSizeListVector) root.getVector("fsl");
      IntVector items = (IntVector) fsl.getDataVector();
      FixedSizeListVector clean = (FixedSizeListVector) root.getVector("clean");
      BigIntVector cleanItems = (BigIntVector) clean.getDataVector();
      for (int i = 0; i < ROWS; i++) {
        clean.setNotNull(i);
        cleanItems.setSafe(i * 2, i);
        cleanItems.setSafe(i * 2 + 1, -i);
        if (i == 4) {
          fsl.setNull(i);
          continue;
        }
        fsl.setNotNull(i);
        for (int j = 0; j < 3; j++) {
          if ((i + j) % 4 == 1) {
            items.setNull(i * 3 + j);
          } else {
            items.setSafe(i * 3 + j, i * 10 + j);
          }
        }
      }
      items.setValueCount(ROWS * 3);
      cleanItems.setValueCount(ROWS * 2);
    }, IpcFormat.FILE);
    try (ArrowDataset ds = Arrow.open(f)) {
      assertThat(ds.schema().field("fsl")).isEqualTo(new TensorSpec("fsl", DType.INT32, Shape.of(3), true));
      assertThatThrownBy(() -> ds.get(0)).isInstanceOf(dev.sluice.core.UnsupportedFormatException.class)
          .hasMessageContaining("column 'fsl'").hasMessageContaining("fixedSizeListNulls(NULLABLE_ELEMENTS)");
    }
    try (ArrowDataset ds = Arrow.open(f, ArrowOptions.builder().columns("clean").build())) {
      assertThat(ds.schema().field("clean")).isEqualTo(new TensorSpec("clean", DType.INT64, Shape.of(2), true));
      assertThat(ds.get(2).tensor("clean").getLong(1)).isEqualTo(-2);
    }
    ArrowOptions asElements = ArrowOptions.builder().fixedSizeListNulls(FixedSizeListNulls.NULLABLE_ELEMENTS).build();
    List<Map<String, Object>> expected = ArrowTestFiles.arrowRows(f, IpcFormat.FILE);
    try (ArrowDataset ds = Arrow.open(f, asElements)) {
      assertThat(ds.schema().field("fsl")).isEqualTo(new TensorSpec("fsl", DType.INT32, Shape.of(-1), true, 1));
      assertThat(ds.schema().field("clean")).isEqualTo(new TensorSpec("clean", DType.INT64, Shape.of(-1), true, 1));
      for (int i = 0; i < ROWS; i++) {
        assertThat(ArrowTestFiles.sluiceRow(ds.get(i))).as("row %d", i).isEqualTo(expected.get(i));
      }
      assertThat(ArrowTestFiles.sluiceRow(ds.get(0))).containsEntry("fsl", java.util.Arrays.asList(0L, null, 2L));
    }
  }

  @Test
  void duplicateAndEmptyNamesGetTheirPosition() throws Exception {
    List<Field> fields = List.of(nullable("x", new ArrowType.Int(32, true)), nullable("x", ArrowType.Utf8.INSTANCE),
        nullable("st", ArrowType.Struct.INSTANCE, nullable("p", new ArrowType.Int(32, true)),
            nullable("q", ArrowType.Utf8.INSTANCE)));
    Path f = write("dup", fields, root -> {
      StructVector st = (StructVector) root.getFieldVectors().get(2);
      for (int i = 0; i < ROWS; i++) {
        ((IntVector) root.getFieldVectors().get(0)).setSafe(i, i);
        ((VarCharVector) root.getFieldVectors().get(1)).setSafe(i, ("s" + i).getBytes(StandardCharsets.UTF_8));
        st.setIndexDefined(i);
        ((IntVector) st.getChild("p")).setSafe(i, -i);
        ((VarCharVector) st.getChild("q")).setSafe(i, ("q" + i).getBytes(StandardCharsets.UTF_8));
      }
    }, IpcFormat.STREAM);
    assertReadsAsArrowJava(f, IpcFormat.STREAM);
    assertThat(schemaOf(f).fields().stream().map(TensorSpec::name)).containsExactly("x", "x#1", "st.p", "st.q");
    // the same data with the struct's fields both unnamed (Arrow Java's struct vectors cannot hold that)
    byte[] s = Files.readAllBytes(f);
    List<Field> unnamed = List.of(fields.get(0), fields.get(1), nullable("st", ArrowType.Struct.INSTANCE,
        nullable("", new ArrowType.Int(32, true)), nullable("", ArrowType.Utf8.INSTANCE)));
    Path g = dir.resolve("unnamed.arrows");
    Files.write(g, IpcBytes.replaceMetadata(s, IpcBytes.messages(s).get(0),
        IpcBytes.schemaMessage(unnamed, org.apache.arrow.flatbuf.Endianness.Little)));
    List<Map<String, Object>> expected = new ArrayList<>();
    for (Map<String, Object> row : ArrowTestFiles.arrowRows(f, IpcFormat.STREAM)) {
      Map<String, Object> renamed = new java.util.LinkedHashMap<>(row);
      renamed.put("st._0", renamed.remove("st.p"));
      renamed.put("st._1", renamed.remove("st.q"));
      expected.add(renamed);
    }
    assertRows(g, expected);
  }

  // ------------------------------------------------------------------ big-endian

  /** The columns of the big-endian test, and how each of their buffers is swapped (0 none, else the value width). */
  private static final List<Field> BIG_FIELDS = List.of(
      nullable("i16", new ArrowType.Int(16, true)),
      nullable("i32", new ArrowType.Int(32, true)),
      required("i64", new ArrowType.Int(64, true)),
      nullable("f32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
      nullable("s", ArrowType.Utf8.INSTANCE),
      nullable("l", ArrowType.List.INSTANCE, nullable("item", new ArrowType.Int(32, true))),
      nullable("dec", new ArrowType.Decimal(20, 3, 128)),
      nullable("dur", new ArrowType.Duration(TimeUnit.MICROSECOND)),
      nullable("mdn", new ArrowType.Interval(IntervalUnit.MONTH_DAY_NANO)),
      nullable("fsl", new ArrowType.FixedSizeList(2), required("item", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))),
      nullable("st", ArrowType.Struct.INSTANCE, nullable("a", new ArrowType.Int(64, true))),
      new Field("dict", new FieldType(true, new ArrowType.Int(16, true),
          new DictionaryEncoding(1, false, new ArrowType.Int(16, true))), null));
  /** Per buffer of a record batch, in order: -16 the int32, int32, int64 of an interval. */
  private static final int[] BIG_UNITS = {0, 2, 0, 4, 0, 8, 0, 4, 0, 4, 0, 0, 4, 0, 4, 0, 16, 0, 8, 0, -16, 0, 0, 8,
      0, 0, 8, 0, 2};
  /** Per buffer of the dictionary batch (utf8 values). */
  private static final int[] DICT_UNITS = {0, 4, 0};

  @Test
  void bigEndianFilesAreByteSwappedOnRead() throws Exception {
    Path little = dir.resolve("little.arrows");
    try (BufferAllocator alloc = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(BIG_FIELDS), alloc);
        VarCharVector words = new VarCharVector("dict", alloc);
        FileChannel ch = FileChannel.open(little, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      DictionaryProvider.MapDictionaryProvider provider = new DictionaryProvider.MapDictionaryProvider();
      words.allocateNew();
      for (int k = 0; k < 4; k++) {
        words.setSafe(k, ("word" + k).getBytes(StandardCharsets.UTF_8));
      }
      words.setValueCount(4);
      provider.put(new Dictionary(words, new DictionaryEncoding(1, false, new ArrowType.Int(16, true))));
      try (ArrowStreamWriter w = new ArrowStreamWriter(root, provider, ch)) {
        w.start();
        for (int batch = 0; batch < 2; batch++) {
          root.allocateNew();
          for (int i = 0; i < ROWS; i++) {
            fillBig(root, i, batch * ROWS + i);
          }
          root.setRowCount(ROWS);
          w.writeBatch();
        }
        w.end();
      }
    }
    byte[] s = Files.readAllBytes(little);
    byte[] swapped = s.clone();
    ByteBuffer b = ByteBuffer.wrap(swapped);
    org.apache.arrow.flatbuf.Schema fbSchema = null;
    for (IpcBytes.Msg m : IpcBytes.messages(s)) {
      switch (m.message().headerType()) {
        case MessageHeader.Schema -> fbSchema = (org.apache.arrow.flatbuf.Schema) m.message()
            .header(new org.apache.arrow.flatbuf.Schema());
        case MessageHeader.RecordBatch -> swapBody(b, m.bodyStart(), m.recordBatch(), BIG_UNITS);
        case MessageHeader.DictionaryBatch -> swapBody(b, m.bodyStart(),
            ((DictionaryBatch) m.message().header(new DictionaryBatch())).data(), DICT_UNITS);
        default -> { }
      }
    }
    org.apache.arrow.vector.types.pojo.Schema pojo = org.apache.arrow.vector.types.pojo.Schema.convertSchema(fbSchema);
    IpcBytes.Msg schemaMsg = IpcBytes.messages(swapped).get(0);
    Path big = dir.resolve("big.arrows");
    Files.write(big, IpcBytes.replaceMetadata(swapped, schemaMsg, IpcBytes.schemaMessage(pojo.getFields(), IpcBytes.big())));

    List<Map<String, Object>> expected = ArrowTestFiles.arrowRows(little, IpcFormat.STREAM);
    assertRows(big, expected);
    try (ArrowDataset l = Arrow.open(little); ArrowDataset g = Arrow.open(big)) {
      assertThat(Checksums.sha256(g)).isEqualTo(Checksums.sha256(l));
    }
    try (ArrowStream in = Arrow.openStream(Files.newInputStream(big), "big")) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (Batch batch : in.batches().collectList().block()) {
        try (batch) {
          for (int r = 0; r < batch.size(); r++) {
            rows.add(ArrowTestFiles.sluiceRow(batch.copyRow(r)));
          }
        }
      }
      assertThat(rows).isEqualTo(expected);
    }
  }

  private static void fillBig(VectorSchemaRoot root, int i, int r) {
    List<FieldVector> v = root.getFieldVectors();
    boolean nul = r % 5 == 3;
    if (nul) {
      for (FieldVector x : v) {
        if (x.getField().isNullable()) {
          x.setNull(i);
        }
      }
    }
    ((BigIntVector) v.get(2)).setSafe(i, 0x0102030405060708L * (r + 1));
    if (nul) {
      return;
    }
    ((SmallIntVector) v.get(0)).setSafe(i, (short) (0x0102 * (r + 1)));
    ((IntVector) v.get(1)).setSafe(i, -0x01020304 * (r + 1));
    ((Float4Vector) v.get(3)).setSafe(i, r * 1.25f - 7);
    ((VarCharVector) v.get(4)).setSafe(i, ("row " + r).getBytes(StandardCharsets.UTF_8));
    ListVector l = (ListVector) v.get(5);
    l.startNewValue(i);
    int start = l.getOffsetBuffer().getInt(i * 4L);
    for (int j = 0; j < r % 3; j++) {
      ((IntVector) l.getDataVector()).setSafe(start + j, r * 1000 + j);
    }
    l.endValue(i, r % 3);
    ((DecimalVector) v.get(6)).setSafe(i, java.math.BigDecimal.valueOf(r * 123_456_789L - 5, 3));
    ((DurationVector) v.get(7)).setSafe(i, -r * 1_000_003L);
    ((IntervalMonthDayNanoVector) v.get(8)).setSafe(i, r, -r, r * 1_000_000_007L);
    FixedSizeListVector fsl = (FixedSizeListVector) v.get(9);
    fsl.setNotNull(i);
    ((Float8Vector) fsl.getDataVector()).setSafe(i * 2, r / 3.0);
    ((Float8Vector) fsl.getDataVector()).setSafe(i * 2 + 1, -r);
    StructVector st = (StructVector) v.get(10);
    st.setIndexDefined(i);
    ((BigIntVector) st.getChild("a")).setSafe(i, r * 0x10001L);
    ((SmallIntVector) v.get(11)).setSafe(i, (short) (r % 4));
  }

  /** Reverses the bytes of every value of each buffer of {@code rb} (in the body at {@code body}) as {@code units} says. */
  private static void swapBody(ByteBuffer b, int body, RecordBatch rb, int[] units) {
    assertThat(rb.buffersLength()).isEqualTo(units.length);
    for (int k = 0; k < units.length; k++) {
      int unit = units[k];
      int at = body + (int) rb.buffers(k).offset();
      int len = (int) rb.buffers(k).length();
      if (unit == -16) {
        for (int p = at; p + 16 <= at + len; p += 16) {
          reverse(b, p, 4);
          reverse(b, p + 4, 4);
          reverse(b, p + 8, 8);
        }
      } else if (unit > 1) {
        for (int p = at; p + unit <= at + len; p += unit) {
          reverse(b, p, unit);
        }
      }
    }
  }

  private static void reverse(ByteBuffer b, int at, int n) {
    for (int x = at, y = at + n - 1; x < y; x++, y--) {
      byte t = b.get(x);
      b.put(x, b.get(y));
      b.put(y, t);
    }
  }

  static {
    assertThat(ByteOrder.nativeOrder()).isEqualTo(ByteOrder.LITTLE_ENDIAN);
  }
}
