package dev.sluice.io.npy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.DType;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.Split;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Formats;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.test.StepVerifier;

/** npy stacks: global indices across chunks, splits, metadata.json, and their bad inputs. */
@ExtendWith(NoLeaks.class)
class NpyStackTest {
  @TempDir Path dir;

  /** Writes chunk {@code k} of float32 rows [start, start+rows) × 3, value = row * 10 + column. */
  private static void chunk(Path stack, int k, String descr, long start, int rows) throws IOException {
    Files.createDirectories(stack);
    ByteBuffer b = ByteBuffer.allocate(rows * 12).order(ByteOrder.LITTLE_ENDIAN);
    for (long r = start; r < start + rows; r++) {
      for (int c = 0; c < 3; c++) {
        b.putFloat((r * 10 + c));
      }
    }
    NpyFiles.write(stack.resolve(k + ".npy"), NpyFiles.header(1, NpyFiles.dict(descr, false, rows, 3)), b.array());
  }

  private Path stack(String name, int... rows) throws IOException {
    Path d = dir.resolve(name);
    long start = 0;
    for (int k = 0; k < rows.length; k++) {
      chunk(d, k, "<f4", start, rows[k]);
      start += rows[k];
    }
    return d;
  }

  private static void metadata(Path stack, Map<String, Object> m) throws IOException {
    new ObjectMapper().writeValue(stack.resolve("metadata.json").toFile(), m);
  }

  private static Map<String, Object> meta(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  @Test
  void globalIndicesAcrossChunks_getGatherAndSplits() throws Exception {
    Path d = stack("s", 5, 0, 7, 1, 4);
    for (long chunkBytes : new long[] {Npy.DEFAULT_MAX_CHUNK_BYTES, 12, 30}) {
      try (NpyDataset ds = Npy.open(d, chunkBytes)) {
        NpyStack st = assertInstanceOf(NpyStack.class, ds);
        assertEquals(17, ds.size());
        assertEquals(5, st.chunkCount());
        for (long i = 0; i < 17; i++) {
          assertEquals(i * 10 + 2, ds.get(i).tensor("s").getFloat(2), "row " + i);
        }
        NpyFiles.assertGatherMatchesGet(ds, NpyFiles.shuffled(17, 5), 6);
        long[] inOrder = new long[17];
        for (int i = 0; i < 17; i++) {
          inOrder[i] = i;
        }
        NpyFiles.assertGatherMatchesGet(ds, inOrder, 17);
        List<Split> splits = st.splits();
        assertEquals(List.of(5L, 0L, 7L, 1L, 4L), splits.stream().map(Split::rowCount).toList());
        assertEquals("s/2.npy", splits.get(2).id());
        StepVerifier.create(st.read(splits.get(2), 1, 3).map(Example::index)).expectNext(6L, 7L).verifyComplete();
        StepVerifier.create(st.read(splits.get(4), 0, Long.MAX_VALUE).map(Example::index))
            .expectNext(13L, 14L, 15L, 16L).verifyComplete();
        StepVerifier.create(ds.flux().map(Example::index).count()).expectNext(17L).verifyComplete();
      }
    }
  }

  @Test
  void metadataAnswersSizeAndDtypeWithoutOpeningChunks() throws Exception {
    Path d = stack("m", 3, 3);
    metadata(d, meta("dtype", "<f4", "dataset_len", 6, "num_shards", 2, "feat_shape", List.of(6, 3),
        "shard_shapes", List.of(List.of(3, 3)), "sha", "ignored"));
    Files.write(d.resolve("info"), new byte[] {(byte) 0x80, 4, 'c', 'o', 's', '\n', 's', 'y', 's', 't', 'e', 'm'}); // never unpickled
    Files.delete(d.resolve("1.npy"));
    Files.write(d.resolve("1.npy"), new byte[] {1, 2, 3}); // broken, but size and schema need no chunk
    try (NpyDataset ds = Npy.open(d)) {
      assertEquals(6, ds.size());
      assertEquals("feat", ds.schema().field(0).name());
      assertEquals(DType.FLOAT32, ds.schema().field(0).dtype());
      assertEquals(Shape.of(3), ds.schema().field(0).shape());
      DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> ds.get(0));
      assertTrue(e.getMessage().contains("1.npy"), e.getMessage());
    }
  }

  @Test
  void numpyNamesAndDescrsAreBothAccepted() throws Exception {
    Path d = stack("n", 2, 2);
    for (String dtype : new String[] {"float32", "<f4", "f4"}) {
      metadata(d, meta("dtype", dtype, "dataset_len", 4, "num_shards", 2, "x_shape", List.of(4, 3)));
      try (NpyDataset ds = Npy.open(d)) {
        assertEquals(32f, ds.get(3).tensor("x").getFloat(2), dtype);
      }
    }
  }

  @Test
  void missingChunk() throws Exception {
    Path d = stack("gap", 2, 2, 2);
    Files.delete(d.resolve("1.npy"));
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> Npy.open(d));
    assertTrue(e.getMessage().contains("missing chunk 1.npy") && e.getMessage().contains("gap"), e.getMessage());
  }

  @Test
  void mismatchedChunkNamesBothFiles() throws Exception {
    Path d = stack("mix", 2, 2);
    chunk(d, 2, "<i4", 4, 2);
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> Npy.open(d));
    assertTrue(e.getMessage().contains("2.npy") && e.getMessage().contains("0.npy")
        && e.getMessage().contains("int32") && e.getMessage().contains("float32"), e.getMessage());
  }

  @Test
  void chunkWithBadHeaderIsNamed() throws Exception {
    Path d = stack("badchunk", 2, 2);
    Files.write(d.resolve("1.npy"), "garbage!!!!!!".getBytes());
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> Npy.open(d));
    assertTrue(e.getMessage().contains("1.npy") && e.getMessage().contains("bad magic"), e.getMessage());
  }

  @Test
  void metadataDisagreeingWithChunksNamesBoth() throws Exception {
    Path d = stack("dis", 2, 3);
    Object[][] cases = {
      {meta("dtype", "float32", "dataset_len", 6, "x_shape", List.of(6, 3)), "dataset_len"},
      {meta("dtype", "float64", "dataset_len", 5, "x_shape", List.of(5, 3)), "float64"},
      {meta("dtype", ">f4", "dataset_len", 5, "x_shape", List.of(5, 3)), ">f4"},
      {meta("dtype", "float32", "dataset_len", 5, "x_shape", List.of(5, 4)), "x_shape"},
      {meta("dtype", "float32", "num_shards", 3), "num_shards"},
      {meta("dtype", "float32", "dataset_len", 5, "x_shape", List.of(4, 3)), "dataset_len is 5"},
    };
    for (Object[] c : cases) {
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) c[0];
      metadata(d, m);
      DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> {
        try (NpyDataset ds = Npy.open(d)) {
          ds.get(0);
        }
      }, m.toString());
      assertTrue(e.getMessage().contains("metadata.json") && e.getMessage().contains((String) c[1]), e.getMessage());
      if (!e.getMessage().contains("num_shards") && !e.getMessage().contains("dataset_len is")) {
        assertTrue(e.getMessage().contains("0.npy") || e.getMessage().contains("chunks"), "names the chunks: " + e.getMessage());
      }
    }
  }

  @Test
  void metadataSizesThatOverflowAreDataErrorsNamingTheKey() throws Exception {
    Path d = stack("huge", 2, 3);
    Object[][] cases = {
      {meta("dtype", "float32", "x_shape", List.of(5, 1L << 62)), "key x_shape", "rows of shape (4611686018427387904,)"
          + " of float32 are 18446744073709551616 bytes each"},
      {meta("dtype", "float32", "x_shape", List.of(5, java.math.BigInteger.ONE.shiftLeft(70))), "key x_shape",
          "expected a list of integers >= 0"},
      {meta("dtype", "[('a', '<f8', (1073741824, 2))]", "x_shape", List.of(5)), "key dtype",
          "more than 2147483647 bytes"},
    };
    for (Object[] c : cases) {
      @SuppressWarnings("unchecked")
      Map<String, Object> m = (Map<String, Object>) c[0];
      metadata(d, m);
      DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> {
        try (NpyDataset ds = Npy.open(d)) {
          ds.get(0);
        }
      }, m.toString());
      assertTrue(e.getMessage().contains("metadata.json"), e.getMessage());
      for (int i = 1; i < c.length; i++) {
        assertTrue(e.getMessage().contains((String) c[i]), "'" + c[i] + "' in: " + e.getMessage());
      }
    }
  }

  @Test
  void chunksWhoseRowsAddUpToMoreThanALongNameTheChunk() throws Exception {
    Path d = dir.resolve("many");
    Files.createDirectories(d);
    for (int k = 0; k < 3; k++) { // rows of zero bytes: the files are headers only
      NpyFiles.write(d.resolve(k + ".npy"), NpyFiles.header(1, NpyFiles.dict("<f4", false, 1L << 62, 0)), new byte[0]);
    }
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> {
      try (NpyDataset ds = Npy.open(d)) {
        ds.size();
      }
    });
    assertTrue(e.getMessage().contains("1.npy") && e.getMessage().contains("more rows than a dataset can index"),
        e.getMessage());
  }

  @Test
  void malformedMetadataIsADataError() throws Exception {
    Path d = stack("badmeta", 2);
    Files.writeString(d.resolve("metadata.json"), "{\"dtype\": ");
    DatasetFormatException e = assertThrows(DatasetFormatException.class, () -> Npy.open(d));
    assertTrue(e.getMessage().contains("metadata.json") && e.getMessage().contains("malformed JSON"), e.getMessage());
  }

  @Test
  void probe_stacksNeedNumberedChunks_aDirectoryWithOnlyMetadataIsNotNpy() throws Exception {
    Path shards = dir.resolve("shards");
    Files.createDirectories(shards);
    metadata(shards, meta("format", "sluice-shards", "num_shards", 1));
    Files.write(shards.resolve("shard-00000.bin"), new byte[] {1, 2, 3});
    assertEquals(false, new NpyFormat().probe(shards));
    assertEquals(true, new NpyFormat().probe(stack("p", 1)));
    assertEquals(false, new NpyFormat().probe(shards.resolve("shard-00000.bin")));
    assertTrue(Formats.names().contains("npy"));
  }

  @Test
  void readsAfterCloseThrow() throws Exception {
    NpyDataset ds = Npy.open(stack("c", 2, 2));
    ds.get(3);
    ds.close();
    assertThrows(dev.sluice.core.DatasetClosedException.class, () -> ds.get(0));
  }
}
