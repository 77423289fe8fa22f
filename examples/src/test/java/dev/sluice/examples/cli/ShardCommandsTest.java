package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.DType;
import dev.sluice.core.Example;
import dev.sluice.core.HasSchema;
import dev.sluice.core.RandomAccessDataset;
import dev.sluice.core.Schema;
import dev.sluice.core.Shape;
import dev.sluice.core.Tensor;
import dev.sluice.core.TensorSpec;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.WriteOptions;
import dev.sluice.io.parquet.ParquetFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code convert}, {@code generate}, {@code inspect}, {@code checksum}, {@code read} and {@code bench} over shards and directories. */
@ExtendWith(NoLeaks.class)
class ShardCommandsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private static CliRun ok(String... args) {
    CliRun r = CliRun.of(args);
    assertThat(r.exitCode()).as(String.join(" ", args) + ": " + r.err()).isZero();
    assertThat(r.err()).as("stderr of " + String.join(" ", args)).isEmpty();
    return r;
  }

  private static String checksum(Path p, String... more) {
    List<String> args = new ArrayList<>(List.of("checksum", p.toString()));
    args.addAll(List.of(more));
    String sha = ok(args.toArray(new String[0])).out().strip();
    assertThat(sha).matches("[0-9a-f]{64}");
    return sha;
  }

  private static void assertBadInput(CliRun r, String... fragments) {
    assertThat(r.exitCode()).as(r.toString()).isEqualTo(2);
    String[] lines = r.err().strip().split("\n");
    assertThat(lines).as("one line on stderr: " + r.err()).hasSize(1);
    assertThat(lines[0]).startsWith("sluice: ").contains(fragments);
  }

  private static Map<String, byte[]> files(Path d) throws IOException {
    Map<String, byte[]> out = new TreeMap<>();
    try (Stream<Path> s = Files.list(d)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        out.put(p.getFileName().toString(), Files.readAllBytes(p));
      }
    }
    return out;
  }

  private static String lastLine(String out) {
    String[] lines = out.strip().split("\n");
    return lines[lines.length - 1];
  }

  @Test
  void npyToEightShardsOnTwoWorkersKeepsTheChecksumAndTheWorkerCountDoesNotChangeTheBytes() throws Exception {
    Path d = dir.resolve("d");
    ok("generate", d.toString(), "--rows", "10000", "--dim", "16", "--seed", "3");
    Path x = d.resolve("x.npy");
    Path two = dir.resolve("two");
    CliRun c = ok("convert", x.toString(), two.toString(), "--to", "shards", "--num-shards", "8", "--workers", "2");
    assertThat(c.out()).contains("converted 10000 rows", "(npy)", "as shards (8 shards, 2 workers)");
    assertThat(checksum(two)).isEqualTo(checksum(x));

    Path one = dir.resolve("one");
    ok("convert", x.toString(), one.toString(), "--to", "shards", "--num-shards", "8", "--workers", "1");
    Map<String, byte[]> a = files(one);
    Map<String, byte[]> b = files(two);
    assertThat(a.keySet()).hasSize(9).isEqualTo(b.keySet());
    a.forEach((name, bytes) -> assertThat(b.get(name)).as(name).isEqualTo(bytes));

    JsonNode info = JSON.readTree(ok("inspect", two.toString()).out());
    assertThat(info.get("format").asText()).isEqualTo("shards");
    assertThat(info.get("rows").asLong()).isEqualTo(10000);
    assertThat(info.get("splits").asInt()).isEqualTo(8);
    assertThat(info.get("fields").get(0).get("name").asText()).isEqualTo("x");
    assertThat(info.get("fields").get(0).get("shape").get(0).asInt()).isEqualTo(16);

    // and back: shards -> npy directory with the same checksum (both fields)
    Path back = dir.resolve("back");
    ok("convert", d.toString(), dir.resolve("both").toString(), "--to", "shards", "--num-shards", "3");
    ok("convert", dir.resolve("both").toString(), back.toString(), "--to", "npy");
    assertThat(checksum(back)).isEqualTo(checksum(d));
    CliRun verified = CliRun.of("checksum", dir.resolve("both").toString(), "--verify");
    assertThat(verified.exitCode()).as(verified.err()).isZero();
    assertThat(verified.out()).as("stdout holds only the checksum").isEqualTo(checksum(d) + System.lineSeparator());
    long shardBytes = 0;
    try (var files = Files.list(dir.resolve("both"))) {
      for (Path p : files.filter(p -> p.toString().endsWith(".shard")).toList()) {
        shardBytes += Files.size(p);
      }
    }
    assertThat(verified.err().lines()).as(verified.err()).hasSize(1);
    assertThat(verified.err().strip()).matches("verified 3 shard files \\(\\d+ blocks, "
        + java.util.regex.Pattern.quote(ChecksumCommand.mebibytes(shardBytes)) + "\\) against their CRC32C");
    int blocks = Integer.parseInt(verified.err().replaceAll("(?s).*\\((\\d+) blocks.*", "$1"));
    assertThat(blocks).as("at least one block per field per shard").isGreaterThanOrEqualTo(3 * 2);
  }

  @Test
  void npyStackToShards() throws Exception {
    Path d = dir.resolve("d");
    ok("generate", d.toString(), "--rows", "777", "--dim", "5");
    Path stack = dir.resolve("stack");
    Files.createDirectories(stack);
    for (int k = 0; k < 3; k++) {
      Files.copy(d.resolve("x.npy"), stack.resolve(k + ".npy"));
    }
    Path out = dir.resolve("out");
    ok("convert", stack.toString(), out.toString(), "--to", "shards", "--num-shards", "4", "--workers", "2");
    assertThat(checksum(out)).isEqualTo(checksum(stack));
    assertThat(JSON.readTree(ok("inspect", out.toString()).out()).get("rows").asLong()).isEqualTo(3 * 777);
  }

  /** Lists of tokens, nullable strings and a label, as a tokenizer's output would hold them. */
  private record Tokens(Schema schema, List<Example> rows) implements RandomAccessDataset<Example>, HasSchema {
    static Tokens generate(int n, long seed) {
      Schema schema = Schema.of(new TensorSpec("tokens", DType.INT32, Shape.of(-1)),
          new TensorSpec("text", DType.STRING, Shape.scalar(), true),
          new TensorSpec("label", DType.INT64, Shape.scalar()));
      List<Example> rows = new ArrayList<>(n);
      SplittableRandom rnd = new SplittableRandom(seed);
      for (int i = 0; i < n; i++) {
        int[] tokens = rnd.ints(rnd.nextInt(60), 0, 50_000).toArray();
        Example.Builder e = Example.builder(i).put("tokens", Tensor.of(tokens)).put("label", Tensor.scalar((long) i % 7));
        if (rnd.nextInt(10) == 0) {
          e.putNull("text");
        } else {
          e.put("text", Tensor.ofString("sentence " + i + " with " + tokens.length + " tokens, é"));
        }
        rows.add(e.build());
      }
      return new Tokens(schema, rows);
    }

    @Override
    public long size() {
      return rows.size();
    }

    @Override
    public Example get(long index) {
      return rows.get((int) index);
    }
  }

  @Test
  void variableLengthParquetToShardsKeepsTheChecksum() throws Exception {
    Path pq = dir.resolve("tokens.parquet");
    new ParquetFormat().write(Tokens.generate(3000, 5), pq, WriteOptions.defaults().withRowGroupBytes(32 << 10));
    JsonNode pqInfo = JSON.readTree(ok("inspect", pq.toString()).out());
    assertThat(pqInfo.get("splits").asInt()).as("several row groups").isGreaterThan(2);
    Path out = dir.resolve("out");
    ok("convert", pq.toString(), out.toString(), "--to", "shards", "--num-shards", "8", "--workers", "2");
    assertThat(checksum(out)).isEqualTo(checksum(pq));
    assertThat(checksum(out, "--columns", "tokens")).isEqualTo(checksum(pq, "--columns", "tokens"));
    Path one = dir.resolve("one");
    ok("convert", pq.toString(), one.toString(), "--to", "shards", "--num-shards", "8", "--workers", "1");
    Map<String, byte[]> a = files(one);
    Map<String, byte[]> b = files(out);
    assertThat(a.keySet()).isEqualTo(b.keySet());
    a.forEach((name, bytes) -> assertThat(b.get(name)).as(name).isEqualTo(bytes));

    JsonNode fields = JSON.readTree(ok("inspect", out.toString()).out()).get("fields");
    assertThat(fields.get(0).get("shape").get(0).asInt()).isEqualTo(-1);
    assertThat(fields.get(1).get("nullable").asBoolean()).isTrue();
    CliRun read = ok("read", out.toString(), "--shuffle", "--batch", "64", "--json");
    assertThat(JSON.readTree(lastLine(read.out())).get("examples").asLong()).isEqualTo(3000);
    CliRun bench = ok("bench", out.toString(), "--shuffle", "--batch", "128", "--epochs", "1", "--json");
    assertThat(JSON.readTree(lastLine(bench.out())).get("examples").asLong()).isEqualTo(3000);
  }

  @Test
  void generateShardsAndReadThem() throws Exception {
    Path s = dir.resolve("s");
    ok("generate", s.toString(), "--rows", "500", "--dim", "4", "--format", "shards", "--seed", "2");
    Path n = dir.resolve("n");
    ok("generate", n.toString(), "--rows", "500", "--dim", "4", "--seed", "2");
    assertThat(checksum(s)).isEqualTo(checksum(n));
    CliRun indices = ok("read", s.toString(), "--batch", "100", "--print-indices");
    String[] lines = indices.out().strip().split("\n");
    assertThat(lines).hasSize(5);
    assertThat(lines[0]).startsWith("0 0 1 2 3");
    CliRun bench = ok("bench", s.toString(), "--epochs", "1", "--json");
    assertThat(JSON.readTree(lastLine(bench.out())).get("examples").asLong()).isEqualTo(500);
  }

  @Test
  void aDirectoryOfFilesConvertsToShards() throws Exception {
    Path files = dir.resolve("files");
    Files.createDirectories(files);
    SplittableRandom rnd = new SplittableRandom(1);
    for (int i = 0; i < 40; i++) {
      byte[] b = new byte[rnd.nextInt(300)];
      rnd.nextBytes(b);
      Files.write(files.resolve(String.format("img-%03d.bin", i)), b);
    }
    assertBadInput(CliRun.of("inspect", files.toString()), "not a recognized dataset");
    JsonNode info = JSON.readTree(ok("inspect", files.toString(), "--format", "directory").out());
    assertThat(info.get("rows").asLong()).isEqualTo(40);
    assertThat(info.get("fields").get(0).get("dtype").asText()).isEqualTo("bytes");
    Path out = dir.resolve("out");
    ok("convert", files.toString(), out.toString(), "--format", "directory", "--to", "shards", "--num-shards", "3");
    assertThat(checksum(out)).isEqualTo(checksum(files, "--format", "directory"));
    CliRun read = ok("read", files.toString(), "--format", "directory", "--shuffle", "--batch", "8", "--json");
    assertThat(JSON.readTree(lastLine(read.out())).get("examples").asLong()).isEqualTo(40);
    assertThat(ok("bench", files.toString(), "--format", "directory", "--epochs", "1", "--json").exitCode()).isZero();
  }

  @Test
  void convertRefusesAnExistingOutputWithoutForce() throws Exception {
    Path d = dir.resolve("d");
    ok("generate", d.toString(), "--rows", "50", "--dim", "2");
    Path out = dir.resolve("out");
    ok("convert", d.toString(), out.toString(), "--to", "shards", "--num-shards", "4");
    assertBadInput(CliRun.of("convert", d.toString(), out.toString(), "--to", "shards"), out.toString(), "exists",
        "--force");
    ok("convert", d.toString(), out.toString(), "--to", "shards", "--num-shards", "2", "--force");
    assertThat(files(out).keySet()).containsExactly("metadata.json", "shard-00000.shard", "shard-00001.shard");
    assertThat(checksum(out)).isEqualTo(checksum(d));
    Files.createDirectories(dir.resolve("empty"));
    ok("convert", d.toString(), dir.resolve("empty").toString(), "--to", "shards");
    assertBadInput(CliRun.of("convert", d.toString(), dir.resolve("x").toString(), "--to", "nope"), "nope");
    assertBadInput(CliRun.of("convert", d.toString(), dir.resolve("y").toString(), "--to", "shards", "--num-shards", "0"),
        "--num-shards");
    assertBadInput(CliRun.of("convert", dir.resolve("missing").toString(), dir.resolve("z").toString(), "--to", "shards"),
        "missing", "no such file");
    assertBadInput(CliRun.of("checksum", d.toString(), "--verify"),
        "sluice: note: " + d, "the npy format stores no checksums; nothing to verify");
  }

  @Test
  void badShardSetsExitTwoWithOneLine() throws Exception {
    Path s = dir.resolve("s");
    ok("generate", dir.resolve("d").toString(), "--rows", "300", "--dim", "3");
    ok("convert", dir.resolve("d").toString(), s.toString(), "--to", "shards", "--num-shards", "3");
    Path shard = s.resolve("shard-00001.shard");
    byte[] bytes = Files.readAllBytes(shard);

    // a changed value: opening is fine, every read of the changed block finds it before delivering a row
    try (FileChannel ch = FileChannel.open(shard, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[] {(byte) (bytes[200] ^ 1)}), 200);
    }
    String[] mismatch = {"shard-00001.shard", "block 0 (field 'label' values, bytes 64..864)",
        "checksum mismatch (expected crc32c:", ", found crc32c:"};
    assertBadInput(CliRun.of("checksum", s.toString()), mismatch);
    assertBadInput(CliRun.of("checksum", s.toString(), "--verify"), mismatch);
    assertBadInput(CliRun.of("read", s.toString()), mismatch);
    assertBadInput(CliRun.of("read", s.toString(), "--shuffle", "--batch", "64"), mismatch);
    assertBadInput(CliRun.of("read", s.toString(), "--columns", "x", "--batch", "10"), mismatch);
    assertBadInput(CliRun.of("bench", s.toString(), "--epochs", "1"), mismatch);
    Files.write(shard, bytes);

    Files.write(shard, java.util.Arrays.copyOf(bytes, bytes.length - 7));
    assertBadInput(CliRun.of("inspect", s.toString()), "shard-00001.shard", "truncated");
    Files.write(shard, java.util.Arrays.copyOf(bytes, bytes.length + 7));
    assertBadInput(CliRun.of("read", s.toString()), "shard-00001.shard", "extended");
    Files.delete(shard);
    assertBadInput(CliRun.of("checksum", s.toString()), "shard-00001.shard", "missing");
    assertBadInput(CliRun.of("bench", s.toString(), "--epochs", "1"), "shard-00001.shard", "missing");
  }

  @Test
  void aChangedOffsetIsAChecksumMismatchNamingTheShardAndTheBlock() throws Exception {
    Path pq = dir.resolve("t.parquet");
    new ParquetFormat().write(Tokens.generate(200, 9), pq, WriteOptions.defaults());
    Path s = dir.resolve("s");
    ok("convert", pq.toString(), s.toString(), "--to", "shards", "--num-shards", "2");
    Path shard = s.resolve("shard-00000.shard");
    // block 0 is the tokens offsets (at byte 64): row 5's end offset
    try (FileChannel ch = FileChannel.open(shard, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 1L << 33), 64 + 8 * 6);
    }
    // the changed offset is found by the block's checksum before any offset is followed
    assertBadInput(CliRun.of("checksum", s.toString()), "shard-00000.shard", "block 0 (field 'tokens' offsets",
        "checksum mismatch");
    assertBadInput(CliRun.of("read", s.toString(), "--shuffle", "--batch", "16"), "shard-00000.shard",
        "block 0 (field 'tokens' offsets", "checksum mismatch");
  }

  @Test
  void shardSetsAreWrittenWithTheUmasksPermissionsLikeTheOtherFormats() throws Exception {
    Path npy = dir.resolve("npy");
    ok("generate", npy.toString(), "--rows", "50", "--dim", "2");
    String umasked = java.nio.file.attribute.PosixFilePermissions.toString(
        Files.getPosixFilePermissions(npy.resolve("x.npy")));
    Process sh = new ProcessBuilder("sh", "-c", "umask").redirectErrorStream(true).start();
    int umask = Integer.parseInt(new String(sh.getInputStream().readAllBytes()).strip(), 8);
    assertThat(sh.waitFor()).isZero();
    StringBuilder expected = new StringBuilder();
    for (int bit = 8; bit >= 0; bit--) {
      boolean set = (0666 & ~umask & (1 << bit)) != 0;
      expected.append(set ? "rwx".charAt((8 - bit) % 3) : '-');
    }
    assertThat(umasked).as("npy files get 0666 minus the umask").isEqualTo(expected.toString());
    Path generated = dir.resolve("generated");
    ok("generate", generated.toString(), "--rows", "50", "--dim", "2", "--format", "shards");
    Path converted = dir.resolve("converted");
    ok("convert", npy.toString(), converted.toString(), "--to", "shards", "--num-shards", "2");
    for (Path set : List.of(generated, converted)) {
      try (var files = Files.list(set)) {
        for (Path f : files.toList()) {
          assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(f)))
              .as(f.toString()).isEqualTo(umasked);
        }
      }
    }
  }
}
