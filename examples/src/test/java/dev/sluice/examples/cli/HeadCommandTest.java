package dev.sluice.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.parquet.internal.PageCodecs;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice head}: the first rows as a table or as JSON lines. */
@ExtendWith(NoLeaks.class)
class HeadCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  private static CliRun ok(String... args) {
    CliRun r = CliRun.of(args);
    assertThat(r.exitCode()).as(String.join(" ", args) + ": " + r.err()).isZero();
    assertThat(r.err()).isEmpty();
    return r;
  }

  private static List<JsonNode> jsonLines(CliRun r) throws Exception {
    List<JsonNode> rows = new ArrayList<>();
    for (String line : r.out().strip().split("\n")) {
      if (!line.isEmpty()) {
        rows.add(JSON.readTree(line));
      }
    }
    return rows;
  }

  @Test
  void npyRowsAsATableAndAsJsonAgreeWithShardsOfTheSameData() throws Exception {
    Path npy = dir.resolve("n");
    ok("generate", npy.toString(), "--rows", "50", "--dim", "10", "--seed", "4");
    Path shards = dir.resolve("s");
    ok("generate", shards.toString(), "--rows", "50", "--dim", "10", "--seed", "4", "--format", "shards");

    String[] table = ok("head", npy.toString()).out().split("\n");
    assertThat(table).hasSize(11);
    assertThat(table[0].split("\\s+")).containsExactly("#", "label", "x");
    for (int i = 1; i <= 10; i++) {
      String[] cells = table[i].split("\\s+", 3);
      assertThat(cells[0]).isEqualTo(String.valueOf(i - 1));
      assertThat(cells[1]).isEqualTo(String.valueOf(i - 1)); // label = the row index
      assertThat(cells[2]).startsWith("[").endsWith(", …]");
      assertThat(cells[2].split(", ")).as("8 values, then …").hasSize(9);
    }

    List<JsonNode> rows = jsonLines(ok("head", npy.toString(), "-n", "3", "--json"));
    assertThat(rows).hasSize(3);
    for (int i = 0; i < 3; i++) {
      assertThat(rows.get(i).get("label").asLong()).isEqualTo(i);
      assertThat(rows.get(i).get("x").size()).isEqualTo(10);
      assertThat(rows.get(i).get("x").get(0).isNumber()).isTrue();
    }
    assertThat(jsonLines(ok("head", shards.toString(), "-n", "3", "--json"))).isEqualTo(rows);
    // the table shows the same first values as the JSON
    assertThat(table[1]).contains("[" + rows.get(0).get("x").get(0).floatValue() + ", ");
  }

  @Test
  void moreRowsThanTheDatasetHasPrintsThemAll() throws Exception {
    Path npy = dir.resolve("n");
    ok("generate", npy.toString(), "--rows", "4", "--dim", "2");
    assertThat(ok("head", npy.toString(), "-n", "100").out().strip().split("\n")).hasSize(5);
    assertThat(jsonLines(ok("head", npy.toString(), "-n", "100", "--json"))).hasSize(4);
    assertThat(ok("head", npy.toString(), "-n", "0", "--json").out()).isEmpty();
  }

  @Test
  void columnsSelectTheFieldsShown() throws Exception {
    Path npy = dir.resolve("n");
    ok("generate", npy.toString(), "--rows", "5", "--dim", "2");
    List<JsonNode> rows = jsonLines(ok("head", npy.toString(), "--columns", "label", "--json"));
    assertThat(rows).hasSize(5);
    for (JsonNode r : rows) {
      assertThat(r.fieldNames()).toIterable().containsExactly("label");
    }
    assertThat(ok("head", npy.toString(), "--columns", "label").out().split("\n")[0].split("\\s+"))
        .containsExactly("#", "label");
  }

  @Test
  void shuffledRowsComeInTheOrderReadDelivers() throws Exception {
    Path npy = dir.resolve("n");
    ok("generate", npy.toString(), "--rows", "200", "--dim", "2");
    String[] read = ok("read", npy.toString(), "--shuffle", "--seed", "9", "--print-indices", "--prefetch", "0")
        .out().strip().split("\n");
    List<JsonNode> rows = jsonLines(ok("head", npy.toString(), "--shuffle", "--seed", "9", "-n", "12", "--json"));
    assertThat(rows).hasSize(12);
    List<Long> expected = new ArrayList<>();
    List<Long> got = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      expected.add(Long.parseLong(read[i].split(" ")[1]));
      got.add(rows.get(i).get("label").asLong()); // label = the source index
    }
    assertThat(got).isEqualTo(expected).isNotEqualTo(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L));
    String[] table = ok("head", npy.toString(), "--shuffle", "--seed", "9", "-n", "12").out().split("\n");
    for (int i = 0; i < 12; i++) {
      assertThat(table[i + 1].split("\\s+")[0]).isEqualTo(String.valueOf(expected.get(i)));
    }
  }

  @Test
  void nanAndInfinityAreStringsInJsonAndNumbersStayExact() throws Exception {
    Path d = dir.resolve("f");
    Files.createDirectories(d);
    float[] values = {1.5f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 0.1f};
    String header = "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }";
    int total = 10 + header.length() + 1;
    header = header + " ".repeat((64 - total % 64) % 64) + "\n";
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    b.write(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0});
    b.write(header.length() & 0xff);
    b.write(header.length() >> 8);
    b.write(header.getBytes(StandardCharsets.US_ASCII));
    ByteBuffer data = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
    for (float v : values) {
      data.putFloat(v);
    }
    b.write(data.array());
    Files.write(d.resolve("v.npy"), b.toByteArray());

    List<JsonNode> rows = jsonLines(ok("head", d.toString(), "--json"));
    assertThat(rows).hasSize(5);
    assertThat(rows.get(0).get("v").floatValue()).isEqualTo(1.5f);
    assertThat(rows.get(1).get("v").asText()).isEqualTo("NaN");
    assertThat(rows.get(2).get("v").asText()).isEqualTo("Infinity");
    assertThat(rows.get(3).get("v").asText()).isEqualTo("-Infinity");
    assertThat(rows.get(4).get("v").isNumber()).isTrue();
    assertThat(rows.get(4).get("v").floatValue()).isEqualTo(0.1f);
  }

  /** id, a list of strings with null elements (row 2: null, row 3: empty), a nullable double (null on odd rows). */
  private Path parquetWithNulls(int rows) throws Exception {
    MessageType schema = MessageTypeParser.parseMessageType("""
        message m {
          required int64 id;
          optional group tags (LIST) { repeated group list { optional binary element (STRING); } }
          optional double score;
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
            tags.addGroup(0).add(0, "t\"" + i);
            tags.addGroup(0);
          }
        }
        if (i % 2 == 0) {
          g.add("score", i + 0.25);
        }
        w.write(g);
      }
    }
    return f;
  }

  @Test
  void parquetNullsAndListsShowAsNullAndNestedValues() throws Exception {
    Path f = parquetWithNulls(6);
    List<JsonNode> rows = jsonLines(ok("head", f.toString(), "--json"));
    assertThat(rows).hasSize(6);
    for (int i = 0; i < 6; i++) {
      JsonNode r = rows.get(i);
      assertThat(r.get("id").asLong()).isEqualTo(i);
      if (i == 2) {
        assertThat(r.get("tags").isNull()).isTrue();
      } else if (i == 3) {
        assertThat(r.get("tags").isArray()).isTrue();
        assertThat(r.get("tags").size()).isZero();
      } else {
        assertThat(r.get("tags").size()).isEqualTo(2);
        assertThat(r.get("tags").get(0).asText()).isEqualTo("t\"" + i);
        assertThat(r.get("tags").get(1).isNull()).isTrue();
      }
      if (i % 2 == 0) {
        assertThat(r.get("score").doubleValue()).isEqualTo(i + 0.25);
      } else {
        assertThat(r.get("score").isNull()).as("row %d", i).isTrue();
      }
    }

    String[] table = ok("head", f.toString()).out().split("\n");
    assertThat(table).hasSize(7);
    assertThat(table[0].split("\\s+")).containsExactly("#", "id", "tags", "score");
    assertThat(table[1]).contains("[\"t\\\"0\", null]").contains("0.25");
    assertThat(table[2]).endsWith("null");
    assertThat(table[3].split("\\s+")[2]).isEqualTo("null");
    assertThat(table[4].split("\\s+")[2]).isEqualTo("[]");
    // aligned: every row's third column starts where the header's does
    int at = table[0].indexOf("tags");
    for (int i = 1; i < table.length; i++) {
      assertThat(table[i].charAt(at - 1)).isEqualTo(' ');
      assertThat(table[i].charAt(at)).isNotEqualTo(' ');
    }
  }

  @Test
  void aMissingPathExitsTwoWithOneLine() {
    Path missing = dir.resolve("nope");
    CliRun r = CliRun.of("head", missing.toString());
    assertThat(r.exitCode()).isEqualTo(2);
    assertThat(r.err().strip().split("\n")).hasSize(1);
    assertThat(r.err()).startsWith("sluice: ").contains(missing.toString());
    CliRun negative = CliRun.of("head", missing.toString(), "-n", "-1");
    assertThat(negative.exitCode()).isEqualTo(2);
    assertThat(negative.err()).startsWith("sluice: ").contains("-n");
  }
}
