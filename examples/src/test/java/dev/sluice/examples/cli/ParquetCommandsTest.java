package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.parquet.internal.PageCodecs;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The command line over Parquet files, through the format registry. */
@ExtendWith(NoLeaks.class)
class ParquetCommandsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private static String lastLine(String out) {
    String[] lines = out.strip().split("\n");
    return lines[lines.length - 1];
  }

  /**
   * A file whose column chunk's metadata counts 1 value while its data page holds 3 (parquet-java's
   * low-level writer): every command that reads it exits 2 with one line naming the file, the row
   * group and the problem, whatever the prefetch.
   */
  @Test
  void aChunkWhosePagesDisagreeWithItsMetadataExitsTwoWithOneLine() throws Exception {
    Path f = dir.resolve("miscounted.parquet");
    MessageType schema = MessageTypeParser.parseMessageType("message m { required int32 c; }");
    org.apache.parquet.hadoop.ParquetFileWriter w = new org.apache.parquet.hadoop.ParquetFileWriter(
        new LocalOutputFile(f), schema, org.apache.parquet.hadoop.ParquetFileWriter.Mode.OVERWRITE, 1 << 20, 0);
    w.start();
    w.startBlock(1);
    w.startColumn(schema.getColumns().get(0), 1, CompressionCodecName.UNCOMPRESSED);
    byte[] values = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putInt(7).putInt(8).putInt(9).array();
    w.writeDataPage(3, 12, org.apache.parquet.bytes.BytesInput.from(values), org.apache.parquet.column.Encoding.RLE,
        org.apache.parquet.column.Encoding.RLE, org.apache.parquet.column.Encoding.PLAIN);
    w.endColumn();
    w.endBlock();
    w.end(java.util.Map.of());
    for (String[] args : new String[][] {{"read", f.toString()}, {"checksum", f.toString()},
        {"read", f.toString(), "--prefetch", "0"}, {"read", f.toString(), "--batch", "1"}}) {
      CliRun run = CliRun.of(args);
      assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
      assertThat(run.err().lines()).hasSize(1);
      assertThat(run.err()).startsWith("sluice: " + f + ", row group 0");
    }
  }

  @Test
  void generatedParquetReadsLikeTheSameDataAsNpy() throws Exception {
    Path pq = dir.resolve("d.parquet");
    Path npy = dir.resolve("d");
    CliRun gen = CliRun.of("generate", pq.toString(), "--rows", "5000", "--dim", "4", "--format", "parquet",
        "--seed", "7", "--row-group-size", "40000");
    assertThat(gen.exitCode()).as(gen.err()).isZero();
    assertThat(CliRun.of("generate", npy.toString(), "--rows", "5000", "--dim", "4", "--seed", "7").exitCode()).isZero();

    JsonNode info = JSON.readTree(CliRun.of("inspect", pq.toString()).out());
    assertThat(info.get("format").asText()).isEqualTo("parquet");
    assertThat(info.get("rows").asLong()).isEqualTo(5000);
    assertThat(info.get("splits").asInt()).as("several row groups").isGreaterThan(1);

    CliRun sumParquet = CliRun.of("checksum", pq.toString());
    CliRun sumNpy = CliRun.of("checksum", npy.toString());
    assertThat(sumParquet.exitCode()).as(sumParquet.err()).isZero();
    assertThat(sumParquet.out().strip()).matches("[0-9a-f]{64}").isEqualTo(sumNpy.out().strip());

    CliRun read = CliRun.of("read", pq.toString(), "--shuffle", "--batch", "64", "--json");
    assertThat(read.exitCode()).as(read.err()).isZero();
    assertThat(JSON.readTree(lastLine(read.out())).get("examples").asLong()).isEqualTo(5000);

    CliRun bench = CliRun.of("bench", pq.toString(), "--shuffle", "--batch", "256", "--epochs", "2", "--json");
    assertThat(bench.exitCode()).as(bench.err()).isZero();
    JsonNode b = JSON.readTree(lastLine(bench.out()));
    assertThat(b.get("recordsPerSecond").asDouble()).isPositive();
    assertThat(b.get("cpuSecondsPerMillionRecords").asDouble()).as("process CPU time has a clock tick of granularity: a short run may read 0").isNotNegative();
    assertThat(b.get("examples").asLong()).isEqualTo(2 * 5000);
  }

  /**
   * id, a list of strings with null elements, a list of lists, and a LIST group Sluice cannot read;
   * row i: id = i, tags = ["t<i>", null] (row 2: null, row 3: empty), grid = [[i], []].
   */
  private Path mixedFile(int rows) throws Exception {
    MessageType schema = MessageTypeParser.parseMessageType("""
        message m {
          required int64 id;
          optional group tags (LIST) { repeated group list { optional binary element (STRING); } }
          optional group grid (LIST) { repeated group list { optional group element (LIST) {
            repeated group list { required int32 element; } } } }
          optional group bad (LIST) { required int32 a; required int32 b; }
        }
        """);
    Path f = dir.resolve("mixed.parquet");
    SimpleGroupFactory gf = new SimpleGroupFactory(schema);
    try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new LocalOutputFile(f))
        .withConf(new PlainParquetConfiguration()).withCodecFactory(new PageCodecs()).withType(schema)
        .withCompressionCodec(CompressionCodecName.SNAPPY).build()) {
      for (int i = 0; i < rows; i++) {
        Group g = gf.newGroup();
        g.add("id", (long) i);
        if (i != 2) {
          Group tags = g.addGroup("tags");
          if (i != 3) {
            tags.addGroup(0).add(0, "t" + i);
            tags.addGroup(0);
          }
        }
        Group grid = g.addGroup("grid");
        grid.addGroup(0).addGroup(0).addGroup(0).add(0, i);
        grid.addGroup(0).addGroup(0);
        Group bad = g.addGroup("bad");
        bad.add("a", i);
        bad.add("b", i);
        w.write(g);
      }
    }
    return f;
  }

  @Test
  void columnsSelectFieldsInEveryCommandAndAnUnreadableColumnLeftOutBlocksNothing() throws Exception {
    Path f = mixedFile(10);
    CliRun all = CliRun.of("checksum", f.toString());
    assertThat(all.exitCode()).isEqualTo(2);
    assertThat(all.err().lines()).hasSize(1);
    assertThat(all.err()).startsWith("sluice: ").contains(f.toString(), "'bad'", "projection");

    CliRun ids = CliRun.of("checksum", f.toString(), "--columns", "id");
    assertThat(ids.exitCode()).as(ids.err()).isZero();
    ByteBuffer canon = ByteBuffer.allocate(8 * 10).order(ByteOrder.LITTLE_ENDIAN);
    for (long i = 0; i < 10; i++) {
      canon.putLong(i);
    }
    assertThat(ids.out().strip()).isEqualTo(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canon.array())));

    JsonNode info = JSON.readTree(CliRun.of("inspect", f.toString(), "--columns", "tags,grid,id").out());
    assertThat(info.get("fields").findValuesAsText("name")).containsExactly("tags", "grid", "id");
    assertThat(info.get("fields").get(0).get("shape").toString()).isEqualTo("[-1]");
    assertThat(info.get("fields").get(0).get("nullableElements").toString()).isEqualTo("[0]");
    assertThat(info.get("fields").get(1).get("shape").toString()).isEqualTo("[-1,-1]");
    assertThat(info.get("rows").asLong()).isEqualTo(10);

    CliRun read = CliRun.of("read", f.toString(), "--columns", "grid,tags", "--batch", "4", "--json");
    assertThat(read.exitCode()).as(read.err()).isZero();
    assertThat(JSON.readTree(lastLine(read.out())).get("examples").asLong()).isEqualTo(10);
    CliRun bench = CliRun.of("bench", f.toString(), "--columns", "tags", "--batch", "4", "--epochs", "1", "--json");
    assertThat(bench.exitCode()).as(bench.err()).isZero();
    assertThat(JSON.readTree(lastLine(bench.out())).get("examples").asLong()).isEqualTo(10);

    CliRun unknown = CliRun.of("read", f.toString(), "--columns", "nope");
    assertThat(unknown.exitCode()).isEqualTo(2);
    assertThat(unknown.err().lines()).hasSize(1);
    assertThat(unknown.err()).contains("'nope'", "id", "tags");
  }

  @Test
  void columnsWorkOnFormatsThatReadEveryField() throws Exception {
    Path npy = dir.resolve("n");
    assertThat(CliRun.of("generate", npy.toString(), "--rows", "300", "--dim", "3", "--seed", "2").exitCode()).isZero();
    CliRun label = CliRun.of("checksum", npy.toString(), "--columns", "label");
    ByteBuffer canon = ByteBuffer.allocate(8 * 300).order(ByteOrder.LITTLE_ENDIAN);
    for (long i = 0; i < 300; i++) {
      canon.putLong(i); // label = the row index
    }
    assertThat(label.out().strip()).isEqualTo(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canon.array())));
    CliRun read = CliRun.of("read", npy.toString(), "--columns", "x", "--shuffle", "--batch", "32", "--json");
    assertThat(read.exitCode()).as(read.err()).isZero();
    assertThat(JSON.readTree(lastLine(read.out())).get("bytes").asLong()).isEqualTo(300 * 3 * 4);
  }

  @Test
  void aTruncatedParquetFileExitsTwoWithOneLineNamingIt() throws Exception {
    Path pq = dir.resolve("t.parquet");
    assertThat(CliRun.of("generate", pq.toString(), "--rows", "2000", "--dim", "4", "--format", "parquet").exitCode()).isZero();
    byte[] all = Files.readAllBytes(pq);
    Files.write(pq, Arrays.copyOf(all, all.length / 2));
    for (String cmd : new String[] {"inspect", "checksum", "read"}) {
      CliRun run = CliRun.of(cmd, pq.toString());
      assertThat(run.exitCode()).as(cmd).isEqualTo(2);
      assertThat(run.err().lines()).as(cmd).hasSize(1);
      assertThat(run.err()).startsWith("sluice: ").contains(pq.toString());
    }
  }
}
