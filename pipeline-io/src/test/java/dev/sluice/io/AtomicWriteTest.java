package dev.sluice.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetIOException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.Schema;
import dev.sluice.core.testing.NoLeaks;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

/**
 * Every format's writer puts its output in place only when complete: a failure leaves nothing at
 * the path and no temporary beside it, {@link ExistingOutput#FAIL} never replaces, and the next
 * write removes what a dead writer left.
 */
@ExtendWith(NoLeaks.class)
class AtomicWriteTest {
  @TempDir Path dir;

  private List<String> names() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static String sum(Path p) throws Exception {
    Dataset<Example> d = Formats.open(p);
    try {
      return Checksums.sha256(d);
    } finally {
      if (d instanceof AutoCloseable c) {
        c.close();
      }
    }
  }

  /** A streaming source of {@code rows} synthetic rows whose row {@code failAt} throws. */
  private static Dataset<Example> failingAt(long rows, long failAt) {
    Dataset<Example> good = Datasets.synthetic(rows, 4, 1);
    Schema schema = ((HasSchema) good).schema();
    class Failing implements Dataset<Example>, HasSchema {
      @Override
      public Flux<Example> flux(dev.sluice.core.PipelineContext ctx) {
        return good.flux(ctx).map(e -> {
          if (e.index() == failAt) {
            throw new IllegalStateException("row " + failAt + " is broken");
          }
          return e;
        });
      }

      @Override
      public Schema schema() {
        return schema;
      }
    }
    return new Failing();
  }

  @ParameterizedTest
  @ValueSource(strings = {"npy", "shards", "parquet", "arrow"})
  void aFailingSourceLeavesNothingAtThePathAndNoTemporary(String format) throws Exception {
    Path out = dir.resolve("out");
    assertThatThrownBy(() -> Formats.named(format).write(failingAt(5000, 4321), out, WriteOptions.defaults()
        .withNumShards(2).withRowGroupBytes(4096)))
        .isInstanceOf(IllegalStateException.class).hasMessage("row 4321 is broken");
    assertEquals(List.of(), names());
  }

  @ParameterizedTest
  @ValueSource(strings = {"npy", "shards", "parquet", "arrow"})
  void failNeverReplacesAndOfConcurrentWritersExactlyOneWins(String format) throws Exception {
    DatasetFormat f = Formats.named(format);
    Path out = dir.resolve("out");
    WriteOptions fail = WriteOptions.defaults().withExisting(ExistingOutput.FAIL);
    int writers = 4;
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Boolean>> results = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      long seed = w;
      results.add(pool.submit(() -> {
        go.await();
        try {
          f.write(Datasets.synthetic(3000, 4, seed), out, fail);
          return true;
        } catch (DatasetIOException e) {
          assertThat(e).hasCauseInstanceOf(FileAlreadyExistsException.class).hasMessage(out + ": already exists");
          return false;
        }
      }));
    }
    go.countDown();
    int won = 0;
    for (Future<Boolean> r : results) {
      won += r.get(2, TimeUnit.MINUTES) ? 1 : 0;
    }
    pool.shutdown();
    assertEquals(1, won);
    assertEquals(List.of("out"), names(), "the losers' temporaries are deleted");
    String before = sum(out);
    assertThatThrownBy(() -> f.write(Datasets.synthetic(10, 4, 99), out, fail)).isInstanceOf(DatasetIOException.class)
        .hasCauseInstanceOf(FileAlreadyExistsException.class);
    assertEquals(before, sum(out));
    f.write(Datasets.synthetic(10, 4, 99), out, WriteOptions.defaults());
    assertEquals(Checksums.sha256(Datasets.synthetic(10, 4, 99)), sum(out));
    assertEquals(List.of("out"), names());
  }

  @ParameterizedTest
  @ValueSource(strings = {"npy", "shards", "parquet", "arrow"})
  void theNextWriteRemovesTheTemporaryOfADeadWriter(String format) throws Exception {
    Process gone = new ProcessBuilder("true").start();
    assertThat(gone.waitFor(1, TimeUnit.MINUTES)).isTrue();
    Path dead = dir.resolve(".out.tmp-" + gone.pid() + "-1a2b3c");
    Path live = dir.resolve(".out.tmp-" + ProcessHandle.current().pid() + "-4d5e6f");
    Files.createDirectories(dead.resolve("sub"));
    Files.writeString(dead.resolve("sub").resolve(".shard-00000.shard.tmp"), "partial");
    Files.writeString(live, "another thread's write in progress");
    Formats.named(format).write(Datasets.synthetic(10, 4, 1), dir.resolve("out"), WriteOptions.defaults());
    assertEquals(List.of(live.getFileName().toString(), "out"), names());
  }
}
