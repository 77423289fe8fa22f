package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.DType;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Formats;
import dev.sluice.io.WriteOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.schema.MessageType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The registry entry: probe, open, and the writer behind {@code sluice generate --format parquet}. */
@ExtendWith(NoLeaks.class)
class ParquetFormatTest {
  @TempDir
  Path dir;

  @Test
  void writingTellsTheProgressListenerAsRowsGoOutNotOnlyAtTheEnd() {
    Path f = dir.resolve("progress.parquet");
    List<Long> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
    new ParquetFormat().write(Datasets.synthetic(10_000, 4, 1), f, WriteOptions.defaults().withProgress(calls::add));
    assertTrue(calls.size() >= 9, "calls: " + calls);
    assertEquals(10_000L, calls.stream().mapToLong(Long::longValue).sum());
  }

  @Test
  void writesXAsAPyarrowStyleListWithADeclaredShapeAndReadsItBack() throws Exception {
    Path f = dir.resolve("gen.parquet");
    var source = Datasets.synthetic(1000, 8, 3);
    new ParquetFormat().write(source, f, WriteOptions.defaults());
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f))) {
      MessageType s = r.getFileMetaData().getSchema();
      assertEquals(List.of("x", "list", "element"), List.of(s.getColumns().get(0).getPath()));
      assertTrue(s.getType("x").getLogicalTypeAnnotation()
          instanceof org.apache.parquet.schema.LogicalTypeAnnotation.ListLogicalTypeAnnotation);
      assertEquals("[8]", r.getFileMetaData().getKeyValueMetaData().get("sluice.shape.x"));
      assertEquals(CompressionCodecName.SNAPPY, r.getRowGroups().get(0).getColumns().get(0).getCodec());
    }
    assertTrue(Formats.detect(f) instanceof ParquetFormat);
    var ds = Formats.open(f);
    assertInstanceOf(ParquetDataset.class, ds);
    ParquetDataset p = (ParquetDataset) ds;
    assertEquals(new TensorSpec("x", DType.FLOAT32, Shape.of(8)), p.schema().field("x"));
    assertEquals(new TensorSpec("label", DType.INT64, Shape.scalar()), p.schema().field("label"));
    List<Example> want = source.flux().collectList().block();
    List<Example> got = p.flux().collectList().block();
    assertEquals(want.size(), got.size());
    for (int i = 0; i < want.size(); i++) {
      assertEquals(want.get(i).index(), got.get(i).index());
      assertArrayEquals(want.get(i).tensor("x").toFloatArray(), got.get(i).tensor("x").toFloatArray());
      assertEquals(want.get(i).tensor("label").getLong(0), got.get(i).tensor("label").getLong(0));
    }
    // the columnar path gives the same floats as one contiguous tensor
    List<Batch> batches = p.batches(300).collectList().block();
    try {
      assertEquals(List.of(300, 300, 300, 100), batches.stream().map(Batch::size).toList());
      float[] x = batches.get(1).column("x").values().toFloatArray();
      assertArrayEquals(want.get(300).tensor("x").toFloatArray(), java.util.Arrays.copyOfRange(x, 0, 8));
    } finally {
      batches.forEach(Batch::close);
    }
  }

  @Test
  void rowGroupSizeAndCodecAreHonoured() throws Exception {
    Path f = dir.resolve("small-groups.parquet");
    new ParquetFormat().write(Datasets.synthetic(20_000, 16, 1), f,
        WriteOptions.defaults().withRowGroupBytes(256 * 1024).withCodec("zstd"));
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f))) {
      List<BlockMetaData> groups = r.getRowGroups();
      assertTrue(groups.size() >= 4, "expected several row groups but got " + groups.size());
      assertEquals(CompressionCodecName.ZSTD, groups.get(0).getColumns().get(0).getCodec());
    }
    ParquetDataset ds = Parquet.open(f, ParquetOptions.builder().decodeParallelism(2).build());
    assertEquals(20_000, ds.rowCount());
    long sum = ds.batches(1000).map(b -> {
      try (b) {
        long s = 0;
        for (int i = 0; i < b.size(); i++) {
          s += b.column("label").values().getLong(i);
        }
        return s;
      }
    }).reduce(0L, Long::sum).block();
    assertEquals(20_000L * 19_999 / 2, sum);
    assertThrows(IllegalArgumentException.class, () -> new ParquetFormat().write(Datasets.synthetic(1, 1, 1),
        dir.resolve("bad.parquet"), WriteOptions.defaults().withCodec("lzo")));
  }

  @Test
  void probeRecognizesParquetFilesAndDirectoriesOnly() throws Exception {
    Path f = dir.resolve("a.parquet");
    new ParquetFormat().write(Datasets.synthetic(10, 2, 1), f, WriteOptions.defaults());
    ParquetFormat fmt = new ParquetFormat();
    assertTrue(fmt.probe(f));
    assertTrue(fmt.probe(dir));
    Path other = dir.resolve("b.txt");
    Files.writeString(other, "a text file, not parquet");
    assertFalse(fmt.probe(other));
    assertFalse(fmt.probe(dir));
    // The leading magic claims a file, so a damaged one is refused by open naming the damage,
    // not reported as an unknown format.
    Path damaged = dir.resolve("c.bin");
    Files.writeString(damaged, "PAR1 but the footer is missing");
    assertTrue(fmt.probe(damaged));
    dev.sluice.core.DatasetFormatException e =
        org.junit.jupiter.api.Assertions.assertThrows(dev.sluice.core.DatasetFormatException.class, () -> fmt.open(damaged));
    assertTrue(e.getMessage().contains(damaged.toString()), e.getMessage());
  }
}
