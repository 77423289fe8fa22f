package dev.sluice.io.shards;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.core.testing.Python;
import dev.sluice.io.Checksums;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.shards.ShardTestData.ExampleList;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python reader kept beside the specification ({@code docs/formats/shards_reader.py}, numpy
 * only) reads a shard set of every field kind, nested ones included, bit-exactly: the SHA-256 of
 * the canonical bytes it computes from what it read equals Sluice's checksum of the source.
 */
@ExtendWith(NoLeaks.class)
class ShardPythonReaderTest {
  @TempDir Path dir;

  static final String SCRIPT = """
      import hashlib, json, struct, sys
      import numpy as np
      sys.path.insert(0, sys.argv[1])
      import shards_reader
      columns = shards_reader.read(sys.argv[2], check=True)
      fields = sorted(json.load(open(sys.argv[2] + '/metadata.json'))['fields'], key=lambda f: f['name'])
      count = lambda n: struct.pack('<q', n)
      def canon(f, k, nullable, d, v):  # the canonical bytes of valid item v at depth d
          binary = f['dtype'] in ('string', 'bytes')
          if d == k:
              return count(len(v)) + v if binary else v.tobytes()
          out = count(len(v))
          for e in v:
              if nullable[d + 1]:
                  out += b'\\x01' if e is not None else b'\\x00'
              if e is None and d + 1 == k and not binary:  # a null fixed-shape item: zeros
                  out += bytes(int(np.prod(f['shape'][k:])) * np.dtype(shards_reader.DTYPES[f['dtype']]).itemsize)
              elif e is None:
                  out += count(0)
              else:
                  out += canon(f, k, nullable, d + 1, e)
          return out
      rows = len(columns[fields[0]['name']])
      h = hashlib.sha256()
      for r in range(rows):
          for f in fields:
              k = next((i for i, d in enumerate(f['shape']) if d != -1), len(f['shape']))
              nullable = [f['nullable']] + f.get('nullable_elements', [])
              v = columns[f['name']][r]
              if f['nullable']:
                  h.update(b'\\x01' if v is not None else b'\\x00')
              if v is not None:
                  h.update(canon(f, k, nullable, 0, v))
              elif k == 0 and f['dtype'] not in ('string', 'bytes'):
                  h.update(bytes(int(np.prod(f['shape'])) * np.dtype(shards_reader.DTYPES[f['dtype']]).itemsize))
              else:
                  h.update(count(0))
      first = lambda name: next(v for v in columns[name] if v is not None and len(v) > 0)
      print(json.dumps({'rows': rows, 'sha256': h.hexdigest(),
                        'f16': str(columns['f16'][0].dtype), 'tokens': type(columns['tokens'][0]).__name__,
                        'words': type(first('words')[0]).__name__, 'matrix': type(first('matrix')).__name__}))
      """;

  @Test
  void thePythonReaderFromTheSpecificationReadsEveryFieldBitExactly() throws Exception {
    Path docs = Path.of("").toAbsolutePath().getParent().resolve("docs").resolve("formats");
    assertTrue(Files.isRegularFile(docs.resolve("shards_reader.py")), docs + " holds shards_reader.py");
    ExampleList source = ShardTestData.mixed(250, 11);
    Path set = dir.resolve("set");
    Shards.write(source, set, WriteOptions.defaults().withNumShards(4).withWorkers(2));
    JsonNode py = new ObjectMapper().readTree(Python.run(SCRIPT, docs.toString(), set.toString()));
    assertEquals(250, py.get("rows").asInt());
    assertEquals(Checksums.sha256(source), py.get("sha256").asText(), "canonical bytes of what Python read");
    assertEquals("float16", py.get("f16").asText());
    assertEquals("list", py.get("tokens").asText());
    assertEquals("bytes", py.get("words").asText());
    assertEquals("list", py.get("matrix").asText());
  }
}
