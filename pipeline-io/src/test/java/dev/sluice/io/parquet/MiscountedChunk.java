package dev.sluice.io.parquet;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Map;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;

/**
 * Writes, with parquet-java's low-level writer, a file whose one column chunk's metadata counts 1
 * value while its one data page holds 3: the layout on which parquet-java's error path needs
 * Hadoop's {@code Path} to build its message.
 */
final class MiscountedChunk {
  static final MessageType SCHEMA = MessageTypeParser.parseMessageType("message m { required int32 c; }");

  private MiscountedChunk() {}

  static void write(Path file) throws IOException {
    ColumnDescriptor c = SCHEMA.getColumns().get(0);
    ByteBuffer values = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putInt(7).putInt(8).putInt(9);
    ParquetFileWriter w = new ParquetFileWriter(new LocalOutputFile(file), SCHEMA, ParquetFileWriter.Mode.OVERWRITE,
        1 << 20, 0);
    w.start();
    w.startBlock(1);
    w.startColumn(c, 1, CompressionCodecName.UNCOMPRESSED); // the chunk's metadata: 1 value
    w.writeDataPage(3, 12, BytesInput.from(values.array()), Encoding.RLE, Encoding.RLE, Encoding.PLAIN); // 3 values
    w.endColumn();
    w.endBlock();
    w.end(Map.of());
  }
}
