package dev.sluice.io.directory;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.npy.internal.NpyWriter;
import dev.sluice.io.shards.ShardSet;
import dev.sluice.io.shards.Shards;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** A directory of one file per sample: raw bytes or one {@code .npy} array per file. */
@ExtendWith(NoLeaks.class)
class DirectoryDatasetTest {
  @TempDir Path dir;

  /** An {@code .npy} file: {@code descr}, C or Fortran order, {@code data} as given. */
  static Path npy(Path file, String descr, boolean fortran, long[] shape, byte[] data) throws IOException {
    byte[] header = NpyWriter.header(descr, shape, 0);
    if (fortran) {
      String text = new String(header, StandardCharsets.ISO_8859_1).replace("'fortran_order': False", "'fortran_order': True ");
      header = text.getBytes(StandardCharsets.ISO_8859_1);
    }
    byte[] all = new byte[header.length + data.length];
    System.arraycopy(header, 0, all, 0, header.length);
    System.arraycopy(data, 0, all, header.length, data.length);
    return Files.write(file, all);
  }

  static byte[] shorts(ByteOrder order, int... values) {
    ByteBuffer b = ByteBuffer.allocate(values.length * 2).order(order);
    for (int v : values) {
      b.putShort((short) v);
    }
    return b.array();
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return a;
  }

  @Test
  void rawFilesAreOneBytesFieldInNameOrder() throws Exception {
    Files.writeString(dir.resolve("b.txt"), "second");
    Files.write(dir.resolve("a.bin"), new byte[] {0, 1, 2, (byte) 255});
    Files.write(dir.resolve("c"), new byte[0]);
    Files.writeString(dir.resolve(".hidden"), "skipped");
    Files.createDirectory(dir.resolve("sub"));
    Files.writeString(dir.resolve("sub").resolve("z"), "not entered");
    try (DirectoryDataset d = Directory.open(dir)) {
      assertEquals(SampleFiles.RAW, d.content());
      assertEquals(Schema.of(new TensorSpec("data", DType.BYTES, Shape.scalar())), d.schema());
      assertEquals(List.of("a.bin", "b.txt", "c"), d.files().stream().map(p -> p.getFileName().toString()).toList());
      assertArrayEquals(new byte[] {0, 1, 2, (byte) 255}, bytes(d.get(0).tensor("data").data()));
      assertEquals("second", d.get(1).tensor("data").getString());
      assertEquals(0, d.get(2).tensor("data").byteSize());
      assertEquals(2, d.get(2).index());
      try (BatchBuilder b = BatchBuilder.create(d.schema(), 2, MemoryManager.shared().pool("test.dir"))) {
        d.gather(new long[] {1, 0}, 0, 2, b);
        try (Batch batch = b.build()) {
          assertEquals("second", batch.column("data").row(0).getString());
          assertEquals(4, batch.column("data").length(1));
        }
      }
      Path out = dir.resolveSibling(dir.getFileName() + "-shards");
      Shards.write(d, out, WriteOptions.defaults().withNumShards(2).withWorkers(2));
      try (ShardSet s = Shards.open(out)) {
        assertEquals(Checksums.sha256(d), Checksums.sha256(s));
      }
      assertThrows(IndexOutOfBoundsException.class, () -> d.get(3));
    }
  }

  @Test
  void npyFilesAreOneArrayEachWithAVariableFirstDimensionWhereTheyDiffer() throws Exception {
    npy(dir.resolve("s0.npy"), "<i2", false, new long[] {3, 2}, shorts(ByteOrder.LITTLE_ENDIAN, 1, 2, 3, 4, 5, 6));
    npy(dir.resolve("s1.npy"), ">i2", false, new long[] {1, 2}, shorts(ByteOrder.BIG_ENDIAN, 7, 8));
    // Fortran order [[1, 2, 3], [4, 5, 6]] stored column by column
    npy(dir.resolve("s2.npy"), "<i2", true, new long[] {2, 2}, shorts(ByteOrder.LITTLE_ENDIAN, 9, 11, 10, 12));
    DirectoryDataset d = Directory.open(dir);
    try (d) {
      assertEquals(SampleFiles.NPY, d.content());
      assertEquals(Schema.of(new TensorSpec("data", DType.INT16, Shape.of(-1, 2))), d.schema());
      assertEquals(Shape.of(3, 2), d.get(0).tensor("data").shape());
      assertEquals(6, d.get(0).tensor("data").getShort(5));
      assertEquals(8, d.get(1).tensor("data").getShort(1), "big-endian delivered little-endian");
      assertArrayEquals(shorts(ByteOrder.LITTLE_ENDIAN, 9, 10, 11, 12), bytes(d.get(2).tensor("data").data()),
          "Fortran order delivered in C order");
      Path out = dir.resolveSibling(dir.getFileName() + "-shards");
      Formats.named("shards").write(Formats.named("directory").open(dir), out, WriteOptions.defaults().withNumShards(2));
      try (ShardSet s = Shards.open(out)) {
        assertEquals(Checksums.sha256(d), Checksums.sha256(s));
        assertEquals(Shape.of(1, 2), s.get(1).tensor("data").shape());
      }
    }
    DatasetClosedException e = assertThrows(DatasetClosedException.class, () -> d.get(0));
    assertTrue(e.getMessage().startsWith("already closed: "), e.getMessage());
  }

  @Test
  void equalNpyShapesGiveAFixedField() throws Exception {
    npy(dir.resolve("a.npy"), "<f4", false, new long[] {4}, new byte[16]);
    npy(dir.resolve("b.npy"), "<f4", false, new long[] {4}, new byte[16]);
    npy(dir.resolve("c.npy"), "<f4", false, new long[0], new byte[4]);
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> Directory.open(dir));
    assertTrue(e.getMessage().contains("c.npy") && e.getMessage().contains("a.npy"), e.getMessage());
    Files.delete(dir.resolve("c.npy"));
    try (DirectoryDataset d = Directory.open(dir)) {
      assertEquals(Schema.of(new TensorSpec("data", DType.FLOAT32, Shape.of(4))), d.schema());
    }
    try (DirectoryDataset raw = Directory.open(dir, SampleFiles.RAW)) {
      assertEquals(DType.BYTES, raw.schema().field(0).dtype());
      assertEquals(16 + NpyWriter.header("<f4", new long[] {4}, 0).length, raw.get(0).tensor("data").byteSize());
    }
  }

  @Test
  void badDirectories() throws Exception {
    assertThrows(DatasetIOException.class, () -> Directory.open(dir.resolve("missing")));
    DatasetFormatException empty = assertThrows(DatasetFormatException.class, () -> Directory.open(dir));
    assertTrue(empty.getMessage().contains("holds no files"), empty.getMessage());
    npy(dir.resolve("a.npy"), "<i2", false, new long[] {2}, new byte[4]);
    npy(dir.resolve("b.npy"), "<i4", false, new long[] {2}, new byte[8]);
    DatasetFormatException dtype = assertThrows(DatasetFormatException.class, () -> Directory.open(dir));
    assertTrue(dtype.getMessage().contains("b.npy") && dtype.getMessage().contains("int32[2] but a.npy holds int16[2]"),
        dtype.getMessage());
    Files.delete(dir.resolve("b.npy"));
    Files.write(dir.resolve("s.npy"), NpyWriter.header("<i2", new long[] {2}, 0)); // cut: no data
    DatasetFormatException cut = assertThrows(DatasetFormatException.class, () -> Directory.open(dir).close());
    assertTrue(cut.getMessage().contains("s.npy"), cut.getMessage());
    Files.delete(dir.resolve("s.npy"));
    String structured = "{'descr': [('a', '<i2'), ('b', '<i2')], 'fortran_order': False, 'shape': (1,), }";
    Files.write(dir.resolve("t.npy"), structuredNpy(structured));
    UnsupportedFormatException st = assertThrows(UnsupportedFormatException.class, () -> Directory.open(dir));
    assertTrue(st.getMessage().contains("t.npy") && st.getMessage().contains("structured"), st.getMessage());
    Files.delete(dir.resolve("t.npy"));
    try (DirectoryDataset d = Directory.open(dir, SampleFiles.RAW)) {
      Files.delete(dir.resolve("a.npy"));
      DatasetIOException gone = assertThrows(DatasetIOException.class, () -> d.get(0));
      assertTrue(gone.getMessage().contains("a.npy") && gone.getMessage().contains("no such file"), gone.getMessage());
    }
  }

  private static byte[] structuredNpy(String dict) {
    int total = ((10 + dict.length() + 1 + 63) / 64) * 64;
    String padded = dict + " ".repeat(total - 10 - dict.length() - 1) + "\n";
    ByteBuffer b = ByteBuffer.allocate(total + 4).order(ByteOrder.LITTLE_ENDIAN);
    b.put((byte) 0x93).put("NUMPY".getBytes(StandardCharsets.US_ASCII)).put((byte) 1).put((byte) 0)
        .putShort((short) padded.length()).put(padded.getBytes(StandardCharsets.ISO_8859_1));
    return b.array();
  }
}
