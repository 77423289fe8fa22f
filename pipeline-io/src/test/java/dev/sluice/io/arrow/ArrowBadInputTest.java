package dev.sluice.io.arrow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.core.Batch;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.IntervalDayVector;
import org.apache.arrow.vector.NullVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.compression.CompressionUtil.CodecType;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.IntervalUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Exceptions;

/** One test per kind of bad Arrow input: each is a typed error naming the file and, where there is one, the record batch. */
@ExtendWith(NoLeaks.class)
class ArrowBadInputTest {
  @TempDir
  Path dir;

  private Path rich(IpcFormat format, CodecType codec) throws Exception {
    Path f = dir.resolve("rich-" + format + "-" + codec + ".arrow");
    ArrowTestFiles.writeRich(f, format, codec, new int[] {4, 20}, 1);
    return f;
  }

  private static void readAll(ArrowDataset ds) {
    for (long i = 0; i < ds.size(); i++) {
      ds.get(i);
    }
  }

  @Test
  void badMagicIsNotArrow() throws Exception {
    Path f = dir.resolve("x.arrow");
    Files.writeString(f, "PK\u0003\u0004 a zip, not Arrow");
    assertThatThrownBy(() -> Arrow.open(f)).isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining(f.toString()).hasMessageContaining("not an Arrow IPC file or stream");
    Path feather = dir.resolve("v1.feather");
    Files.write(feather, "FEA1\0\0\0\0feather".getBytes(StandardCharsets.US_ASCII));
    assertThatThrownBy(() -> Arrow.open(feather)).isInstanceOf(UnsupportedFormatException.class)
        .hasMessageContaining("Feather version 1");
    assertThatThrownBy(() -> Arrow.open(dir)).isInstanceOf(DatasetIOException.class).hasMessageContaining("directory");
  }

  @Test
  void truncatedFilesSayTruncated() throws Exception {
    Path good = rich(IpcFormat.FILE, CodecType.NO_COMPRESSION);
    byte[] bytes = Files.readAllBytes(good);
    for (int keep : new int[] {bytes.length - 1, bytes.length - 200, bytes.length / 2, 20}) {
      Path f = dir.resolve("cut-" + keep + ".arrow");
      Files.write(f, Arrays.copyOf(bytes, keep));
      assertThatThrownBy(() -> Arrow.open(f)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining(f.toString()).hasMessageContaining("truncated");
    }
    Path stream = rich(IpcFormat.STREAM, CodecType.NO_COMPRESSION);
    byte[] s = Files.readAllBytes(stream);
    IpcBytes.Msg last = IpcBytes.recordBatches(s).get(1);
    Path f = dir.resolve("cut.arrows");
    Files.write(f, Arrays.copyOf(s, last.bodyStart() + 10));
    assertThatThrownBy(() -> Arrow.open(f)).isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining("message at byte " + last.start())
        .hasMessageContaining("declares a body of " + last.bodyLength() + " bytes but 10 bytes follow: truncated");
    assertThatThrownBy(() -> {
      try (ArrowStream in = Arrow.openStream(new ByteArrayInputStream(Arrays.copyOf(s, last.bodyStart() + 10)), "stdin")) {
        in.batches().doOnNext(Batch::close).blockLast();
      }
    }).isInstanceOf(DatasetFormatException.class).hasMessageContaining("stdin, byte " + last.start())
        .hasMessageContaining("truncated: the input ends inside a message body");
  }

  @Test
  void badMessageLengthsAreNamed() throws Exception {
    byte[] s = Files.readAllBytes(rich(IpcFormat.STREAM, CodecType.NO_COMPRESSION));
    IpcBytes.Msg rb = IpcBytes.recordBatches(s).get(0);
    byte[] bad = s.clone();
    ByteBuffer.wrap(bad).order(ByteOrder.LITTLE_ENDIAN).putInt(rb.start() + 4, 1 << 30);
    Path f = dir.resolve("len.arrows");
    Files.write(f, bad);
    assertThatThrownBy(() -> Arrow.open(f)).isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining(f.toString()).hasMessageContaining("message at byte " + rb.start())
        .hasMessageContaining("declares " + (1 << 30) + " bytes of metadata");
    // a footer length that points before the start of the file
    byte[] file = Files.readAllBytes(rich(IpcFormat.FILE, CodecType.NO_COMPRESSION));
    ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).putInt(file.length - 10, file.length);
    Path g = dir.resolve("footer.arrow");
    Files.write(g, file);
    assertThatThrownBy(() -> Arrow.open(g)).isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining("footer length " + file.length + " does not fit");
  }

  @Test
  void bufferOffsetsOutsideTheBodyAreRefusedBeforeAnyRead() throws Exception {
    byte[] s = Files.readAllBytes(rich(IpcFormat.STREAM, CodecType.NO_COMPRESSION));
    IpcBytes.Msg rb = IpcBytes.recordBatches(s).get(1);
    byte[] meta = IpcBytes.recordBatchWith(rb, b -> {
      b[5][0] = rb.bodyLength() + 64; // a values buffer past the body
      return b;
    });
    Path f = dir.resolve("offsets.arrows");
    Files.write(f, IpcBytes.replaceMetadata(s, rb, meta));
    try (ArrowDataset ds = Arrow.open(f)) {
      ds.get(0); // record batch 0 is intact
      assertThatThrownBy(() -> ds.get(4)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining(f.toString()).hasMessageContaining("record batch 1")
          .hasMessageContaining("buffer 5 at [" + (rb.bodyLength() + 64))
          .hasMessageContaining("lies outside the message body of " + rb.bodyLength() + " bytes");
      assertThatThrownBy(() -> ds.readBatches(ds.splits().get(1), 0, 5, 5).blockLast())
          .isInstanceOf(DatasetFormatException.class).hasMessageContaining("record batch 1");
    }
  }

  @Test
  void lengthsThatOverflowAreFormatErrorsNamingTheBatch() throws Exception {
    long[] huge = {Long.MAX_VALUE, Long.MAX_VALUE - 7, 1L << 62, 1L << 61, (1L << 31) + 1};
    for (CodecType codec : new CodecType[] {CodecType.NO_COMPRESSION, CodecType.ZSTD}) {
      byte[] s = Files.readAllBytes(rich(IpcFormat.STREAM, codec));
      IpcBytes.Msg rb = IpcBytes.recordBatches(s).get(1);
      int nodes = rb.recordBatch().nodesLength();
      int buffers = rb.recordBatch().buffersLength();
      int k = 0;
      for (long value : huge) {
        for (int i = 0; i < Math.max(nodes, buffers); i++, k++) {
          int target = i;
          if (i < buffers) {
            byte[] meta = IpcBytes.recordBatchWith(rb, b -> {
              b[target][1] = value; // a buffer length
              return b;
            });
            Path f = dir.resolve("buffer-" + codec + "-" + k + ".arrows");
            Files.write(f, IpcBytes.replaceMetadata(s, rb, meta));
            readsOrFailsNamingTheBatch(f);
          }
          if (i < nodes) {
            byte[] meta = IpcBytes.recordBatchWith(rb, b -> b, n -> {
              n[target][0] = value; // an array's length
              return n;
            });
            Path f = dir.resolve("node-" + codec + "-" + k + ".arrows");
            Files.write(f, IpcBytes.replaceMetadata(s, rb, meta));
            readsOrFailsNamingTheBatch(f);
          }
        }
      }
    }
    byte[] s = Files.readAllBytes(rich(IpcFormat.STREAM, CodecType.NO_COMPRESSION));
    IpcBytes.Msg rb = IpcBytes.recordBatches(s).get(1);
    byte[] meta = IpcBytes.recordBatchWith(rb, b -> {
      b[5][0] = 8;
      b[5][1] = Long.MAX_VALUE;
      return b;
    });
    Path f = dir.resolve("max.arrows");
    Files.write(f, IpcBytes.replaceMetadata(s, rb, meta));
    try (ArrowDataset ds = Arrow.open(f)) {
      assertThatThrownBy(() -> ds.get(4)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining(f.toString()).hasMessageContaining("record batch 1")
          .hasMessageContaining("buffer 5 at [8, 9223372036854775815) lies outside the message body");
    }
  }

  /** Every row of {@code f} either reads or fails with a format error naming the file and record batch 1. */
  private static void readsOrFailsNamingTheBatch(Path f) {
    try (ArrowDataset ds = Arrow.open(f)) {
      for (long i = 0; i < ds.size(); i++) {
        long row = i;
        try {
          ds.get(row).names();
        } catch (dev.sluice.core.DatasetException e) {
          assertThat(e.getMessage()).as(f + " row " + row).contains(f.toString()).contains("record batch 1");
        }
      }
      for (dev.sluice.core.Split split : ds.splits()) {
        try {
          ds.readBatches(split, 0, split.rowCount(), 8).doOnNext(Batch::close).blockLast();
        } catch (dev.sluice.core.DatasetException e) {
          assertThat(e.getMessage()).as(f + " " + split).contains(f.toString()).contains("record batch 1");
        }
      }
    } catch (dev.sluice.core.DatasetException e) {
      assertThat(e.getMessage()).as(f.toString()).contains(f.toString());
    }
  }

  @Test
  void compressedBuffersWithAWrongLengthAreNamed() throws Exception {
    for (ArrowCompression codec : new ArrowCompression[] {ArrowCompression.LZ4_FRAME, ArrowCompression.ZSTD}) {
      Path good = dir.resolve("zeros-" + codec + ".arrows");
      dev.sluice.core.Tensor zeros = dev.sluice.core.Tensor.wrap(dev.sluice.core.DType.FLOAT32,
          dev.sluice.core.Shape.of(1000, 4), ByteBuffer.allocate(16_000));
      Arrow.write(dev.sluice.core.Datasets.fromTensors("z", zeros), good,
          ArrowWriteOptions.builder().format(IpcFormat.STREAM).compression(codec).build());
      byte[] s = Files.readAllBytes(good);
      IpcBytes.Msg rb = IpcBytes.recordBatches(s).get(0);
      long[] where = IpcBytes.buffer(rb, 2); // the float values under the fixed-size list
      assertThat(ByteBuffer.wrap(s).order(ByteOrder.LITTLE_ENDIAN).getLong((int) where[0])).isEqualTo(16_000);
      for (long declared : new long[] {16_008, 15_992}) {
        byte[] bad = s.clone();
        ByteBuffer.wrap(bad).order(ByteOrder.LITTLE_ENDIAN).putLong((int) where[0], declared);
        Path f = dir.resolve("codec-" + codec + "-" + declared + ".arrows");
        Files.write(f, bad);
        try (ArrowDataset ds = Arrow.open(f)) {
          assertThatThrownBy(() -> readAll(ds)).isInstanceOf(DatasetFormatException.class)
              .hasMessageContaining(f + ", record batch 0, column 'z'").hasMessageContaining("values of array 'item'")
              .hasMessageContaining("declares " + declared + " uncompressed bytes but " + (codec == ArrowCompression.ZSTD
                  ? "its ZSTD frame holds 16000" : declared > 16_000 ? "decompresses to 16000" : "decompresses to more"));
        }
      }
    }
  }

  @Test
  void unsupportedTypesAreRefusedByNameAndCanBeProjectedAway() throws Exception {
    Path f = dir.resolve("types.arrow");
    List<Field> fields = List.of(Field.nullable("ok", new ArrowType.Int(32, true)),
        new Field("e", FieldType.nullable(ArrowType.Struct.INSTANCE), List.of()),
        Field.nullable("i", new ArrowType.Int(32, true)));
    try (BufferAllocator alloc = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(fields), alloc);
        FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
      root.allocateNew();
      ((IntVector) root.getVector("ok")).setSafe(0, 7);
      ((IntVector) root.getVector("ok")).setSafe(1, 8);
      ((StructVector) root.getVector("e")).setIndexDefined(0);
      ((StructVector) root.getVector("e")).setIndexDefined(1);
      ((IntVector) root.getVector("i")).setSafe(1, 9);
      root.setRowCount(2);
      w.start();
      w.writeBatch();
      w.end();
    }
    assertThatThrownBy(() -> Arrow.open(f)).isInstanceOf(UnsupportedFormatException.class)
        .hasMessageContaining(f.toString()).hasMessageContaining("column 'e'")
        .hasMessageContaining("a struct without fields holds no values").hasMessageContaining("--columns");
    assertThatThrownBy(() -> Arrow.open(f, ArrowOptions.builder().columns("ok", "e").build()))
        .isInstanceOf(UnsupportedFormatException.class).hasMessageContaining("column 'e'");
    assertThatThrownBy(() -> Arrow.open(f, ArrowOptions.builder().columns("nope").build()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no column 'nope'");
    try (ArrowDataset ds = Arrow.open(f, ArrowOptions.builder().columns("ok", "i").build())) {
      assertThat(ds.get(1).tensor("ok").getInt(0)).isEqualTo(8);
      assertThat(ds.get(1).tensor("i").getInt(0)).isEqualTo(9);
    }
  }

  @Test
  void dictionaryIndicesOutOfRangeAreNamed() throws Exception {
    Path f = dir.resolve("dict.arrow");
    DictionaryEncoding enc = new DictionaryEncoding(1, false, new ArrowType.Int(32, true));
    Field d = new Field("d", new FieldType(true, new ArrowType.Int(32, true), enc), null);
    try (BufferAllocator alloc = new RootAllocator();
        VarCharVector words = new VarCharVector("d", alloc);
        VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(List.of(d)), alloc);
        FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      words.allocateNew();
      for (int i = 0; i < 3; i++) {
        words.setSafe(i, ("w" + i).getBytes(StandardCharsets.UTF_8));
      }
      words.setValueCount(3);
      DictionaryProvider.MapDictionaryProvider p = new DictionaryProvider.MapDictionaryProvider();
      p.put(new Dictionary(words, enc));
      try (ArrowFileWriter w = new ArrowFileWriter(root, p, ch)) {
        root.allocateNew();
        ((IntVector) root.getVector("d")).setSafe(0, 2);
        ((IntVector) root.getVector("d")).setSafe(1, 5);
        root.setRowCount(2);
        w.start();
        w.writeBatch();
        w.end();
      }
    }
    try (ArrowDataset ds = Arrow.open(f)) {
      assertThatThrownBy(() -> ds.get(0)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining(f + ", record batch 0, column 'd'")
          .hasMessageContaining("item 1 has dictionary index 5 but dictionary 1 holds 3 values");
    }
  }

  @Test
  void decreasingOffsetsAndNullsInRequiredColumnsAreNamed() throws Exception {
    Path f = dir.resolve("offsets.arrow");
    List<Field> fields = List.of(new Field("l", FieldType.nullable(ArrowType.List.INSTANCE),
        List.of(Field.nullable("item", new ArrowType.Int(32, true)))), Field.notNullable("r", new ArrowType.Int(32, true)));
    try (BufferAllocator alloc = new RootAllocator();
        VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(fields), alloc);
        FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
      root.allocateNew();
      ListVector l = (ListVector) root.getVector("l");
      IntVector items = (IntVector) l.getDataVector();
      for (int i = 0; i < 3; i++) {
        int start = l.startNewValue(i);
        items.setSafe(start, i);
        items.setSafe(start + 1, i);
        l.endValue(i, 2);
      }
      ((IntVector) root.getVector("r")).setSafe(0, 1);
      ((IntVector) root.getVector("r")).setNull(1); // a null in a column declared not nullable
      ((IntVector) root.getVector("r")).setSafe(2, 1);
      root.setRowCount(3);
      l.getOffsetBuffer().setInt(2 * 4, 1); // offsets 0, 2, 1, 6: they decrease
      w.start();
      w.writeBatch();
      w.end();
    }
    try (ArrowDataset ds = Arrow.open(f, ArrowOptions.builder().columns("l").build())) {
      assertThatThrownBy(() -> ds.get(0)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining("record batch 0, column 'l'").hasMessageContaining("list 1 of array 'l' spans [2, 1)")
          .hasMessageContaining("offsets decrease");
    }
    try (ArrowDataset ds = Arrow.open(f, ArrowOptions.builder().columns("r").build())) {
      assertThatThrownBy(() -> ds.get(0)).isInstanceOf(DatasetFormatException.class)
          .hasMessageContaining("column 'r'").hasMessageContaining("row 1 is null but the schema declares the column"
              + " not nullable");
    }
  }

  @Test
  void aFileTruncatedAfterOpenIsADataErrorNotACrash() throws Exception {
    Path f = dir.resolve("big.arrow");
    Arrow.write(dev.sluice.core.Datasets.synthetic(20_000, 16, 3), f,
        ArrowWriteOptions.builder().batchRows(4096).build());
    try (ArrowDataset ds = Arrow.open(f)) {
      for (int i = 0; i < 1000; i++) {
        assertThat(ds.get(i).tensor("label").getLong(0)).isEqualTo(i);
      }
      try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
        ch.truncate(4096);
      }
      for (long row : new long[] {15_000, 19_999, 500}) {
        assertThatThrownBy(() -> ds.get(row).tensor("x").getFloat(0)).isInstanceOf(DatasetFormatException.class)
            .hasMessageContaining(f + " changed while mapped");
      }
      try (BatchBuilder b = BatchBuilder.create(ds.schema(), 2, MemoryManager.shared().pool("test"))) {
        assertThatThrownBy(() -> ds.gather(new long[] {12_000, 18_000}, 0, 2, b))
            .isInstanceOf(DatasetFormatException.class).hasMessageContaining("changed while mapped");
      }
      assertThatThrownBy(() -> ds.readBatches(ds.splits().get(3), 0, 100, 10).doOnNext(Batch::close).blockLast())
          .satisfies(t -> assertThat(Exceptions.unwrap(t)).isInstanceOf(DatasetFormatException.class)
              .hasMessageContaining("changed while mapped"));
    }
  }

}
