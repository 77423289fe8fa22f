package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.Batch;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.PipelineState;
import dev.sluice.core.Positioned;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.core.testing.Python;
import dev.sluice.io.hdf5.Hdf5;
import dev.sluice.io.hdf5.internal.ChunkedHdf5Dataset;
import dev.sluice.io.hdf5.internal.Hdf5File;
import dev.sluice.operators.Pipeline;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chunked HDF5 decoded by several workers at once (the columnar path's decode parallelism): the
 * batches are those of one worker, in order and shuffled, from the start and resumed mid-epoch, and
 * every decoded buffer is released on complete and on cancel. The file (written by h5py) holds a
 * gzip + shuffle dataset whose chunks also split its second dimension (with a partial chunk at its
 * edge), a big-endian LZF dataset (decoded by jhdf) whose chunks do not line up with the first one's,
 * and a contiguous one; each split is one chunk row, so that many splits decode at once.
 */
@ExtendWith(NoLeaks.class)
class Hdf5ParallelDecodeTest {
  @TempDir static Path dir;
  static String expectedSha;

  static final String SCRIPT = """
      import hashlib, json, os, sys
      import numpy as np
      import h5py
      out = sys.argv[1]
      rng = np.random.default_rng(5)
      M = 3001
      x = rng.standard_normal((M, 6)).astype('<f4')
      y = np.arange(M, dtype='>i8') * 3
      z = rng.integers(0, 255, (M, 3)).astype('u1')
      with h5py.File(os.path.join(out, 'par.h5'), 'w') as f:
          f.create_dataset('x', data=x, chunks=(64, 4), compression='gzip', shuffle=True)
          f.create_dataset('y', data=y, chunks=(100,), compression='lzf')
          f.create_dataset('z', data=z)
      canon = b''.join(x[i].tobytes() + y[i].astype('<i8').tobytes() + z[i].tobytes() for i in range(M))
      print(json.dumps({'sha': hashlib.sha256(canon).hexdigest()}))
      """;

  @BeforeAll
  static void writeWithH5py() throws Exception {
    H5py.require("the HDF5 parallel decode");
    JsonNode j = new ObjectMapper().readTree(Python.run(SCRIPT, dir.toString()));
    expectedSha = j.get("sha").asText();
  }

  /** The file with one chunk row (64 rows) per split. */
  private static ChunkedHdf5Dataset open() {
    return new ChunkedHdf5Dataset(Hdf5File.open(dir.resolve("par.h5"), List.of()), Hdf5.DEFAULT_MAX_CHUNK_BYTES, 1);
  }

  private static Pipeline<Batch> pipeline(ChunkedHdf5Dataset data, boolean shuffle, int workers) {
    Pipeline<dev.sluice.core.Example> p = Pipeline.from(data);
    return (shuffle ? p.shuffle() : p).batch(50, false, workers);
  }

  /** A batch as text: its row indices and the SHA-256 of each column's bytes. */
  private static String describe(Batch b) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < b.size(); i++) {
      sb.append(b.index(i)).append(',');
    }
    for (int f = 0; f < b.schema().fields().size(); f++) {
      sb.append(' ').append(sha(b.column(f).values().data()));
    }
    return sb.toString();
  }

  private static String sha(ByteBuffer data) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(data.duplicate());
      return HexFormat.of().formatHex(md.digest());
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static List<String> batches(Pipeline<Batch> p, PipelineContext ctx) {
    List<String> out = new ArrayList<>();
    p.flux(ctx).doOnNext(b -> {
      try (b) {
        out.add(describe(b));
      }
    }).blockLast();
    return out;
  }

  @Test
  void inOrderTheRowsAreNumpysWhateverTheWorkers() throws Exception {
    PipelineContext ctx = PipelineContext.defaults().withSeed(3);
    try (ChunkedHdf5Dataset data = open()) {
      assertThat(data.splits()).hasSize(47);
      for (int workers : new int[] {1, 3}) {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        long[] next = {0};
        pipeline(data, false, workers).flux(ctx).doOnNext(b -> {
          try (b) {
            for (int i = 0; i < b.size(); i++) {
              assertThat(b.index(i)).isEqualTo(next[0]++);
              for (int f = 0; f < b.schema().fields().size(); f++) {
                md.update(b.column(f).row(i).data().duplicate());
              }
            }
          }
        }).blockLast();
        assertThat(next[0]).isEqualTo(3001);
        assertThat(HexFormat.of().formatHex(md.digest())).as("%d workers", workers).isEqualTo(expectedSha);
      }
    }
  }

  @Test
  void oneAndThreeWorkersGiveTheSameBatchesInOrderAndShuffled() {
    try (ChunkedHdf5Dataset data = open()) {
      for (boolean shuffle : new boolean[] {false, true}) {
        for (long epoch : new long[] {0, 1}) {
          PipelineContext ctx = PipelineContext.defaults().withSeed(11).withEpoch(epoch);
          List<String> one = batches(pipeline(data, shuffle, 1), ctx);
          List<String> three = batches(pipeline(data, shuffle, 3), ctx);
          assertThat(one).hasSize(61);
          assertThat(three).as("shuffle %s, epoch %d", shuffle, epoch).isEqualTo(one);
        }
      }
    }
  }

  @Test
  void resumingMidEpochWithThreeWorkersGivesTheRestOfTheEpoch() {
    PipelineContext ctx = PipelineContext.defaults().withSeed(7);
    try (ChunkedHdf5Dataset data = open()) {
      for (boolean shuffle : new boolean[] {false, true}) {
        List<String> whole = batches(pipeline(data, shuffle, 1), ctx);
        for (int cut : new int[] {1, 17, 40}) {
          Pipeline<Batch> p = pipeline(data, shuffle, 3);
          List<Positioned<Batch>> head = p.withState(ctx, 1).take(cut).collectList().block();
          PipelineState state = head.get(head.size() - 1).state();
          List<String> seen = new ArrayList<>();
          for (Positioned<Batch> b : head) {
            try (Batch batch = b.element()) {
              seen.add(describe(batch));
            }
          }
          List<String> rest = new ArrayList<>();
          p.resume(state).doOnNext(b -> {
            try (b) {
              rest.add(describe(b));
            }
          }).blockLast();
          seen.addAll(rest);
          assertThat(seen).as("shuffle %s, resumed after %d batches", shuffle, cut).isEqualTo(whole);
        }
      }
    }
  }

  @Test
  void cancellingThreeWorkersReleasesEveryDecodedBuffer() throws Exception {
    try (ChunkedHdf5Dataset data = open()) {
      for (int take : new int[] {1, 7, 30}) {
        CountDownLatch done = new CountDownLatch(1);
        pipeline(data, true, 3).flux(PipelineContext.defaults().withSeed(take))
            .doFinally(s -> done.countDown())
            .take(take)
            .doOnNext(Batch::close)
            .blockLast();
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        Awaitility.await().atMost(Duration.ofSeconds(30))
            .until(() -> MemoryManager.shared().outstandingBytes() == 0);
      }
    }
  }
}
