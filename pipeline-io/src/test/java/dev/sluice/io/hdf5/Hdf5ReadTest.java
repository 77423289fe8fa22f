package dev.sluice.io.hdf5;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.core.Batch;
import dev.sluice.core.BatchSplitDataset;
import dev.sluice.core.DType;
import dev.sluice.core.DatasetClosedException;
import dev.sluice.core.Example;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.SplitDataset;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.spi.BatchBuilder;
import dev.sluice.core.spi.BufferPool;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files written by h5py and netCDF4: every numeric dtype in both byte orders, booleans, fixed- and
 * variable-length strings, contiguous and chunked (gzip, shuffle, LZF, fletcher32, chunks split
 * along the second dimension), a user block, the course's {@code x}/{@code y}/{@code edge} layout
 * and a netCDF-4 file. Values are compared bit-exactly through the canonical-bytes SHA-256 that
 * NumPy computes on its side.
 */
@ExtendWith(NoLeaks.class)
class Hdf5ReadTest {
  @TempDir static Path dir;
  static JsonNode expected;

  @BeforeAll
  static void writeWithH5py() throws Exception {
    expected = Hdf5Files.write(dir);
  }

  static List<String> datasets(JsonNode e) {
    List<String> out = new ArrayList<>();
    if (e.has("datasets")) {
      e.get("datasets").forEach(n -> out.add(n.asText()));
    }
    return out;
  }

  @Test
  void everyFileMatchesNumpyBitExactly() {
    List<String> checked = new ArrayList<>();
    for (Map.Entry<String, JsonNode> e : expected.properties()) {
      for (long chunk : new long[] {Hdf5.DEFAULT_MAX_CHUNK_BYTES, 1, 50}) {
        try (Hdf5Dataset ds = Hdf5.open(dir.resolve(e.getKey()), datasets(e.getValue()), chunk)) {
          assertEquals(e.getValue().get("sha").asText(), Checksums.sha256(ds), e.getKey() + " with mappings of " + chunk);
          if (e.getValue().get("chunked").asBoolean()) {
            assertInstanceOf(SplitDataset.class, ds, e.getKey());
          } else {
            RandomAccessDataset<Example> ra = assertInstanceOf(RandomAccessDataset.class, ds, e.getKey());
            assertEquals(e.getValue().get("rows").asLong(), ra.size());
            assertGatherMatchesGet(ra, ds, e.getKey());
          }
        }
      }
      checked.add(e.getKey());
    }
    assertEquals(10, checked.size(), "checked " + checked);
  }

  /** gather (scattered and in order) puts into the batch the bytes get returns. */
  static void assertGatherMatchesGet(RandomAccessDataset<Example> ra, Hdf5Dataset ds, String what) {
    long n = ra.size();
    long[] scattered = LongStream.range(0, n).map(i -> (i * 7 + 3) % n).toArray();
    long[] inOrder = LongStream.range(0, n).toArray();
    for (long[] indices : new long[][] {scattered, inOrder}) {
      BufferPool pool = MemoryManager.shared().pool("test.hdf5.gather");
      try (BatchBuilder b = BatchBuilder.create(ds.schema(), (int) n, pool)) {
        ra.gather(indices, 0, indices.length, b);
        try (var batch = b.build()) {
          for (int i = 0; i < n; i++) {
            assertEquals(indices[i], batch.index(i));
            Example got = batch.copyRow(i);
            Example want = ra.get(indices[i]);
            for (TensorSpec f : ds.schema().fields()) {
              assertTrue(want.tensor(f.name()).contentEquals(got.tensor(f.name())),
                  what + " row " + indices[i] + " field " + f.name());
            }
          }
        }
      }
    }
  }

  @Test
  void dtypesAndShapesFollowTheDatasets() {
    try (Hdf5Dataset ds = Hdf5.open(dir.resolve("contiguous.h5"))) {
      assertEquals(new TensorSpec("be_f2", DType.FLOAT16, Shape.of(3)), ds.schema().field("be_f2"));
      assertEquals(new TensorSpec("le_u8", DType.UINT64, Shape.of(3)), ds.schema().field("le_u8"));
      assertEquals(DType.BOOL, ds.schema().field("flag").dtype());
      assertEquals(new TensorSpec("name", DType.STRING, Shape.scalar()), ds.schema().field("name"));
      assertEquals(DType.STRING, ds.schema().field("text").dtype());
      RandomAccessDataset<?> ra = (RandomAccessDataset<?>) ds;
      Example e = (Example) ra.get(5);
      assertEquals("n5", e.tensor("name").getString());
      assertTrue(e.tensor("le_f4").data().isDirect(), "little-endian contiguous rows are views of the mapping");
      assertFalse(e.tensor("be_f4").data().isDirect(), "big-endian rows are swapped copies");
    }
  }

  @Test
  void courseLayoutIsOneDatasetOfThreeFieldsWithAttributes() {
    for (String name : List.of("features.h5", "features_gzip.h5")) {
      try (Hdf5Dataset ds = Hdf5.open(dir.resolve(name))) {
        assertEquals(List.of("/edge", "/x", "/y"), ds.datasetPaths().stream().sorted().toList());
        assertEquals(new TensorSpec("x", DType.FLOAT32, Shape.of(16)), ds.schema().field("x"));
        assertEquals(Map.of("units", "m"), ds.attributes().get("/x"));
        assertEquals("course", ds.attributes().get("/").get("source"));
      }
      try (Hdf5Dataset two = Hdf5.open(dir.resolve(name), "/y", "x")) {
        assertEquals(List.of("y", "x"), two.schema().fields().stream().map(TensorSpec::name).toList());
      }
    }
    try (Hdf5Dataset ds = Hdf5.open(dir.resolve("contiguous.h5"), "text")) {
      assertEquals("dtypes", ds.attributes().get("/").get("title"));
      assertEquals(3L, ((Number) ds.attributes().get("/").get("version")).longValue());
      assertEquals(List.of(1.5, 2.5), ds.attributes().get("/").get("scale"));
    }
  }

  @Test
  void chunkedSplitsAreRunsOfWholeChunksThatReadFromAnyChunkBoundary() {
    try (Hdf5Dataset ds = Hdf5.open(dir.resolve("features_gzip.h5"))) {
      SplitDataset<Example> sd = assertInstanceOf(SplitDataset.class, ds);
      long total = 0;
      for (Split s : sd.splits()) {
        long[] starts = sd.blockStarts(s);
        assertEquals(0, starts[0]);
        for (int i = 1; i < starts.length; i++) {
          assertEquals(64, starts[i] - starts[i - 1], "blocks start on chunk boundaries");
        }
        total += s.rowCount();
      }
      assertEquals(1000, total);
      Split s = sd.splits().get(0);
      List<Example> part = sd.read(s, 64, 200).collectList().block();
      assertEquals(LongStream.range(64, 200).boxed().toList(), part.stream().map(Example::index).toList());
      assertEquals(LongStream.range(64, 200).boxed().toList(),
          part.stream().map(x -> x.tensor("y").getLong(0)).toList(), "y holds the row number");
    }
  }

  @Test
  void columnarBatchesHoldTheRowsThatReadGives() {
    for (String name : List.of("features_gzip.h5", "gzip_shuffle.h5", "fletcher.h5")) {
      try (Hdf5Dataset ds = Hdf5.open(dir.resolve(name))) {
        BatchSplitDataset<Example> sd = assertInstanceOf(BatchSplitDataset.class, ds);
        Split s = sd.splits().get(0);
        long n = s.rowCount();
        long[][] ranges = {{0, Long.MAX_VALUE}, {3, n - 2}, {n / 2, n / 2 + 1}};
        for (long[] r : ranges) {
          for (int[] sizes : new int[][] {{7, 7}, {1, 30}, {100, 3}}) {
            List<Example> want = sd.read(s, r[0], r[1]).collectList().block();
            List<Batch> got = sd.readBatches(s, r[0], r[1], sizes[0], sizes[1]).collectList().block();
            int row = 0;
            for (int k = 0; k < got.size(); k++) {
              try (Batch b = got.get(k)) {
                assertEquals(k == 0 ? Math.min(sizes[0], want.size()) : Math.min(sizes[1], want.size() - row), b.size());
                for (int i = 0; i < b.size(); i++, row++) {
                  Example w = want.get(row);
                  assertEquals(w.index(), b.index(i));
                  Example g = b.copyRow(i);
                  for (TensorSpec f : ds.schema().fields()) {
                    assertTrue(w.tensor(f.name()).contentEquals(g.tensor(f.name())), name + " row " + w.index() + " " + f.name());
                  }
                }
              }
            }
            assertEquals(want.size(), row, name + " " + java.util.Arrays.toString(r));
          }
        }
      }
    }
  }

  @Test
  void netcdfDimensionsWithoutVariablesAreSkippedAndUnequalLengthsNamed() {
    var e = assertThrows(dev.sluice.core.DatasetFormatException.class, () -> Hdf5.open(dir.resolve("climate.nc")));
    assertTrue(e.getMessage().contains("climate.nc"), e.getMessage());
    assertTrue(e.getMessage().contains("/lat: 4") && e.getMessage().contains("/time: 30"), e.getMessage());
    assertFalse(e.getMessage().contains("/lon"), "a dimension without a variable is no dataset: " + e.getMessage());
    try (Hdf5Dataset ds = Hdf5.open(dir.resolve("climate.nc"), "/time", "/temp")) {
      assertEquals(new TensorSpec("temp", DType.FLOAT32, Shape.of(4, 5)), ds.schema().field("temp"));
      assertEquals("K", ds.attributes().get("/temp").get("units"));
      assertEquals("climate", ds.attributes().get("/").get("title"));
    }
  }

  @Test
  void formatsRecognizeHdf5AndNetcdfBySignature() throws Exception {
    for (String name : List.of("contiguous.h5", "userblock.h5", "climate.nc", "gzip_fletcher.hdf5")) {
      assertEquals("hdf5", Formats.detect(dir.resolve(name)).name(), name);
    }
    java.nio.file.Files.copy(dir.resolve("userblock.h5"), dir.resolve("renamed.bin"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    assertEquals("hdf5", Formats.detect(dir.resolve("renamed.bin")).name(), "by signature, whatever the name");
  }

  @Test
  void readsAfterCloseFailNamingTheFile() {
    Hdf5Dataset ds = Hdf5.open(dir.resolve("contiguous.h5"));
    ds.close();
    ds.close();
    var e = assertThrows(DatasetClosedException.class, () -> ((RandomAccessDataset<?>) ds).get(0));
    assertTrue(e.getMessage().contains("contiguous.h5"), e.getMessage());
    Hdf5Dataset chunked = Hdf5.open(dir.resolve("lzf.h5"));
    chunked.close();
    assertThrows(DatasetClosedException.class, () -> chunked.flux().blockLast());
  }

  @Test
  void valuesOfTheCourseLayoutFollowTheRowNumber() {
    try (Hdf5Dataset ds = Hdf5.open(dir.resolve("features.h5"), "y")) {
      long[] ys = ds.flux().map(x -> x.tensor("y").getLong(0)).collectList().block()
          .stream().mapToLong(Long::longValue).toArray();
      assertArrayEquals(LongStream.range(0, 1000).toArray(), ys);
    }
  }
}
