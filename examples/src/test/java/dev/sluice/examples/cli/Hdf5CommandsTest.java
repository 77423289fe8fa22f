package dev.sluice.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.Batch;
import dev.sluice.core.Example;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.core.testing.Python;
import dev.sluice.examples.cli.NpyCommandsTest.Run;
import dev.sluice.io.hdf5.Hdf5;
import dev.sluice.io.hdf5.Hdf5Dataset;
import dev.sluice.operators.Pipeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The course's layout ({@code x}, {@code y}, {@code edge} in one {@code features.h5}, written by
 * h5py, contiguous and gzip-chunked) through the commands and through a shuffled pipeline sharded
 * over 4 ranks.
 */
@ExtendWith(NoLeaks.class)
class Hdf5CommandsTest {
  @TempDir static Path dir;
  static JsonNode expected;

  static final String SCRIPT = """
      import hashlib, json, os, sys
      import numpy as np
      import h5py
      out = sys.argv[1]
      rng = np.random.default_rng(3)
      M = 1000
      x = rng.standard_normal((M, 16)).astype('>f4'); y = np.arange(M, dtype='<i8'); edge = rng.integers(0, 99, (M, 2)).astype('<i4')
      for name, kw in [('features.h5', {}), ('features_gzip.h5', {'chunks': True, 'compression': 'gzip', 'shuffle': True})]:
          with h5py.File(os.path.join(out, name), 'w') as f:
              f.create_dataset('x', data=x, **kw).attrs['units'] = 'm'
              f.create_dataset('y', data=y, **kw)
              f.create_dataset('edge', data=edge, **kw)
      canon = b''.join(edge[i].tobytes() + x[i].astype('<f4').tobytes() + y[i].tobytes() for i in range(M))
      with h5py.File(os.path.join(out, 'bad.h5'), 'w') as f:
          f.create_dataset('c', data=np.zeros(3, dtype=[('a', '<f4'), ('b', '<i2')]))
      print(json.dumps({'sha': hashlib.sha256(canon).hexdigest(),
                        'x': hashlib.sha256(x.astype('<f4').tobytes()).hexdigest()}))
      """;

  @BeforeAll
  static void writeWithH5py() throws Exception {
    H5py.require("the HDF5 commands");
    expected = new ObjectMapper().readTree(Python.run(SCRIPT, dir.toString()));
  }

  @Test
  void checksumAndConvertToEveryFormatEqualNumpy() throws Exception {
    String sha = expected.get("sha").asText();
    for (String file : List.of("features.h5", "features_gzip.h5")) {
      Path in = dir.resolve(file);
      Run c = NpyCommandsTest.run("checksum", in.toString());
      assertEquals(0, c.exit(), c.toString());
      assertEquals(sha, c.out().strip(), file);
      assertEquals(expected.get("x").asText(), NpyCommandsTest.run("checksum", in.toString(), "--columns", "x").out().strip());
      for (String to : List.of("npy", "shards", "parquet", "arrow")) {
        Path out = dir.resolve(file + "." + to);
        Run conv = NpyCommandsTest.run("convert", in.toString(), out.toString(), "--to", to);
        assertEquals(0, conv.exit(), conv.toString());
        assertEquals(sha, NpyCommandsTest.run("checksum", out.toString()).out().strip(), file + " as " + to);
      }
    }
  }

  @Test
  void inspectShowsFieldsDatasetsAndAttributes() throws Exception {
    Run r = NpyCommandsTest.run("inspect", dir.resolve("features_gzip.h5").toString());
    assertEquals(0, r.exit(), r.toString());
    JsonNode j = new ObjectMapper().readTree(r.out());
    assertEquals("hdf5", j.get("format").asText());
    assertEquals(1000, j.get("rows").asLong());
    assertEquals(3, j.get("fields").size());
    assertEquals("m", j.get("attributes").get("/x").get("units").asText());
    assertTrue(j.get("splits").asInt() >= 1);
  }

  @Test
  void readAndBadFilesFollowTheContract() throws Exception {
    Run read = NpyCommandsTest.run("read", dir.resolve("features.h5").toString(), "--batch", "64", "--shuffle");
    assertEquals(0, read.exit(), read.toString());
    NpyCommandsTest.assertBadInput(NpyCommandsTest.run("checksum", dir.resolve("bad.h5").toString()),
        "bad.h5", "/c", "compound");
    Path cut = dir.resolve("cut.h5");
    byte[] whole = Files.readAllBytes(dir.resolve("features_gzip.h5"));
    Files.write(cut, java.util.Arrays.copyOf(whole, whole.length * 2 / 3));
    NpyCommandsTest.assertBadInput(NpyCommandsTest.run("checksum", cut.toString()), "cut.h5");
  }

  @Test
  void shuffledAndShardedOverFourRanksEveryRowOncePerEpoch() {
    for (String file : List.of("features.h5", "features_gzip.h5")) {
      try (Hdf5Dataset ds = Hdf5.open(dir.resolve(file))) {
        List<List<Long>> epochs = new ArrayList<>();
        for (int epoch = 0; epoch < 2; epoch++) {
          PipelineContext ctx = PipelineContext.defaults().withSeed(9);
          for (int e = 0; e < epoch; e++) {
            ctx = ctx.nextEpoch();
          }
          List<Long> all = new ArrayList<>();
          for (int rank = 0; rank < 4; rank++) {
            List<Long> mine = new ArrayList<>();
            List<Batch> batches = Pipeline.from(ds).shuffle().shard(4, rank).batch(32).flux(ctx).collectList().block();
            for (Batch b : batches) {
              try (b) {
                for (int i = 0; i < b.size(); i++) {
                  Example row = b.copyRow(i);
                  assertEquals(b.index(i), row.tensor("y").getLong(0), "y holds the row number");
                  mine.add(b.index(i));
                }
              }
            }
            assertEquals(250, mine.size(), file + " rank " + rank);
            all.addAll(mine);
          }
          assertEquals(LongStream.range(0, 1000).boxed().toList(), all.stream().sorted().toList(),
              file + " epoch " + epoch + ": every row exactly once");
          epochs.add(all);
        }
        assertNotEquals(epochs.get(0), epochs.get(1), "each epoch has its own order");
        assertNotEquals(LongStream.range(0, 1000).boxed().toList(), epochs.get(0), "shuffled");
      }
    }
  }
}
