package dev.sluice.io.npy;

import dev.sluice.core.testing.Python;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.DType;
import dev.sluice.core.Dataset;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;

/** The writer's files load in NumPy with the same dtype, shape and bytes (one Python run). */
@ExtendWith(NoLeaks.class)
class NpyWriterTest {
  @TempDir Path dir;

  static final String SCRIPT = """
      import hashlib, json, os, sys
      import numpy as np
      out = {}
      d = sys.argv[1]
      for name in sorted(os.listdir(d)):
          p = os.path.join(d, name)
          with open(p, 'rb') as f:
              version = np.lib.format.read_magic(f)
              np.lib.format.read_array_header_1_0(f)
              aligned = f.tell() % 64 == 0
          a = np.load(p)
          m = np.load(p, mmap_mode='r')
          out[name[:-4]] = {'dtype': a.dtype.name, 'shape': list(a.shape), 'aligned': aligned,
                            'version': list(version), 'mmap_equal': bool(np.array_equal(a, m, equal_nan=a.dtype.kind in 'fc')),
                            'sha': hashlib.sha256(a.astype(a.dtype.newbyteorder('<')).tobytes()).hexdigest()}
      print(json.dumps(out))
      """;

  private static Tensor random(DType t, Shape shape, Random r) {
    byte[] b = new byte[(int) (shape.numElements() * t.byteSize())];
    r.nextBytes(b);
    if (t == DType.BOOL) {
      for (int i = 0; i < b.length; i++) {
        b[i] &= 1;
      }
    }
    return Tensor.copyOf(t, shape, b);
  }

  @Test
  void everyDtypeLoadsInNumpyBitExactly() throws Exception {
    Random r = new Random(11);
    int rows = 13;
    Map<String, Tensor> columns = new LinkedHashMap<>();
    DType[] types = {DType.BOOL, DType.INT8, DType.INT16, DType.INT32, DType.INT64, DType.UINT8, DType.UINT16,
        DType.UINT32, DType.UINT64, DType.FLOAT16, DType.FLOAT32, DType.FLOAT64, DType.COMPLEX64, DType.COMPLEX128};
    Shape[] shapes = {Shape.of(rows), Shape.of(rows, 3), Shape.of(rows, 2, 2)};
    for (int i = 0; i < types.length; i++) {
      columns.put("f_" + types[i].numpyName(), random(types[i], shapes[i % shapes.length], r));
    }
    RandomAccessDataset<Example> source = Datasets.fromTensors(columns);
    Path out = dir.resolve("out");
    Npy.write(source, out);
    JsonNode got = new ObjectMapper().readTree(Python.run(SCRIPT, out.toString()));
    assertEquals(types.length, got.size());
    for (int i = 0; i < types.length; i++) {
      String name = "f_" + types[i].numpyName();
      JsonNode g = got.get(name);
      assertEquals(types[i].numpyName(), g.get("dtype").asText(), name);
      long[] dims = shapes[i % shapes.length].dims();
      assertEquals(dims.length, g.get("shape").size(), name);
      for (int d = 0; d < dims.length; d++) {
        assertEquals(dims[d], g.get("shape").get(d).asLong(), name);
      }
      assertTrue(g.get("aligned").asBoolean(), name + ": data starts on a 64-byte boundary");
      assertTrue(g.get("mmap_equal").asBoolean(), name);
      assertEquals(Checksums.sha256(source, List.of(name)), g.get("sha").asText(), name);
    }
    try (NpyDataset back = Npy.open(out)) {
      assertEquals(Checksums.sha256(source), Checksums.sha256(back), "round trip");
    }
  }

  @Test
  void streamingSourceWithoutSchema_rowCountPatchedIntoTheHeader() throws Exception {
    Dataset<Example> streaming = ctx -> Flux.range(0, 1001).map(i -> Example.of(i, "v", Tensor.of((long) i, 2L * i)));
    Path out = dir.resolve("s");
    Npy.write(streaming, out);
    try (NpyDataset back = Npy.open(out)) {
      assertEquals(1001, back.size());
      assertEquals(2000L, back.get(1000).tensor("v").getLong(1));
    }
  }

  @Test
  void refusesWhatNpyCannotHold() throws Exception {
    Dataset<Example> strings = ctx -> Flux.just(Example.of(0, "s", Tensor.ofString("a")));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Npy.write(strings, dir.resolve("x")));
    assertTrue(e.getMessage().contains("'s'"), e.getMessage());
    Dataset<Example> empty = ctx -> Flux.empty();
    assertThrows(IllegalArgumentException.class, () -> Npy.write(empty, dir.resolve("y")));
    Files.createDirectories(dir.resolve("z"));
    Files.write(dir.resolve("z").resolve("notes.txt"), new byte[] {1});
    IllegalArgumentException o = assertThrows(IllegalArgumentException.class,
        () -> Npy.write(Datasets.range(3), dir.resolve("z")));
    assertTrue(o.getMessage().contains("does not hold a dataset"), o.getMessage());
    assertEquals(List.of("notes.txt"), names(dir.resolve("z")), "another program's directory is left as it was");
  }

  @Test
  void writingOverADatasetOfOtherFieldsLeavesOnlyTheNewFields() throws Exception {
    Path out = dir.resolve("swap");
    Npy.write(Datasets.synthetic(4, 2, 1), out);
    Npy.write(Datasets.range(3), out);
    assertEquals(List.of("value.npy"), names(out));
    assertEquals(List.of("swap"), names(dir), "no temporary left beside it");
  }

  private static List<String> names(Path d) throws IOException {
    try (Stream<Path> s = Files.list(d)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void writingTwiceReplacesTheFiles() {
    Path out = dir.resolve("twice");
    Npy.write(Datasets.range(5), out);
    Npy.write(Datasets.range(3), out);
    try (NpyDataset back = Npy.open(out)) {
      assertEquals(3, back.size());
      assertEquals(2L, back.get(2).tensor("value").getLong(0));
    }
  }
}
