package dev.sluice.io.npy;

import dev.sluice.core.testing.Python;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.Shape;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.UnsupportedFormatException;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.Formats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files written by NumPy (one {@code /usr/bin/python3} run for the class): every dtype in both byte
 * orders, Fortran order, header versions 1.0/2.0/3.0, 0-d, empty, 1-d and structured arrays, aligned
 * arrays, stacks with and without {@code metadata.json}, and an object array. Values are compared
 * bit-exactly through the canonical-bytes SHA-256 that NumPy computes on its side.
 */
@ExtendWith(NoLeaks.class)
class NpyNumpyCompatTest {
  @TempDir static Path dir;
  static JsonNode expected;

  static final String SCRIPT = """
      import hashlib, json, os, pickle, sys
      import numpy as np
      out = sys.argv[1]
      rng = np.random.default_rng(7)
      exp = {}
      def canon(a):
          if a.dtype.names is None:
              return a.astype(a.dtype.newbyteorder('<')).tobytes(order='C')
          a = np.atleast_1d(a)
          parts = []
          for i in range(a.shape[0]):
              for n in sorted(a.dtype.names):
                  v = np.asarray(a[n][i])
                  parts.append(v.astype(v.dtype.newbyteorder('<')).tobytes(order='C'))
          return b''.join(parts)
      def record(name, a, canonical=None):
          c = canon(a) if canonical is None else canonical
          dt = a.dtype
          exp[name] = {'sha': hashlib.sha256(c).hexdigest(), 'shape': list(a.shape),
                       'dtype': None if dt.names else dt.newbyteorder('=').name,
                       'fields': list(dt.names) if dt.names else None}
      def save(name, a, version=None):
          path = os.path.join(out, name + '.npy')
          if version is None:
              np.save(path, a)
          else:
              with open(path, 'wb') as f:
                  np.lib.format.write_array(f, a, version=version)
          record(name, a)
      def values(code, shape):
          dt = np.dtype(code)
          if dt.kind == 'b':
              return rng.integers(0, 2, size=shape).astype(dt)
          if dt.kind in 'iu':
              info = np.iinfo(dt)
              return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt.newbyteorder('=')).astype(dt)
          if dt.kind == 'c':
              return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
          return (rng.standard_normal(shape) * 1000).astype(dt)
      for code in ['b1', 'i1', 'u1']:
          save('le_' + code, values('|' + code, (7, 3)))
      for code in ['i2', 'i4', 'i8', 'u2', 'u4', 'u8', 'f2', 'f4', 'f8', 'c8', 'c16']:
          save('le_' + code, values('<' + code, (7, 3)))
          save('be_' + code, values('>' + code, (7, 3)))
      save('fortran_f4', np.asfortranarray(values('<f4', (5, 3, 4))))
      save('fortran_be_i8', np.asfortranarray(values('>i8', (6, 5))))
      save('fortran_1d', np.asfortranarray(values('<i4', (6,))))
      save('v1', values('<f8', (4, 2)), version=(1, 0))
      save('v2', values('<i4', (9, 2)), version=(2, 0))
      v3 = np.zeros(5, dtype=[('\u03b1', '<f4'), ('b', '<i2')])
      v3['\u03b1'] = values('<f4', (5,)); v3['b'] = values('<i2', (5,))
      save('v3', v3, version=(3, 0))
      save('scalar', np.array(3.25, dtype='<f8'))
      save('empty', np.zeros((0, 3), dtype='<f4'))
      save('one_d', values('<i8', (10,)))
      st = np.zeros(6, dtype=np.dtype([('a', '<f4'), ('b', '>i8', (2,)), ('c', '?'), ('d', '<c8')], align=True))
      st['a'] = values('<f4', (6,)); st['b'] = values('>i8', (6, 2)); st['c'] = values('?', (6,)); st['d'] = values('<c8', (6,))
      save('struct', st)
      os.makedirs(os.path.join(out, 'aligned'))
      x = values('<f4', (6, 4)); label = np.arange(6, dtype='<i8')
      np.save(os.path.join(out, 'aligned', 'x.npy'), x)
      np.save(os.path.join(out, 'aligned', 'label.npy'), label)
      exp['aligned'] = {'sha': hashlib.sha256(b''.join(label[i].tobytes() + x[i].tobytes() for i in range(6))).hexdigest()}
      def stack(name, chunks, meta=None, info=False):
          d = os.path.join(out, name); os.makedirs(d)
          for k, c in enumerate(chunks):
              np.save(os.path.join(d, '%d.npy' % k), c)
          if meta is not None:
              with open(os.path.join(d, 'metadata.json'), 'w') as f:
                  json.dump(meta, f)
          if info:
              with open(os.path.join(d, 'info'), 'wb') as f:
                  pickle.dump({'chunks': [[len(c) for c in chunks]], 'dtype': chunks[0].dtype, 'axis': 0}, f)
          whole = np.concatenate(chunks)
          record(name, whole)
      stack('stack_meta', [values('<f4', (4, 3)), np.zeros((0, 3), '<f4'), values('<f4', (5, 3))],
            meta={'dtype': 'float32', 'dataset_len': 9, 'num_shards': 3, 'x_shape': [9, 3], 'shard_shapes': [[4, 3]], 'hash': 'abc'})
      stack('stack_descr', [values('>i2', (3,)), values('>i2', (2,))], meta={'dtype': '>i2', 'dataset_len': 5})
      stack('stack_dask', [values('<u2', (2, 2)), values('<u2', (3, 2))], info=True)
      np.save(os.path.join(out, 'object.npy'), np.array([1, 'a', None], dtype=object), allow_pickle=True)
      print(json.dumps(exp))
      """;

  @BeforeAll
  static void writeWithNumpy() throws Exception {
    expected = new ObjectMapper().readTree(Python.run(SCRIPT, dir.toString()));
  }

  @Test
  void everyFileMatchesNumpyBitExactly() throws Exception {
    List<String> checked = new ArrayList<>();
    for (Map.Entry<String, JsonNode> e : expected.properties()) {
      String name = e.getKey();
      Path p = Files.isDirectory(dir.resolve(name)) ? dir.resolve(name) : dir.resolve(name + ".npy");
      for (long chunk : new long[] {Npy.DEFAULT_MAX_CHUNK_BYTES, 1, 50}) {
        try (NpyDataset ds = Npy.open(p, chunk)) {
          assertEquals(e.getValue().get("sha").asText(), Checksums.sha256(ds), name + " with chunks of " + chunk);
          NpyFiles.assertGatherMatchesGet(ds, NpyFiles.shuffled(ds.size(), 3), 4);
        }
      }
      checked.add(name);
    }
    assertTrue(checked.size() >= 30, "checked " + checked);
  }

  @Test
  void dtypesAndShapesFollowTheHeader() {
    for (Map.Entry<String, JsonNode> e : expected.properties()) {
      JsonNode dt = e.getValue().get("dtype");
      if (dt == null || dt.isNull() || Files.isDirectory(dir.resolve(e.getKey()))) {
        continue;
      }
      try (NpyDataset ds = Npy.open(dir.resolve(e.getKey() + ".npy"))) {
        JsonNode shape = e.getValue().get("shape");
        long[] dims = new long[shape.size()];
        for (int i = 0; i < dims.length; i++) {
          dims[i] = shape.get(i).asLong();
        }
        TensorSpec spec = ds.schema().field(0);
        assertEquals(e.getKey(), spec.name());
        assertEquals(DType.fromName(dt.asText()), spec.dtype(), e.getKey());
        Shape full = dims.length == 0 ? Shape.of(1) : Shape.of(dims);
        assertEquals(full.dim(0), ds.size(), e.getKey());
        assertEquals(dims.length == 0 ? Shape.scalar() : full.dropFirst(), spec.shape(), e.getKey());
      }
    }
  }

  @Test
  void littleEndianCOrderRowsAreViewsOfTheMapping() {
    try (NpyDataset le = Npy.open(dir.resolve("le_f4.npy")); NpyDataset be = Npy.open(dir.resolve("be_f4.npy"))) {
      assertTrue(le.get(3).tensor("le_f4").data().isDirect(), "a view of the mapping");
      assertFalse(be.get(3).tensor("be_f4").data().isDirect(), "big-endian rows are swapped copies");
    }
  }

  @Test
  void structuredDtypeGivesOneFieldPerDtypeField() {
    try (NpyDataset ds = Npy.open(dir.resolve("struct.npy"))) {
      assertEquals(List.of("a", "b", "c", "d"), ds.schema().fields().stream().map(TensorSpec::name).toList());
      assertEquals(new TensorSpec("b", DType.INT64, Shape.of(2)), ds.schema().field("b"));
      assertEquals(DType.BOOL, ds.schema().field("c").dtype());
      assertEquals(DType.COMPLEX64, ds.schema().field("d").dtype());
      assertEquals(6, ds.size());
    }
    try (NpyDataset v3 = Npy.open(dir.resolve("v3.npy"))) {
      assertTrue(v3.schema().contains("\u03b1"), "UTF-8 field names of header 3.0");
    }
  }

  @Test
  void zeroDimensionalArrayIsOneExample() {
    try (NpyDataset ds = Npy.open(dir.resolve("scalar.npy"))) {
      assertEquals(1, ds.size());
      Example e = ds.get(0);
      assertEquals(3.25, e.tensor("scalar").getDouble(0));
      assertEquals(Shape.scalar(), e.tensor("scalar").shape());
    }
  }

  @Test
  void aligned_fieldsInFileNameOrder_andStacksAreSplitDatasets() {
    try (NpyDataset ds = Npy.open(dir.resolve("aligned"))) {
      assertEquals(List.of("label", "x"), ds.schema().fields().stream().map(TensorSpec::name).toList());
      assertEquals(5L, ds.get(5).tensor("label").getLong(0));
    }
    try (NpyDataset ds = Npy.open(dir.resolve("stack_meta"))) {
      NpyStack stack = assertInstanceOf(NpyStack.class, ds);
      assertEquals(3, stack.splits().size());
      assertEquals(List.of(4L, 0L, 5L), stack.splits().stream().map(s -> s.rowCount()).toList());
      assertEquals("x", ds.schema().field(0).name(), "named by the x_shape key");
      assertEquals(9, ds.size());
    }
    try (NpyDataset ds = Npy.open(dir.resolve("stack_dask"))) {
      assertEquals("stack_dask", ds.schema().field(0).name(), "no metadata: named after the directory");
      assertEquals(5, ds.size());
    }
  }

  @Test
  void theRegistryRecognizesEveryLayout() throws Exception {
    assertEquals("npy", Formats.detect(dir.resolve("le_f4.npy")).name());
    assertEquals("npy", Formats.detect(dir.resolve("aligned")).name());
    assertEquals("npy", Formats.detect(dir.resolve("stack_dask")).name());
  }

  @Test
  void objectArraysAreRefusedNeverUnpickled() {
    UnsupportedFormatException e = assertThrows(UnsupportedFormatException.class, () -> Npy.open(dir.resolve("object.npy")));
    assertTrue(e.getMessage().contains("object.npy") && e.getMessage().contains("never unpickles"), e.getMessage());
  }
}
