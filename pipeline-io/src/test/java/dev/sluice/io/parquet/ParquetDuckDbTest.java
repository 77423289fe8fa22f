package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.core.Batch;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.parquet.internal.ColumnPlan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.parquet.example.data.Group;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/**
 * Files written by DuckDB itself (through Node, {@link DuckDb}), covering what DuckDB writes: every
 * primitive type, decimals of each physical width, dates, times and timestamps of every unit,
 * intervals, UUIDs, enums, huge integers, long strings, geometries, variants, lists, fixed-size
 * arrays (null arrays included), structs, maps, lists of structs, nulls at every level, every codec DuckDB offers, v1
 * and v2 pages (v2 brings DELTA and BYTE_STREAM_SPLIT encodings), small and large row groups and
 * empty files. Each file is read by Sluice, batch by batch, and compared value by value with
 * parquet-java's Group reader, and its checksum with the canonical bytes of parquet-java's values.
 */
@ExtendWith(NoLeaks.class)
class ParquetDuckDbTest {
  @TempDir
  Path dir;

  private static final String PRIMITIVES = """
      SELECT i AS id,
       CASE WHEN i % 11 = 3 THEN NULL ELSE i % 2 = 0 END AS b,
       CASE WHEN i % 13 = 1 THEN NULL ELSE (i % 256 - 128)::TINYINT END AS i8,
       CASE WHEN i % 7 = 2 THEN NULL ELSE (i * 37 % 65536 - 32768)::SMALLINT END AS i16,
       CASE WHEN i % 5 = 4 THEN NULL ELSE (i * 7919 - 1000000)::INTEGER END AS i32,
       CASE WHEN i % 9 = 0 THEN NULL ELSE i * 1000000007 - 4611686018427387904 END AS i64,
       CASE WHEN i % 6 = 5 THEN NULL ELSE (i % 256)::UTINYINT END AS u8,
       CASE WHEN i % 6 = 4 THEN NULL ELSE (i * 31 % 65536)::USMALLINT END AS u16,
       CASE WHEN i % 6 = 3 THEN NULL ELSE (i * 2654435761 % 4294967296)::UINTEGER END AS u32,
       CASE WHEN i % 6 = 2 THEN NULL ELSE (18446744073709551615 - i * 3)::UBIGINT END AS u64,
       CASE WHEN i % 8 = 7 THEN NULL ELSE (i * 1.25 - 300.5)::FLOAT END AS f32,
       CASE WHEN i % 8 = 6 THEN NULL ELSE i / 7.0 - 1e10 END AS f64,
       CASE WHEN i % 4 = 1 THEN NULL ELSE 'str_' || (i % 97)::VARCHAR END AS s,
       CASE WHEN i % 3 = 1 THEN NULL ELSE 'unique_' || (i * 7919)::VARCHAR END AS s_plain,
       CASE WHEN i % 10 = 9 THEN NULL ELSE ('\\x' || lpad(to_hex(i % 65536), 4, '0'))::BLOB END AS blob
      FROM range(ROWS) t(i)""";

  private static final String TEMPORAL = """
      SELECT i AS id,
       CASE WHEN i % 7 = 0 THEN NULL ELSE DATE '1970-01-01' + (i * 37 - 20000)::INTEGER END AS d,
       CASE WHEN i % 7 = 1 THEN NULL ELSE TIME '00:00:00' + to_microseconds(i * 1234567) END AS t,
       (TIME '01:02:03' + to_microseconds(i * 1000))::TIME_NS AS t_ns,
       CASE WHEN i % 3 = 0 THEN NULL ELSE (TIME '01:02:03' + to_microseconds(i * 1000))::TIMETZ END AS t_tz,
       CASE WHEN i % 7 = 2 THEN NULL ELSE (TIMESTAMP '2001-02-03 04:05:06.789123'
         + to_microseconds(i * 86400123457))::TIMESTAMP_S END AS ts_s,
       CASE WHEN i % 7 = 3 THEN NULL ELSE (TIMESTAMP '1950-02-03 04:05:06.789123'
         + to_microseconds(i * 86400123457))::TIMESTAMP_MS END AS ts_ms,
       CASE WHEN i % 7 = 4 THEN NULL ELSE TIMESTAMP '1901-02-03 04:05:06.789123'
         + to_microseconds(i * 86400123457) END AS ts_us,
       CASE WHEN i % 7 = 5 THEN NULL ELSE (TIMESTAMP '2020-02-03 04:05:06.789123'
         + to_microseconds(i * 86400123457))::TIMESTAMP_NS END AS ts_ns,
       CASE WHEN i % 7 = 6 THEN NULL ELSE (TIMESTAMP '2020-02-03 04:05:06.789123'
         + to_microseconds(i * 3600123457))::TIMESTAMPTZ END AS ts_tz,
       CASE WHEN i % 5 = 0 THEN NULL ELSE to_months(i % 30) + to_days(i % 40) + to_microseconds(i * 1000) END AS iv
      FROM range(ROWS) t(i)""";

  private static final String DECIMALS = """
      SELECT i AS id,
       CASE WHEN i % 5 = 0 THEN NULL ELSE ((i % 9999) / 100.0 - 49)::DECIMAL(4,2) END AS d4,
       CASE WHEN i % 5 = 1 THEN NULL ELSE (i * 12.345 - 99999)::DECIMAL(9,3) END AS d9,
       CASE WHEN i % 5 = 2 THEN NULL ELSE (i * 123456.789012 - 9999999999)::DECIMAL(18,6) END AS d18,
       CASE WHEN i % 5 = 3 THEN NULL
         ELSE (i::DECIMAL(38,10) * 1234567890.0123456789 - 99999999999)::DECIMAL(38,10) END AS d38,
       CASE WHEN i % 5 = 4 THEN NULL ELSE (i * 1.5)::DECIMAL(30,2) END AS d30
      FROM range(ROWS) t(i)""";

  private static final String OTHERS = """
      SELECT i AS id,
       CASE WHEN i % 6 = 0 THEN NULL ELSE i::HUGEINT * 34028236692093846346337460743176821 - 1000 END AS h,
       CASE WHEN i % 6 = 1 THEN NULL ELSE i::UHUGEINT * 1000000000000000000000 END AS uh,
       CASE WHEN i % 6 = 2 THEN NULL
         ELSE ('00000000-0000-4000-8000-' || lpad(to_hex(i * 7919), 12, '0'))::UUID END AS u,
       CASE WHEN i % 6 = 3 THEN NULL
         ELSE (['red', 'green', 'blue'])[i % 3 + 1]::ENUM('red', 'green', 'blue') END AS e,
       CASE WHEN i % 6 = 4 THEN NULL ELSE repeat('x', i % 3000) || i::VARCHAR END AS longs,
       CASE WHEN i % 500 = 7 THEN repeat('y', 200000) || i::VARCHAR ELSE NULL END AS huge,
       ('{"a":' || i::VARCHAR || '}')::JSON AS j,
       union_value(num := i::INTEGER)::UNION(num INTEGER, str VARCHAR) AS un,
       '10101'::BIT AS bits,
       i::VARINT * 1000000000000000000000000 AS vi
      FROM range(ROWS) t(i)""";

  private static final String LISTS = """
      SELECT i AS id,
       CASE WHEN i % 7 = 0 THEN NULL WHEN i % 7 = 1 THEN []
         ELSE list_transform(range(i % 9), x -> CASE WHEN (x + i) % 5 = 0 THEN NULL ELSE (x * i)::INTEGER END) END AS li,
       CASE WHEN i % 6 = 0 THEN NULL
         ELSE list_transform(range(i % 4), x -> CASE WHEN x = 2 THEN NULL ELSE 'v' || (x + i)::VARCHAR END) END AS ls,
       CASE WHEN i % 8 = 0 THEN NULL
         ELSE list_transform(range(i % 3), y -> CASE WHEN (y + i) % 4 = 0 THEN NULL
           ELSE list_transform(range((y + i) % 4), x -> CASE WHEN x = 1 AND i % 3 = 0 THEN NULL
             ELSE (x + y * 10 + i)::BIGINT END) END) END AS lli,
       list_transform(range(i % 5), x -> (x / 3.0 + i)::DOUBLE) AS ld
      FROM range(ROWS) t(i)""";

  private static final String ARRAYS = """
      SELECT i AS id,
       (CASE WHEN i % 7 = 0 THEN NULL ELSE list_transform(range(64),
         x -> CASE WHEN (x + i) % 13 = 0 THEN NULL ELSE (x * 0.5 + i)::FLOAT END) END)::FLOAT[64] AS emb_opt,
       list_transform(range(3), x -> (x + i)::INTEGER)::INTEGER[3] AS a3,
       (CASE WHEN i % 5 = 0 THEN NULL ELSE list_transform(range(2), y -> CASE WHEN (i + y) % 3 = 0 THEN NULL
         ELSE list_transform(range(4), x -> (x * y + i)::DOUBLE) END) END)::DOUBLE[4][2] AS a42,
       (CASE WHEN i % 4 = 0 THEN NULL ELSE list_transform(range(2), x -> 'a' || (x + i)::VARCHAR) END)::VARCHAR[2] AS as2
      FROM range(ROWS) t(i)""";

  private static final String STRUCTS = """
      SELECT i AS id,
       CASE WHEN i % 6 = 0 THEN NULL ELSE {'a': CASE WHEN i % 4 = 0 THEN NULL ELSE i::INTEGER END,
         'b': 'b' || i::VARCHAR, 'c': CASE WHEN i % 5 = 0 THEN NULL
           ELSE {'d': i / 2.0, 'e': CASE WHEN i % 3 = 0 THEN NULL ELSE [i, i + 1] END} END} END AS st,
       CASE WHEN i % 9 = 0 THEN NULL ELSE list_transform(range(i % 4), x -> CASE WHEN x = 1 AND i % 2 = 0 THEN NULL
         ELSE {'x': (x + i)::INTEGER, 'y': CASE WHEN x = 2 THEN NULL ELSE 'y' || x::VARCHAR END,
           'z': list_transform(range(x), q -> q::SMALLINT)} END) END AS lst
      FROM range(ROWS) t(i)""";

  private static final String MAPS = """
      SELECT i AS id,
       CASE WHEN i % 7 = 0 THEN NULL ELSE map_from_entries(list_transform(range(i % 4),
         x -> {'k': 'k' || x::VARCHAR, 'v': CASE WHEN x = 1 THEN NULL ELSE (x * i)::INTEGER END})) END AS m,
       CASE WHEN i % 5 = 0 THEN NULL ELSE map_from_entries(list_transform(range(i % 3),
         x -> {'k': x::BIGINT, 'v': CASE WHEN x = 0 AND i % 2 = 0 THEN NULL
           ELSE list_transform(range(x + 1), q -> (q + i) / 4.0) END})) END AS ml
      FROM range(ROWS) t(i)""";

  private static final String GEOMETRY_VARIANT = """
      SELECT i AS id,
       CASE WHEN i % 4 = 0 THEN NULL ELSE ('POINT(' || i::VARCHAR || ' ' || (i / 3)::VARCHAR || ')')::GEOMETRY END AS g,
       CASE WHEN i % 5 = 0 THEN NULL WHEN i % 2 = 0 THEN i::VARIANT ELSE ('s' || i::VARCHAR)::VARIANT END AS v
      FROM range(ROWS) t(i)""";

  /** One file: its name, query, rows and COPY options. */
  private record DuckFile(String name, String query, int rows, String options) {
    String copy(Path dir) {
      return "COPY (" + query.replace("ROWS", String.valueOf(rows)) + ") TO '" + dir.resolve(name + ".parquet")
          + "' (FORMAT parquet" + (options.isEmpty() ? "" : ", " + options) + ")";
    }
  }

  private static final List<DuckFile> FILES = List.of(
      new DuckFile("primitives_snappy_v1", PRIMITIVES, 5000, "COMPRESSION snappy, ROW_GROUP_SIZE 1000"),
      new DuckFile("primitives_zstd_v2", PRIMITIVES, 5000, "COMPRESSION zstd, PARQUET_VERSION v2, ROW_GROUP_SIZE 2048"),
      new DuckFile("primitives_gzip_one_group", PRIMITIVES, 20000, "COMPRESSION gzip, ROW_GROUP_SIZE 1000000"),
      new DuckFile("primitives_uncompressed_small_groups", PRIMITIVES, 700,
          "COMPRESSION uncompressed, ROW_GROUP_SIZE 100"),
      new DuckFile("primitives_lz4", PRIMITIVES, 3000, "COMPRESSION lz4"),
      new DuckFile("primitives_brotli_v2", PRIMITIVES, 3000, "COMPRESSION brotli, PARQUET_VERSION v2"),
      new DuckFile("temporal_v1", TEMPORAL, 4000, "COMPRESSION snappy"),
      new DuckFile("temporal_v2", TEMPORAL, 4000, "COMPRESSION zstd, PARQUET_VERSION v2"),
      new DuckFile("decimals_v1", DECIMALS, 4000, "COMPRESSION snappy"),
      new DuckFile("decimals_v2", DECIMALS, 4000, "COMPRESSION zstd, PARQUET_VERSION v2"),
      new DuckFile("others_v1", OTHERS, 3000, "COMPRESSION zstd"),
      new DuckFile("others_v2", OTHERS, 3000, "COMPRESSION gzip, PARQUET_VERSION v2, ROW_GROUP_SIZE 500"),
      new DuckFile("lists_v1", LISTS, 5000, "COMPRESSION snappy, ROW_GROUP_SIZE 1500"),
      new DuckFile("lists_v2", LISTS, 5000, "COMPRESSION zstd, PARQUET_VERSION v2"),
      // FLOAT[64] with null rows and null elements: the layout of embedding_f32x64_zstd_20k.parquet
      new DuckFile("arrays_zstd", ARRAYS, 10000, "COMPRESSION zstd, ROW_GROUP_SIZE 5000"),
      new DuckFile("arrays_v2", ARRAYS, 3000, "COMPRESSION snappy, PARQUET_VERSION v2"),
      new DuckFile("structs_v1", STRUCTS, 4000, "COMPRESSION snappy, ROW_GROUP_SIZE 1000"),
      new DuckFile("structs_v2", STRUCTS, 4000, "COMPRESSION uncompressed, PARQUET_VERSION v2"),
      new DuckFile("maps_v1", MAPS, 4000, "COMPRESSION gzip"),
      new DuckFile("maps_v2", MAPS, 4000, "COMPRESSION zstd, PARQUET_VERSION v2"),
      new DuckFile("geometry_variant", GEOMETRY_VARIANT, 1000, "COMPRESSION zstd"),
      new DuckFile("empty", PRIMITIVES.replace("FROM range(ROWS) t(i)", "FROM range(ROWS) t(i) WHERE i < 0"), 10,
          "COMPRESSION snappy"),
      new DuckFile("empty_nested", STRUCTS.replace("FROM range(ROWS) t(i)", "FROM range(ROWS) t(i) WHERE i < 0"), 10, ""));

  @TestFactory
  Stream<DynamicTest> everyDuckDbFileReadsAsParquetJavaReadsIt() throws Exception {
    Path pkg;
    try {
      pkg = DuckDb.require();
    } catch (TestAbortedException e) {
      return Stream.of(DynamicTest.dynamicTest("DuckDB is missing", () -> {
        throw e; // reported as one skipped test, with its reason
      }));
    }
    List<String> statements = new ArrayList<>();
    FILES.forEach(f -> statements.add(f.copy(dir)));
    DuckDb.run(pkg, dir, statements);
    return FILES.stream().map(f -> DynamicTest.dynamicTest(f.name(), () -> check(dir.resolve(f.name() + ".parquet"),
        f.rows(), f.name().startsWith("empty"))));
  }

  private static void check(Path file, int rows, boolean empty) throws Exception {
    assertTrue(Files.isRegularFile(file), file + " was written");
    List<Group> groups = ParquetTestFiles.readGroups(file);
    assertEquals(empty ? 0 : rows, groups.size(), "rows parquet-java reads");
    try (ParquetDataset ds = Parquet.open(file)) {
      List<ColumnPlan> plans = ParquetTestFiles.plans(ds, file);
      assertEquals(ds.schema().size(), plans.size());
      List<Batch> batches = ds.batches(333).collectList().block();
      try {
        assertEquals(groups.size(), ParquetTestFiles.assertBatchesMatch(batches, groups, 0, plans, file.toString()));
      } finally {
        batches.forEach(Batch::close);
      }
      assertEquals(ParquetTestFiles.canonicalSha(groups, plans), Checksums.sha256(ds), file + ": checksum");
      // parts of row groups, as a shuffle's blocks read them: the same rows
      long first = 0;
      for (dev.sluice.core.Split s : ds.splits()) {
        long n = s.rowCount();
        for (long[] r : new long[][] {{n / 3, 2 * n / 3 + 1}, {Math.max(0, n - 1), n}, {n / 2, n / 2 + 1}}) {
          long to = Math.min(r[1], n);
          List<Batch> part = ds.readBatches(s, Math.min(r[0], to), to, 333).collectList().block();
          try {
            assertEquals(first + to, ParquetTestFiles.assertBatchesMatch(part, groups, (int) (first + Math.min(r[0], to)),
                plans, file + " " + s.id() + " [" + r[0] + ", " + to + ")"));
          } finally {
            part.forEach(Batch::close);
          }
        }
        first += n;
      }
    }
  }
}
