package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.Dataset;
import dev.sluice.core.DatasetFormatException;
import dev.sluice.core.Datasets;
import dev.sluice.core.Example;
import dev.sluice.core.IoMode;
import dev.sluice.core.MemoryManager;
import dev.sluice.core.PipelineContext;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.arrow.Arrow;
import dev.sluice.io.arrow.ArrowOptions;
import dev.sluice.io.arrow.ArrowWriteOptions;
import dev.sluice.io.npy.Npy;
import dev.sluice.io.shards.Shards;
import dev.sluice.operators.EqualLength;
import dev.sluice.operators.Pipeline;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every format that offers a choice reads the same bytes through positioned reads
 * ({@link IoMode#READ}) as through its mapping: rows and batches of shuffled, sharded pipelines over
 * two epochs, element by element and gathered, and the canonical checksum; a file truncated after
 * it was opened is a typed error naming the file and the offset; positioned reads map nothing.
 */
@ExtendWith(NoLeaks.class)
class IoModeTest {
  private static final long ROWS = 301;
  @TempDir Path tmp;

  /** An npy stack of big-endian float32 rows × 3 in chunks of the given sizes (value: row * 10 + column). */
  private static Path bigEndianStack(Path dir, int... rows) throws IOException {
    Files.createDirectories(dir);
    long start = 0;
    for (int k = 0; k < rows.length; k++) {
      ByteBuffer data = ByteBuffer.allocate(rows[k] * 12).order(ByteOrder.BIG_ENDIAN);
      for (long r = start; r < start + rows[k]; r++) {
        for (int c = 0; c < 3; c++) {
          data.putFloat(r * 10 + c);
        }
      }
      String dict = "{'descr': '>f4', 'fortran_order': False, 'shape': (" + rows[k] + ", 3), }";
      int total = (10 + dict.length() + 1 + 63) / 64 * 64;
      String padded = dict + " ".repeat(total - 10 - dict.length() - 1) + "\n";
      ByteBuffer header = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
      header.put((byte) 0x93).put("NUMPY".getBytes(StandardCharsets.US_ASCII)).put((byte) 1).put((byte) 0)
          .putShort((short) (total - 10)).put(padded.getBytes(StandardCharsets.ISO_8859_1));
      byte[] file = new byte[total + data.capacity()];
      System.arraycopy(header.array(), 0, file, 0, total);
      System.arraycopy(data.array(), 0, file, total, data.capacity());
      Files.write(dir.resolve(k + ".npy"), file);
      start += rows[k];
    }
    return dir;
  }

  private static void close(Dataset<?> d) throws Exception {
    if (d instanceof AutoCloseable c) {
      c.close();
    }
  }

  /**
   * What a reader sees of {@code ds}: for ranks 0 and 1 of 2 and epochs 0 and 1, every row of
   * {@code shuffle -> shard -> batch(7)} as a copy, then every element of {@code shuffle -> shard}.
   * Checks on the way that each epoch delivers every index exactly once over the two ranks.
   */
  private static List<Example> seen(Dataset<Example> ds) {
    List<Example> out = new ArrayList<>();
    PipelineContext ctx = PipelineContext.defaults().withSeed(11);
    for (int epoch = 0; epoch < 2; epoch++) {
      List<Long> batched = new ArrayList<>();
      List<Long> elements = new ArrayList<>();
      for (int rank = 0; rank < 2; rank++) {
        Pipeline<Example> sharded = Pipeline.from(ds).shuffle().shard(2, rank, EqualLength.UNEVEN);
        for (Batch b : sharded.batch(7).flux(ctx.withEpoch(epoch)).toIterable()) {
          try (b) {
            for (int r = 0; r < b.size(); r++) {
              out.add(b.copyRow(r));
              batched.add(b.index(r));
            }
          }
        }
        for (Example e : sharded.flux(ctx.withEpoch(epoch)).toIterable()) {
          out.add(e);
          elements.add(e.index());
        }
      }
      List<Long> all = Stream.iterate(0L, i -> i + 1).limit(ROWS).toList();
      assertThat(batched).containsExactlyInAnyOrderElementsOf(all).isNotEqualTo(all);
      assertThat(elements).containsExactlyInAnyOrderElementsOf(all);
    }
    return out;
  }

  /** Reads {@code path} in both modes and checks that they agree row for row and in the checksum. */
  private static void assertModesAgree(Function<IoMode, Dataset<Example>> open) throws Exception {
    Dataset<Example> mapped = open.apply(IoMode.MMAP);
    Dataset<Example> read = open.apply(IoMode.READ);
    try {
      List<Example> viaMapping = seen(mapped);
      assertThat(seen(read)).isEqualTo(viaMapping);
      assertThat(Checksums.sha256(read)).isEqualTo(Checksums.sha256(mapped));
      RandomAccessDataset<Example> r = (RandomAccessDataset<Example>) read;
      RandomAccessDataset<Example> m = (RandomAccessDataset<Example>) mapped;
      SplittableRandom rnd = new SplittableRandom(3);
      for (int i = 0; i < 50; i++) {
        long index = rnd.nextLong(ROWS);
        assertThat(r.get(index)).isEqualTo(m.get(index));
      }
    } finally {
      close(mapped);
      close(read);
    }
    assertThat(MemoryManager.shared().outstandingBytes()).isZero();
  }

  @Test
  void npyFilesAndStacksReadTheSameBytesEitherWay() throws Exception {
    Path aligned = tmp.resolve("aligned");
    Npy.write(Datasets.synthetic(ROWS, 5, 1), aligned);
    assertModesAgree(io -> Npy.open(aligned, io));
    assertModesAgree(io -> Npy.open(aligned, 64, io)); // rows spread over many small chunks
    assertModesAgree(io -> Npy.open(aligned.resolve("x.npy"), 100, io));
    Path stack = bigEndianStack(tmp.resolve("stack"), 100, 1, 0, 150, 50);
    assertModesAgree(io -> Npy.open(stack, io));
    assertModesAgree(io -> Npy.open(stack, 36, io));
  }

  @Test
  void shardSetsReadTheSameBytesEitherWay() throws Exception {
    Path fixed = tmp.resolve("fixed");
    Shards.write(Datasets.synthetic(ROWS, 5, 2), fixed, WriteOptions.defaults().withNumShards(3));
    assertModesAgree(io -> Shards.open(fixed, io));
    assertModesAgree(io -> Shards.open(fixed, 64, io));
    Path variable = tmp.resolve("variable");
    Shards.write(BenchData.records(ROWS, 4, false, 3), variable, WriteOptions.defaults().withNumShards(2));
    assertModesAgree(io -> Shards.open(variable, io));
    assertModesAgree(io -> Shards.open(variable, 64, io));
  }

  @Test
  void arrowFilesReadTheSameBytesEitherWay() throws Exception {
    for (boolean fixedLength : new boolean[] {true, false}) {
      Path file = tmp.resolve("d-" + fixedLength + ".arrow");
      Arrow.write(BenchData.records(ROWS, 4, fixedLength, 4), file, ArrowWriteOptions.builder().batchRows(40).build());
      assertModesAgree(io -> Arrow.open(file, ArrowOptions.builder().io(io).build()));
      assertModesAgree(io -> Arrow.open(file, ArrowOptions.builder().io(io).maxChunkBytes(256).build()));
    }
  }

  @Test
  void readModeMapsNothing() throws Exception {
    Path maps = Path.of("/proc/self/maps");
    assumeTrue(Files.isReadable(maps), "needs /proc/self/maps to list the process's mappings");
    Path npy = tmp.resolve("unmapped-npy");
    Npy.write(Datasets.synthetic(ROWS, 5, 1), npy);
    Path shards = tmp.resolve("unmapped-shards");
    Shards.write(BenchData.records(ROWS, 4, false, 3), shards, WriteOptions.defaults().withNumShards(2));
    Path arrow = tmp.resolve("unmapped.arrow");
    Arrow.write(Datasets.synthetic(ROWS, 5, 1), arrow, ArrowWriteOptions.builder().batchRows(64).build());
    List<Dataset<Example>> open = List.of(Npy.open(npy, IoMode.READ), Npy.open(npy.resolve("x.npy"), IoMode.READ),
        Shards.open(shards, IoMode.READ), Arrow.open(arrow, ArrowOptions.builder().io(IoMode.READ).build()));
    try {
      for (Dataset<Example> d : open) {
        assertThat(seen(d)).hasSize((int) ROWS * 4);
        Checksums.sha256(d);
      }
      assertThat(Files.readAllLines(maps)).noneMatch(l -> l.contains(npy.toString()) || l.contains(shards.toString())
          || l.contains(arrow.toString()));
    } finally {
      for (Dataset<Example> d : open) {
        close(d);
      }
    }
  }

  /** Cuts {@code file} to {@code bytes}. */
  private static void truncate(Path file, long bytes) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(bytes);
    }
  }

  /** The error a gather of every row of {@code ds} ends with, checked to name {@code file} and a byte offset. */
  private static void assertTruncatedError(Dataset<Example> ds, Path file) {
    assertThatThrownBy(() -> Pipeline.from(ds).batch((int) ROWS).flux().doOnNext(Batch::close).blockLast())
        .isInstanceOf(DatasetFormatException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("byte ")
        .hasMessageContaining("truncated");
  }

  @Test
  void aFileTruncatedAfterItWasOpenedIsATypedErrorNamingFileAndOffset() throws Exception {
    Path npyDir = tmp.resolve("npy");
    Npy.write(Datasets.synthetic(ROWS, 5, 1), npyDir);
    Path x = npyDir.resolve("x.npy");
    Dataset<Example> npy = Npy.open(x, IoMode.READ);
    try {
      truncate(x, Files.size(x) / 2);
      assertTruncatedError(npy, x);
      assertThatThrownBy(() -> ((RandomAccessDataset<Example>) npy).get(ROWS - 1))
          .isInstanceOf(DatasetFormatException.class).hasMessageContaining(x.toString());
    } finally {
      close(npy);
    }

    Path shardDir = tmp.resolve("shards");
    Shards.write(Datasets.synthetic(ROWS, 5, 2), shardDir, WriteOptions.defaults().withNumShards(1));
    Path shard;
    try (Stream<Path> files = Files.list(shardDir)) {
      shard = files.filter(p -> !p.getFileName().toString().endsWith(".json")).findFirst().orElseThrow();
    }
    Dataset<Example> shards = Shards.open(shardDir, IoMode.READ);
    try {
      truncate(shard, Files.size(shard) / 3);
      assertTruncatedError(shards, shard);
    } finally {
      close(shards);
    }

    Path arrow = tmp.resolve("t.arrow");
    Arrow.write(Datasets.synthetic(ROWS, 5, 3), arrow, ArrowWriteOptions.builder().batchRows(100).build());
    Dataset<Example> a = Arrow.open(arrow, ArrowOptions.builder().io(IoMode.READ).build());
    try {
      truncate(arrow, Files.size(arrow) / 2);
      assertTruncatedError(a, arrow);
    } finally {
      close(a);
    }
    assertThat(MemoryManager.shared().outstandingBytes()).isZero();
  }

  @Test
  void theCommandsReadEitherWayAndReportATruncatedFileInOneLine() throws Exception {
    Path npyDir = tmp.resolve("npy");
    Npy.write(Datasets.synthetic(ROWS, 5, 1), npyDir);
    Path shardDir = tmp.resolve("shards");
    Shards.write(Datasets.synthetic(ROWS, 5, 1), shardDir, WriteOptions.defaults().withNumShards(2));
    Path arrow = tmp.resolve("d.arrow");
    Arrow.write(Datasets.synthetic(ROWS, 5, 1), arrow, ArrowWriteOptions.builder().batchRows(64).build());
    Set<String> sums = new HashSet<>();
    for (Path p : List.of(npyDir, shardDir, arrow)) {
      for (String io : List.of("mmap", "read")) {
        CliRun c = CliRun.of("checksum", p.toString(), "--io", io);
        assertThat(c.exitCode()).as(c.err()).isZero();
        sums.add(c.out().strip());
        CliRun r = CliRun.of("read", p.toString(), "--io", io, "--shuffle", "--batch", "16", "--rank", "1",
            "--world", "2", "--epochs", "2", "--json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("\"examples\":" + (ROWS + 1) / 2 * 2);
      }
    }
    assertThat(sums).hasSize(1);

    Path x = npyDir.resolve("x.npy");
    truncate(x, Files.size(x) - 7);
    CliRun bad = CliRun.of("read", x.toString(), "--io", "read");
    assertThat(bad.exitCode()).isEqualTo(2);
    assertThat(bad.err().strip().split("\n")).singleElement().satisfies(line -> assertThat(line)
        .startsWith("sluice: ").contains(x.toString()));
    CliRun wrong = CliRun.of("read", x.toString(), "--io", "fast");
    assertThat(wrong.exitCode()).isEqualTo(2);
    assertThat(wrong.err().strip()).isEqualTo("sluice: --io must be mmap or read but it was 'fast'");
  }
  @Test
  void theReadCacheBudgetChangesNoBatchAndABadOneExitsTwo() throws IOException {
    Path stack = bigEndianStack(tmp.resolve("cached"), 100, 150, 51);
    CliRun mapped = CliRun.of("read", stack.toString(), "--shuffle", "--seed", "3", "--epochs", "2", "--batch", "16",
        "--print-indices");
    assertThat(mapped.exitCode()).as(mapped.toString()).isZero();
    for (String budget : List.of("0", "1k", "1m", "1g")) {
      CliRun read = CliRun.of("read", stack.toString(), "--io", "read", "--read-cache", budget, "--shuffle", "--seed",
          "3", "--epochs", "2", "--batch", "16", "--print-indices");
      assertThat(read.exitCode()).as(read.toString()).isZero();
      assertThat(read.out()).as("--read-cache " + budget).isEqualTo(mapped.out());
    }
    CliRun bad = CliRun.of("bench", stack.toString(), "--io", "read", "--read-cache", "-1");
    assertThat(bad.exitCode()).as(bad.toString()).isEqualTo(2);
    assertThat(bad.err()).startsWith("sluice: ").contains("--read-cache");
  }

  @Test
  void thePageCacheBudgetChangesNoBatchAndABadOneExitsTwo() {
    Path parquet = tmp.resolve("paged.parquet");
    CliRun gen = CliRun.of("generate", parquet.toString(), "--rows", "3000", "--dim", "4", "--format", "parquet");
    assertThat(gen.exitCode()).as(gen.toString()).isZero();
    CliRun plain = CliRun.of("read", parquet.toString(), "--shuffle", "--seed", "5", "--batch", "64",
        "--print-indices");
    assertThat(plain.exitCode()).as(plain.toString()).isZero();
    for (String budget : List.of("0", "1k", "256m")) {
      CliRun read = CliRun.of("read", parquet.toString(), "--page-cache", budget, "--shuffle", "--seed", "5",
          "--batch", "64", "--print-indices");
      assertThat(read.exitCode()).as(read.toString()).isZero();
      assertThat(read.out()).as("--page-cache " + budget).isEqualTo(plain.out());
    }
    CliRun bad = CliRun.of("bench", parquet.toString(), "--page-cache", "-1");
    assertThat(bad.exitCode()).as(bad.toString()).isEqualTo(2);
    assertThat(bad.err()).startsWith("sluice: ").contains("--page-cache");
  }
}
