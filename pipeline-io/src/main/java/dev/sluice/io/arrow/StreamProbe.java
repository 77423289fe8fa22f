package dev.sluice.io.arrow;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.MetadataVersion;

/** Recognizes the schema message an Arrow IPC stream starts with. */
final class StreamProbe {
  private static final int MAX_SCHEMA_BYTES = 16 << 20;

  private StreamProbe() {}

  /** True when {@code length} bytes at {@code offset} of {@code path} are a schema message; never throws for other bytes. */
  static boolean isSchemaMessage(Path path, long offset, int length) throws IOException {
    if (length <= 0 || length > MAX_SCHEMA_BYTES) {
      return false;
    }
    byte[] meta = new byte[length];
    try (InputStream in = Files.newInputStream(path)) {
      in.skipNBytes(offset);
      if (in.readNBytes(meta, 0, length) < length) {
        return false;
      }
    }
    try {
      Message m = Message.getRootAsMessage(ByteBuffer.wrap(meta));
      return m.headerType() == MessageHeader.Schema && m.version() >= MetadataVersion.V4
          && m.version() <= MetadataVersion.V5;
    } catch (RuntimeException e) {
      return false;
    }
  }
}
