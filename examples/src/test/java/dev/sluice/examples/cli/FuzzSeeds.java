package dev.sluice.examples.cli;

import dev.sluice.io.parquet.internal.PageCodecs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;

/**
 * The small valid datasets the fuzz suite mutates, one per format and layout, written with the
 * command line's {@code generate} and {@code convert} and with parquet-java's example writer.
 */
final class FuzzSeeds {
  private FuzzSeeds() {}

  /** How a seed is stored, which decides the field edits a mutation may make. */
  enum Kind { NPY, NPY_STACK, DIRECTORY, SHARDS, PARQUET, ARROW_FILE, ARROW_STREAM }

  /**
   * A valid dataset: its name, kind, the files of it a mutation may change (relative to
   * {@code root}), the path given to the command line (relative to {@code root}; empty for the
   * directory itself), the options every command gets ({@code --format}), and what
   * {@code checksum} and {@code read --json} print for it.
   */
  record Seed(String name, Kind kind, Path root, List<String> files, String target, List<String> options, String sha,
      long examples, long bytes) {
    /** Parquet and Arrow read their window shuffle in batches. */
    boolean columnar() {
      return kind == Kind.PARQUET || kind == Kind.ARROW_FILE || kind == Kind.ARROW_STREAM;
    }

    /** Formats whose files carry checksums: a changed byte must never read back as other values. */
    boolean checksummed() {
      return kind == Kind.SHARDS;
    }
  }

  /** Writes every seed under {@code dir}. */
  static List<Seed> write(Path dir) throws IOException {
    List<Seed> seeds = new ArrayList<>();
    Path npy = dir.resolve("npy");
    ok("generate", npy.toString(), "--rows", "48", "--dim", "3", "--seed", "7");
    seeds.add(seed("npy", Kind.NPY, npy, List.of("x.npy", "label.npy"), ""));

    Path stack = dir.resolve("npy-stack");
    Files.createDirectories(stack);
    int[] chunkRows = {20, 16, 12};
    for (int c = 0; c < chunkRows.length; c++) {
      Path g = dir.resolve("stack-src-" + c);
      ok("generate", g.toString(), "--rows", String.valueOf(chunkRows[c]), "--dim", "3", "--seed", String.valueOf(c));
      Files.copy(g.resolve("x.npy"), stack.resolve(c + ".npy"));
    }
    Files.writeString(stack.resolve("metadata.json"), """
        {"dtype": "float32", "dataset_len": 48, "num_shards": 3, "x_shape": [48, 3], "axis": 0}
        """);
    seeds.add(seed("npy-stack", Kind.NPY_STACK, stack, List.of("0.npy", "1.npy", "2.npy", "metadata.json"), ""));

    Path samples = dir.resolve("directory");
    Files.createDirectories(samples);
    List<String> sampleFiles = new ArrayList<>();
    for (int c = 0; c < 5; c++) {
      Path g = dir.resolve("sample-src-" + c);
      ok("generate", g.toString(), "--rows", String.valueOf(1 + c * 3), "--dim", "2", "--seed", String.valueOf(c));
      String name = "sample-" + c + ".npy";
      Files.copy(g.resolve("x.npy"), samples.resolve(name));
      sampleFiles.add(name);
    }
    seeds.add(seed("directory", Kind.DIRECTORY, samples, sampleFiles, "", List.of("--format", "directory")));

    Path pqNullable = parquet(dir.resolve("pq-nullable.parquet"), NULLABLE, CompressionCodecName.SNAPPY,
        WriterVersion.PARQUET_1_0, false, FuzzSeeds::nullableRow);
    Path shards = dir.resolve("shards");
    ok("convert", pqNullable.toString(), shards.toString(), "--to", "shards", "--num-shards", "3");
    List<String> shardFiles = new ArrayList<>(List.of("metadata.json"));
    try (var files = Files.list(shards)) {
      files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".shard")).sorted().forEach(shardFiles::add);
    }
    seeds.add(seed("shards", Kind.SHARDS, shards, shardFiles, ""));

    Path pqFlat = dir.resolve("pq-flat.parquet");
    ok("generate", pqFlat.toString(), "--rows", "64", "--dim", "3", "--format", "parquet", "--row-group-size", "512");
    seeds.add(file("parquet-flat", Kind.PARQUET, pqFlat));
    seeds.add(file("parquet-nullable-snappy", Kind.PARQUET, pqNullable));
    seeds.add(file("parquet-list-zstd", Kind.PARQUET, parquet(dir.resolve("pq-list.parquet"), LISTS,
        CompressionCodecName.ZSTD, WriterVersion.PARQUET_1_0, false, FuzzSeeds::listRow)));
    seeds.add(file("parquet-dictionary", Kind.PARQUET, parquet(dir.resolve("pq-dict.parquet"), NULLABLE,
        CompressionCodecName.UNCOMPRESSED, WriterVersion.PARQUET_1_0, true, FuzzSeeds::nullableRow)));
    seeds.add(file("parquet-v2-pages", Kind.PARQUET, parquet(dir.resolve("pq-v2.parquet"), LISTS,
        CompressionCodecName.SNAPPY, WriterVersion.PARQUET_2_0, true, FuzzSeeds::listRow)));

    Path arrowFile = dir.resolve("a.arrow");
    ok("convert", pqNullable.toString(), arrowFile.toString(), "--to", "arrow");
    seeds.add(file("arrow-file", Kind.ARROW_FILE, arrowFile));
    Path arrowZstd = dir.resolve("z.arrow");
    ok("convert", npy.toString(), arrowZstd.toString(), "--to", "arrow", "--codec", "zstd");
    seeds.add(file("arrow-file-zstd", Kind.ARROW_FILE, arrowZstd));
    Path arrowStream = dir.resolve("s.arrows");
    ok("convert", dir.resolve("pq-list.parquet").toString(), arrowStream.toString(), "--to", "arrow");
    seeds.add(file("arrow-stream", Kind.ARROW_STREAM, arrowStream));
    return seeds;
  }

  private static Seed file(String name, Kind kind, Path file) {
    return seed(name, kind, file.getParent(), List.of(file.getFileName().toString()), file.getFileName().toString());
  }

  private static Seed seed(String name, Kind kind, Path root, List<String> files, String target) {
    return seed(name, kind, root, files, target, List.of());
  }

  private static Seed seed(String name, Kind kind, Path root, List<String> files, String target, List<String> options) {
    Path path = target.isEmpty() ? root : root.resolve(target);
    List<String> checksum = new ArrayList<>(List.of("checksum", path.toString()));
    checksum.addAll(options);
    List<String> read = new ArrayList<>(List.of("read", path.toString(), "--json"));
    read.addAll(options);
    String sha = ok(checksum.toArray(String[]::new)).strip();
    long[] counts = CliFuzzTest.examplesAndBytes(CliFuzzTest.lastLine(ok(read.toArray(String[]::new))));
    return new Seed(name, kind, root, files, target, List.copyOf(options), sha, counts[0], counts[1]);
  }

  private static String ok(String... args) {
    return CliRunner.run(args);
  }

  static final MessageType NULLABLE = MessageTypeParser.parseMessageType("""
      message nullable {
        required int64 id;
        optional int32 small;
        optional float f;
        optional binary s (STRING);
        required double d;
        optional boolean flag;
      }
      """);

  static final MessageType LISTS = MessageTypeParser.parseMessageType("""
      message lists {
        required int64 id;
        optional group v (LIST) { repeated group list { required float element; } }
        optional group tags (LIST) { repeated group list { optional binary element (STRING); } }
        optional int64 n;
      }
      """);

  private interface Row {
    void fill(Group g, int i);
  }

  private static void nullableRow(Group g, int i) {
    g.append("id", (long) i).append("d", i * 0.5);
    if (i % 4 != 1) {
      g.append("small", i % 5);
    }
    if (i % 3 != 2) {
      g.append("f", i * 0.25f);
    }
    if (i % 5 != 3) {
      g.append("s", "s" + (i % 6));
    }
    if (i % 7 != 0) {
      g.append("flag", i % 2 == 0);
    }
  }

  private static void listRow(Group g, int i) {
    g.append("id", (long) i);
    if (i % 6 != 5) {
      Group v = g.addGroup("v");
      for (int k = 0; k < i % 4; k++) {
        v.addGroup("list").append("element", i + k / 10f);
      }
    }
    if (i % 5 != 4) {
      Group tags = g.addGroup("tags");
      for (int k = 0; k < i % 3; k++) {
        Group e = tags.addGroup("list");
        if ((i + k) % 4 != 0) {
          e.append("element", "t" + (i % 7));
        }
      }
    }
    if (i % 3 != 0) {
      g.append("n", (long) i * i);
    }
  }

  /** 60 rows in row groups of 25 and pages of 10 rows. */
  private static Path parquet(Path f, MessageType schema, CompressionCodecName codec, WriterVersion version,
      boolean dictionary, Row row) throws IOException {
    try (ParquetWriter<Group> w = ExampleParquetWriter.builder(new LocalOutputFile(f))
        .withConf(new PlainParquetConfiguration())
        .withCodecFactory(new PageCodecs())
        .withType(schema)
        .withExtraMetaData(Map.of())
        .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
        .withCompressionCodec(codec)
        .withWriterVersion(version)
        .withDictionaryEncoding(dictionary)
        .withRowGroupRowCountLimit(25)
        .withPageRowCountLimit(10)
        .build()) {
      SimpleGroupFactory groups = new SimpleGroupFactory(schema);
      for (int i = 0; i < 60; i++) {
        Group g = groups.newGroup();
        row.fill(g, i);
        w.write(g);
      }
    }
    return f;
  }
}
