package dev.sluice.io.parquet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.core.Batch;
import dev.sluice.core.testing.NoLeaks;
import dev.sluice.io.Checksums;
import dev.sluice.io.parquet.ParquetTestFiles.Config;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.Util;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The codecs beyond parquet-java's Hadoop-free set: Brotli, the deprecated Hadoop-framed LZ4, and empty v2 pages. */
@ExtendWith(NoLeaks.class)
class ParquetCodecsTest {
  @TempDir
  Path dir;

  @Test
  void brotliAndBothLz4FramingsReadExactlyWhatAnUncompressedTwinHolds() throws Exception {
    int k = 0;
    for (CompressionCodecName codec : List.of(CompressionCodecName.BROTLI, CompressionCodecName.LZ4)) {
      for (WriterVersion v : WriterVersion.values()) {
        for (boolean rawLz4 : codec == CompressionCodecName.LZ4 ? List.of(false, true) : List.of(false)) {
          Config c = new Config(codec, v, k % 2 == 0, false, true);
          Path f = dir.resolve("codec-" + k + ".parquet");
          Path twin = dir.resolve("twin-" + k + ".parquet");
          ParquetTestFiles.write(f, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META, c, 300, 120, 40, 50 + k, rawLz4);
          ParquetTestFiles.write(twin, ParquetTestFiles.WIDE, ParquetTestFiles.WIDE_META,
              new Config(CompressionCodecName.UNCOMPRESSED, v, k % 2 == 0, false, true), 300, 120, 40, 50 + k);
          try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f))) {
            assertEquals(codec, r.getRowGroups().get(0).getColumns().get(0).getCodec(), "the file really uses " + codec);
          }
          List<Group> groups = ParquetTestFiles.readGroups(twin);
          ParquetDataset ds = Parquet.open(f);
          List<Batch> batches = ds.batches(64).collectList().block();
          try {
            assertEquals(300, ParquetTestFiles.assertBatchesMatch(batches, groups, 0, ParquetTestFiles.plans(ds, f),
                c + (rawLz4 ? " raw blocks" : "")));
          } finally {
            batches.forEach(Batch::close);
          }
          assertEquals(Checksums.sha256(Parquet.open(twin)), Checksums.sha256(ds));
          k++;
        }
      }
    }
  }

  /**
   * What Spark 3.5 (parquet-mr 1.13) writes for a column of nulls with v2 pages: a snappy page
   * with no value bytes at all (nothing to decompress), and a v2 page of zero values.
   */
  @Test
  void v2PagesWithNoValueBytesOrNoValuesRead() throws Exception {
    MessageType schema = MessageTypeParser.parseMessageType("message spark_schema { optional float value; }");
    ColumnDescriptor col = schema.getColumns().get(0);
    Path f = dir.resolve("v2-empty.parquet");
    ParquetFileWriter w = new ParquetFileWriter(new LocalOutputFile(f), schema, ParquetFileWriter.Mode.CREATE,
        128L << 20, 0);
    w.start();
    w.startBlock(3);
    w.startColumn(col, 3, CompressionCodecName.SNAPPY);
    Statistics<?> stats = Statistics.createStats(col.getPrimitiveType());
    // zero values, no levels, no data
    w.writeDataPageV2(0, 0, 0, BytesInput.empty(), BytesInput.empty(), Encoding.PLAIN, BytesInput.empty(), true, 0, stats);
    // one null: a run of one definition level 0 (RLE header 2, value 0), no value bytes, flagged compressed
    w.writeDataPageV2(1, 1, 1, BytesInput.empty(), BytesInput.from(new byte[] {2, 0}), Encoding.PLAIN,
        BytesInput.empty(), true, 0, stats);
    // two values: 1.5 and a null; a real snappy page
    byte[] plain = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putFloat(1.5f).array();
    // definition levels 1, 0 as one bit-packed group: header (1 << 1) | 1 = 3, bits 0b01
    w.writeDataPageV2(2, 1, 2, BytesInput.empty(), BytesInput.from(new byte[] {3, 1}), Encoding.PLAIN,
        BytesInput.from(org.xerial.snappy.Snappy.compress(plain)), true, plain.length, stats);
    w.endColumn();
    w.endBlock();
    w.end(Map.of());
    flagSecondPageCompressed(f);
    List<PageHeader> headers = pageHeaders(f);
    assertEquals(List.of(0, 1, true, 2), List.of(headers.get(0).getData_page_header_v2().getNum_values(),
        headers.get(1).getData_page_header_v2().getNum_values(), headers.get(1).getData_page_header_v2().isIs_compressed(),
        headers.get(1).getCompressed_page_size()), "the pages are as described");
    ParquetDataset ds = Parquet.open(f);
    List<Object> values = ds.flux().map(e -> e.isNull("value") ? "null" : (Object) e.tensor("value").getFloat(0))
        .collectList().block();
    assertEquals(Arrays.asList("null", 1.5f, "null"), values);
  }

  /**
   * parquet-java now writes an empty v2 page as not compressed; older writers (Spark 3.5's
   * parquet-mr 1.13) flagged it compressed with zero bytes. The flag is one byte of the page
   * header's compact Thrift encoding whichever its value, so it is patched in place.
   */
  private static List<PageHeader> pageHeaders(Path f) throws java.io.IOException {
    long start;
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f))) {
      start = r.getRowGroups().get(0).getColumns().get(0).getStartingPos();
    }
    byte[] all = java.nio.file.Files.readAllBytes(f);
    List<PageHeader> out = new java.util.ArrayList<>();
    int at = (int) start;
    for (int i = 0; i < 3; i++) {
      java.io.ByteArrayInputStream in = new java.io.ByteArrayInputStream(all, at, all.length - at);
      PageHeader h = Util.readPageHeader(in);
      out.add(h);
      at = all.length - in.available() + h.getCompressed_page_size();
    }
    return out;
  }

  private static void flagSecondPageCompressed(Path f) throws java.io.IOException {
    long start;
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f))) {
      start = r.getRowGroups().get(0).getColumns().get(0).getStartingPos();
    }
    byte[] all = java.nio.file.Files.readAllBytes(f);
    java.io.ByteArrayInputStream in = new java.io.ByteArrayInputStream(all, (int) start, all.length - (int) start);
    PageHeader first = Util.readPageHeader(in);
    int second = (int) start + (all.length - (int) start - in.available()) + first.getCompressed_page_size();
    in = new java.io.ByteArrayInputStream(all, second, all.length - second);
    PageHeader h = Util.readPageHeader(in);
    int length = all.length - second - in.available();
    h.getData_page_header_v2().setIs_compressed(true);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    Util.writePageHeader(h, out);
    assertEquals(length, out.size(), "the patched header keeps its length");
    System.arraycopy(out.toByteArray(), 0, all, second, length);
    java.nio.file.Files.write(f, all);
  }
}
