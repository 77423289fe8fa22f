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
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python reader kept beside the specification ({@code docs/formats/shards_reader.py}, numpy
 * only) reads a shard set of every field kind bit-exactly: the SHA-256 of the canonical bytes it
 * computes from what it read equals Sluice's checksum of the source.
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
      rows = len(columns[fields[0]['name']])
      h = hashlib.sha256()
      kinds = {}
      for r in range(rows):
          for f in fields:
              v = columns[f['name']][r]
              binary = f['dtype'] in ('string', 'bytes')
              fixed = not binary and -1 not in f['shape']
              if f['nullable']:
                  h.update(b'\\x01' if v is not None else b'\\x00')
              if v is None:
                  size = int(np.prod(f['shape'])) * np.dtype(shards_reader.DTYPES[f['dtype']]).itemsize if fixed else 0
                  h.update(bytes(size) if fixed else struct.pack('<q', 0))
              elif fixed:
                  h.update(v.tobytes())
              elif binary:
                  h.update(struct.pack('<q', len(v)) + v)
              else:
                  h.update(struct.pack('<q', v.size) + v.tobytes())
              if v is not None:
                  kinds[f['name']] = type(v).__name__ + ':' + (str(v.dtype) if hasattr(v, 'dtype') else '')
      print(json.dumps({'rows': rows, 'sha256': h.hexdigest(), 'kinds': kinds,
                        'text': columns['text'][1].decode('utf-8') if columns['text'][1] is not None else None}))
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
    Object text = source.get(1).isNull("text") ? null : ShardTestData.text(source.get(1).tensor("text"));
    assertEquals(text == null ? "null" : text, py.get("text").isNull() ? "null" : py.get("text").asText());
    JsonNode kinds = py.get("kinds");
    for (String f : List.of("f16", "c128", "i32", "zero", "tokens", "points")) {
      assertTrue(kinds.get(f).asText().startsWith("ndarray:"), f + " is " + kinds.get(f));
    }
    assertEquals("ndarray:float16", kinds.get("f16").asText());
    assertEquals("ndarray:int32", kinds.get("tokens").asText());
    assertEquals("bytes:", kinds.get("blob").asText());
  }
}
